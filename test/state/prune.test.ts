import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { persistenceFlow } from '../../pipelines/persistence.js';
import { loadConfig } from '../../src/config/load.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Persistence } from '../../src/persist/store.js';
import type { Candle } from '../../src/state/candles.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';

/**
 * Retention of the one-minute candle log: minutes before the cutoff go, market by market, and the
 * hour and day candles built from them stay.
 */
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const dirs: string[] = [];
const stores: Persistence[] = [];
function store(dir = mkdtempSync(join(tmpdir(), 'cb-prune-'))): Persistence {
  if (!dirs.includes(dir)) dirs.push(dir);
  const p = new Persistence(dir);
  stores.push(p);
  return p;
}
afterEach(async () => {
  vi.useRealTimers();
  for (const p of stores.splice(0)) await p.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const candle = (venue: string, marketId: string, t: number, price: number): Candle => ({
  venue: venue as Candle['venue'],
  marketId,
  t,
  o: price,
  h: price + 10,
  l: price - 10,
  c: price,
  mid: price,
  volume: 1,
  trades: 1,
});

// Ids that are prefixes of one another and sort around each other, on two venues, with a market
// whose minutes are all old, one whose minutes are all recent, and mixed ones.
const now = Date.UTC(2026, 10, 24, 12);
const start = now - 4 * DAY;
const MARKETS: [string, string, number][] = [
  ['venue_a', 'M', 0],
  ['venue_a', 'M-1', 1],
  ['venue_a', 'M1', 2],
  ['venue_a', 'OLD', 3],
  ['venue_a', 'NEW', 4],
  ['venue_b', 'M', 5],
];
/** Every market's minutes: one every 30 minutes over four days (OLD: first two days only; NEW: last day only). */
function fill(p: Persistence): Candle[] {
  const all: Candle[] = [];
  for (let t = start; t < now; t += 30 * MIN)
    for (const [v, id, k] of MARKETS) {
      if (id === 'OLD' && t >= start + 2 * DAY) continue;
      if (id === 'NEW' && t < now - DAY) continue;
      const c = candle(v, id, t, 1000 * (k + 1) + (((t - start) / MIN) % 500));
      p.appendCandle(c);
      all.push(c);
    }
  return all;
}
const hourAndDay = (p: Persistence): unknown[] => MARKETS.map(([v, id]) => [p.candles(v, id, 0, Infinity, '1h'), p.candles(v, id, 0, Infinity, '1d')]);

describe('one-minute candle retention', () => {
  it('removes the minutes before the cutoff of every market, keeps the rest and every hour and day candle', async () => {
    const p = store();
    const all = fill(p);
    await p.flushed();
    const rollups = hourAndDay(p);
    const cutoff = now - 2 * DAY - 7 * MIN; // not on a minute the log holds
    const epoch = p.historyEpoch;

    const removed = await p.pruneMinutes(cutoff);
    expect(removed).toBe(all.filter((c) => c.t < cutoff).length);
    expect(removed).toBeGreaterThan(0);
    for (const [v, id] of MARKETS) {
      const kept = all.filter((c) => c.venue === v && c.marketId === id && c.t >= cutoff);
      expect(p.candles(v, id, 0, Infinity), `${v} ${id}`).toEqual(kept);
    }
    expect(p.candles('venue_a', 'OLD', 0, Infinity)).toEqual([]);
    expect(hourAndDay(p)).toEqual(rollups);
    // cached history pages are rebuilt
    expect(p.historyEpoch).toBeGreaterThan(epoch);

    // nothing more to take: nothing removed, the epoch stays
    const again = p.historyEpoch;
    expect(await p.pruneMinutes(cutoff)).toBe(0);
    expect(p.historyEpoch).toBe(again);
  });

  it('stays pruned across a restart, and a store with no candles prunes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-prune-'));
    const p = store(dir);
    expect(await p.pruneMinutes(now)).toBe(0);
    // Listed, so that their ids are found again after the restart (store format 4: the catalog records carry them).
    const s = new EngineState(loadConfig({ env: {} }).venues);
    p.load(s);
    for (const [venue, marketId] of MARKETS) {
      applyEvent(s, { venue, timestamp: 1, localTimestamp: start, type: 'market', marketId, title: marketId, status: 'active' } as NormalizedEvent);
      p.markMarket(venue, marketId);
    }
    await p.flushCatalog(s);
    fill(p);
    await p.flushed(); // a put is not readable before its batch commits
    await p.pruneMinutes(now - DAY);
    await p.close();
    const p2 = store(dir);
    p2.load(new EngineState(loadConfig({ env: {} }).venues));
    expect(p2.candles('venue_a', 'M', 0, now - DAY)).toEqual([]);
    expect(p2.candles('venue_a', 'M', now - DAY, Infinity).length).toBe(48);
  });

  it('while writing is paused (a full disk) removes nothing and reports nothing removed; the next run takes them', async () => {
    const p = store();
    const all = fill(p);
    await p.flushed();
    p.guard!.pause('test: disk full');
    // Few enough seeks and removals that the run asks the guard nothing (it would find room and resume).
    const cutoff = start + HOUR;
    expect(await p.pruneMinutes(cutoff)).toBe(0);
    expect(p.candles('venue_a', 'M', 0, Infinity).length).toBe(all.filter((c) => c.venue === 'venue_a' && c.marketId === 'M').length);
    expect(p.health().status).toBe('degraded');
    p.guard!.check(); // room again: resumes
    expect(p.guard!.state.paused).toBe(false);
    expect(await p.pruneMinutes(cutoff)).toBe(all.filter((c) => c.t < cutoff).length);
  });

  it('the persistence flow prunes a minute after start and every hour after, to now − retention', async () => {
    const p = store();
    const all = fill(p);
    await p.flushed();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    // The cutoff falls between two stored minutes, whatever the few ms the test takes.
    const cutoff = now - 2 * DAY - 7 * MIN;
    const sub = persistenceFlow(new EngineState(loadConfig({ env: {} }).venues), p, { snapshotIntervalMs: 10 * DAY, minuteRetentionMs: Date.now() - cutoff });
    try {
      vi.advanceTimersByTime(59_000);
      expect(p.candles('venue_a', 'OLD', 0, Infinity).length).toBeGreaterThan(0);
      vi.advanceTimersByTime(1_000);
      vi.useRealTimers();
      // The prune the timer started has no promise the test can reach: poll its result, with a
      // deadline a starved machine cannot miss (vi.waitFor's default is 1 s).
      await vi.waitFor(() => expect(p.candles('venue_a', 'OLD', 0, Infinity)).toEqual([]), { timeout: 30_000, interval: 20 });
      expect(p.candles('venue_a', 'M', 0, Infinity)).toEqual(all.filter((c) => c.venue === 'venue_a' && c.marketId === 'M' && c.t >= cutoff));
    } finally {
      sub.unsubscribe();
    }
  });

  it("prunes trades past their retention on the engine's clock: at start, then every hour", async () => {
    const p = store();
    const trade = (seq: number, t: number) => ({
      type: 'trade' as const,
      venue: 'venue_b',
      marketId: 'M',
      tradeId: `t${seq}`,
      price: 5000,
      yesPrice: 5000,
      size: 1,
      timestamp: t,
      localTimestamp: t,
      seq,
    });
    // One trade an hour over the last three days.
    for (let i = 0; i < 72; i++) p.appendTrade(trade(i, now - (72 - i) * HOUR));
    await p.flushed();
    const clock = new VirtualClock(now);
    const sub = persistenceFlow(
      new EngineState(loadConfig({ env: {} }).venues),
      p,
      { snapshotIntervalMs: 10 * DAY, tradesRetentionMs: 2 * DAY + 30 * MIN },
      clock,
    );
    const left = (): number => p.db('tradesByTime').getCount();
    try {
      clock.advanceTo(now);
      await p.flushed();
      expect(left()).toBe(48);
      expect(p.db('trades').getCount()).toBe(48);
      clock.advanceTo(now + HOUR - 1);
      await p.flushed();
      expect(left()).toBe(48);
      clock.advanceTo(now + HOUR);
      await p.flushed();
      expect(left()).toBe(47);
    } finally {
      sub.unsubscribe();
    }
  });
});
