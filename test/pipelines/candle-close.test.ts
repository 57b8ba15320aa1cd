import { interval } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { candleCloser, CLOCK_MS, CLOSE_SLICE } from '../../pipelines/persistence.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Rng } from '../../src/sim/rng.js';
import { CandleStore, MINUTE, type Candle } from '../../src/state/candles.js';

/**
 * The minute clock's close in slices (`candleCloser`, pipelines/persistence.ts) against the close
 * in one piece that it replaced (`CandleStore.flush` at each tick), on the same seeded stream of
 * observations on a virtual clock: every market's candles, as persistence and a reader get them,
 * must be the same, and no unit of the clock may close more than CLOSE_SLICE of them.
 */

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const MARKETS = 3 * CLOSE_SLICE + 417;
const VENUES = ['venue_a', 'venue_b', 'venue_d'] as const;

interface Run {
  /** Each market's closed candles in the order they went out. */
  byMarket: Map<string, Candle[]>;
  /** How many candles each unit of the clock closed (by the time it ran at). */
  perUnit: Map<number, number>;
  /** What a reader sees of a sample of markets just after every tick: the closed candles, then the open one (as /candles reads them). */
  seen: string[];
}

/**
 * Four minutes of observations (seed 34): every market quoted in its first seconds of each minute, so
 * every candle ends at once, and more observations spread over the minutes (some in the instants
 * after a minute's end, while a sliced close is under way), each at its receive time on the clock.
 */
function run(sliced: boolean): Run {
  const rng = new Rng(34);
  const clock = new VirtualClock(T0);
  const candles = new CandleStore();
  const out: Run = { byMarket: new Map(), perUnit: new Map(), seen: [] };
  let observing = false;
  candles.closed$.subscribe((c) => {
    const key = `${c.venue}:${c.marketId}`;
    out.byMarket.set(key, [...(out.byMarket.get(key) ?? []), c]);
    // The closes of the minute clock (an observation's roll closes its market's candle in its own unit).
    const at = clock.now();
    if (!observing) out.perUnit.set(at, (out.perUnit.get(at) ?? 0) + 1);
  });
  // Each next slice a ms of the clock later (live: a timer turn later), so observations fall between slices.
  const closer = candleCloser(candles, clock, (slice) => clock.after(1, slice));
  const markets = Array.from({ length: MARKETS }, (_, i) => ({ venue: VENUES[i % VENUES.length]!, id: `M${i}` }));
  interval(CLOCK_MS, clock.scheduler).subscribe(() => {
    if (sliced) closer.close();
    else candles.flush(clock.now());
  });
  const observations: { ts: number; m: (typeof markets)[number]; price: number; volume: number }[] = [];
  for (let minute = 0; minute < 4; minute++)
    for (const m of markets) {
      observations.push({ ts: T0 + minute * MINUTE + rng.int(0, 900), m, price: rng.int(100, 9900), volume: 0 });
      for (let k = rng.int(0, 3); k > 0; k--)
        observations.push({
          ts: T0 + minute * MINUTE + (rng.chance(0.3) ? MINUTE + rng.int(0, 40) : rng.int(0, MINUTE - 1)),
          m,
          price: rng.int(100, 9900),
          volume: rng.chance(0.5) ? rng.int(1, 50) : 0,
        });
    }
  observations.sort((a, b) => a.ts - b.ts);
  let nextLook = T0 + CLOCK_MS;
  for (const o of observations) {
    while (nextLook <= o.ts) {
      clock.advanceTo(nextLook);
      for (let i = 0; i < MARKETS; i += 97) {
        const m = markets[i]!;
        const closed = out.byMarket.get(`${m.venue}:${m.id}`) ?? [];
        const open = candles.current(m.venue, m.id);
        // As the venue dialects' minutes() read them: the stored ones, and the open one when it is newer.
        const shown = open !== undefined && (closed.length === 0 || closed[closed.length - 1]!.t < open.t) ? [...closed, open] : closed;
        out.seen.push(JSON.stringify([nextLook, shown]));
      }
      nextLook += CLOCK_MS;
    }
    clock.advanceTo(o.ts);
    observing = true;
    clock.run(o.ts, () => candles.observe(o.m.venue, o.m.id, o.price, o.price, o.volume, o.ts, o.price - 50, o.price + 50, o.price * o.volume));
    observing = false;
  }
  clock.advanceTo(T0 + 6 * MINUTE);
  return out;
}

describe('the minute close in slices', () => {
  it('gives every market the candles the close in one piece gave, each unit of the clock closing at most CLOSE_SLICE', () => {
    const whole = run(false);
    const sliced = run(true);
    // The stream puts every market's candles out at the minute: the whole close took them in one unit.
    expect(Math.max(...whole.perUnit.values())).toBeGreaterThan(3 * CLOSE_SLICE);
    expect(Math.max(...sliced.perUnit.values())).toBeLessThanOrEqual(CLOSE_SLICE);
    expect(sliced.byMarket.size).toBe(MARKETS);
    expect([...sliced.byMarket.entries()].sort()).toEqual([...whole.byMarket.entries()].sort());
    // A reader between two slices sees a finished candle still open, where it saw it closed: the same candles.
    expect(sliced.seen).toEqual(whole.seen);
  });

  it('a slice closes the finished candles only: the open ones of a new minute stay open', () => {
    const sliced = run(true);
    for (const cs of sliced.byMarket.values()) {
      // One candle a minute, in order, none past the last whole minute closed by the end.
      expect(cs.map((c) => c.t)).toEqual([...new Set(cs.map((c) => c.t))].sort((a, b) => a - b));
      for (const c of cs) expect(c.t % MINUTE).toBe(0);
    }
  });
});
