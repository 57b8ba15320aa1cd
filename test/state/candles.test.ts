import { describe, expect, it } from 'vitest';
import { CandleStore, MINUTE, type Candle, type HeldCandle } from '../../src/state/candles.js';

const T = Date.UTC(2026, 10, 24, 12, 0); // a whole minute

function store(): { candles: CandleStore; closed: Candle[] } {
  const candles = new CandleStore();
  const closed: Candle[] = [];
  candles.closed$.subscribe((c) => closed.push({ ...c }));
  return { candles, closed };
}

describe('CandleStore flush (the once-a-second close of one-minute buckets)', () => {
  it('closes a bucket when the clock reaches its end, not before, and only once', () => {
    const { candles, closed } = store();
    candles.observe('venue_a', 'M', 4000, 4100, 5, T + 1_000, 4000, 4200, 4000 * 5);
    candles.observe('venue_a', 'M', 4300, undefined, 0, T + 30_000, 4300, undefined);
    candles.flush(T + MINUTE - 1);
    expect(closed).toEqual([]);
    candles.flush(T + MINUTE);
    // bid and ask as at the last observation (the ask side had emptied); notional: the trade's price × size
    expect(closed).toEqual([
      {
        venue: 'venue_a',
        marketId: 'M',
        t: T,
        o: 4000,
        h: 4300,
        l: 4000,
        c: 4300,
        mid: 4300,
        volume: 5,
        trades: 1,
        bid: 4300,
        ask: undefined,
        notional: 20_000,
      },
    ]);
    expect(closed[0]).toHaveProperty('ask', undefined);
    candles.flush(T + 2 * MINUTE);
    expect(closed).toHaveLength(1);
    expect(candles.current('venue_a', 'M')).toBeUndefined();
  });

  it('closes each market on its own minute and everything at shutdown; an observation older than the open bucket is dropped', () => {
    const { candles, closed } = store();
    candles.observe('venue_a', 'A', 4000, undefined, 0, T + 59_000);
    candles.observe('venue_a', 'B', 5000, undefined, 0, T + MINUTE);
    candles.observe('venue_a', 'B', 5100, undefined, 0, T + 10_000); // late: B's open bucket is the next minute
    candles.flush(T + MINUTE);
    expect(closed.map((c) => c.marketId)).toEqual(['A']);
    expect(candles.current('venue_a', 'B')).toMatchObject({ t: T + MINUTE, o: 5000, c: 5000 });
    candles.flush(T + MINUTE + 1, true);
    expect(closed.map((c) => [c.marketId, c.t])).toEqual([
      ['A', T],
      ['B', T + MINUTE],
    ]);
  });

  it('skips the walk only while no open bucket can have ended: a bucket opened for an older minute, and what a partial close leaves', () => {
    const { candles, closed } = store();
    candles.observe('venue_a', 'B', 5000, undefined, 0, T + MINUTE + 5_000);
    // Opened after B, for the minute before B's (a market whose first frame is late): the flush at
    // that minute's end must see it, though the newest open bucket has not ended.
    candles.observe('venue_b', 'A', 4000, undefined, 0, T + 30_000);
    candles.flush(T + MINUTE - 1);
    expect(closed).toEqual([]);
    candles.flush(T + MINUTE);
    expect(closed.map((c) => [c.marketId, c.t])).toEqual([['A', T]]);
    // What the partial close left (B, a minute later) closes at its own end, not before.
    candles.flush(T + 2 * MINUTE - 1);
    expect(closed).toHaveLength(1);
    candles.observe('venue_a', 'C', 6000, undefined, 0, T + 2 * MINUTE + 1_000);
    candles.flush(T + 2 * MINUTE);
    expect(closed.map((c) => [c.marketId, c.t])).toEqual([
      ['A', T],
      ['B', T + MINUTE],
    ]);
    candles.flush(T + 3 * MINUTE);
    expect(closed.map((c) => c.marketId)).toEqual(['A', 'B', 'C']);
  });
});

describe('CandleStore observe through a held slot (a state book keeps its market open candle)', () => {
  it('builds and closes the same candles as looking each market up, across minutes, flushes and late observations', () => {
    const held = store();
    const looked = store();
    // One slot per market and one shared by two markets, as a YES and a NO book of one market, or a stale one, may be.
    const slots = new Map<string, HeldCandle>();
    const shared: HeldCandle = { candle: undefined, candleOf: undefined, candleEpoch: 0 };
    let x = 0.61;
    const next = (): number => (x = (x * 7919 + 0.137) % 1);
    let ts = T;
    for (let k = 0; k < 5_000; k++) {
      const r = next();
      if (r < 0.01) {
        held.candles.flush(ts);
        looked.candles.flush(ts);
        continue;
      }
      // Mostly forward in time (minutes go by), now and then a late observation of an earlier minute.
      ts += r < 0.05 ? -Math.floor(next() * 2 * MINUTE) : Math.floor(next() * 8_000);
      const m = `M${Math.floor(next() * 6)}`;
      const venue = next() < 0.8 ? 'venue_a' : 'venue_b';
      let slot = slots.get(m);
      if (slot === undefined) slots.set(m, (slot = { candle: undefined, candleOf: undefined, candleEpoch: 0 }));
      const price = 1000 + Math.floor(next() * 8000);
      const volume = next() < 0.2 ? 1 + Math.floor(next() * 10) : 0;
      const args = [venue, m, price, price + 50, volume, ts, price - 100, price + 100, price * volume] as const;
      held.candles.observe(...args, m === 'M5' ? shared : slot);
      looked.candles.observe(...args);
    }
    held.candles.flush(ts, true);
    looked.candles.flush(ts, true);
    expect(held.closed.length).toBeGreaterThan(100);
    expect(held.closed).toEqual(looked.closed);
  });
});
