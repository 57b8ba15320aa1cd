import { persistChanges } from '../../pipelines/persistence.js';
import { walletFlow } from '../../pipelines/signals.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { Persistence } from '../../src/persist/store.js';
import { currentYesPrice, WalletLedger, wilsonLow, type ScoredEntry, type WalletRecord } from '../../src/signals/wallets.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { addr, book, buy, cond, market, noTok, sell, settle, VB, yesTok } from './events.js';

const venues = loadConfig({ env: {} }).venues;
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 2, 10, 12);
const M = cond('a');

function setup(opts: { persist?: string; now?: () => number; maxPositions?: number } = {}) {
  const state = new EngineState(venues);
  let persistence: Persistence | undefined;
  if (opts.persist) {
    persistence = new Persistence(opts.persist);
    const changes = persistChanges(state, persistence);
    cleanups.push(async () => changes.unsubscribe());
  }
  const ledger = new WalletLedger(state, persistence, {
    now: opts.now ?? (() => T0),
    advanceMs: 0,
    ...(opts.maxPositions ? { maxPositions: opts.maxPositions } : {}),
  });
  const flow = walletFlow(state, ledger);
  cleanups.push(async () => {
    flow.unsubscribe();
    await ledger.close();
    await persistence?.close();
  });
  const apply = (...evs: NormalizedEvent[]): void => {
    for (const e of evs) applyEvent(state, e);
  };
  return { state, ledger, persistence, apply };
}

/** The figures of a wallet in dollars and cents, for exact comparison. */
const view = (w: WalletRecord | undefined) =>
  w && {
    trades: w.trades,
    taker: w.takerTrades,
    maker: w.makerTrades,
    volumeUsd: w.volume / 10_000,
    realizedUsd: Math.round(w.realized) / 10_000,
    markets: [...w.markets],
    positions: [...w.positions.values()].map((p) => ({
      outcome: p.outcome,
      token: p.token,
      shares: p.shares,
      costUsd: Math.round(p.cost) / 10_000,
      realizedUsd: Math.round(p.realized) / 10_000,
      payout: p.payout,
    })),
  };

describe('WalletLedger positions and PnL', () => {
  it('keeps shares and average cost, realizes sales and settlement, and follows makers', () => {
    const { ledger, apply } = setup();
    const A = addr('a');
    const B = addr('b');
    const C = addr('c');
    const D = addr('d');
    apply(market(M, 1, T0));
    apply(
      buy({ marketId: M, n: 1, wallet: A, outcome: 'yes', cents: 40, size: 100, ts: T0 }),
      buy({ marketId: M, n: 1, wallet: A, outcome: 'yes', cents: 50, size: 100, ts: T0 + 1_000 }),
      sell({ marketId: M, n: 1, wallet: A, outcome: 'yes', cents: 60, size: 50, ts: T0 + 2_000 }),
      buy({ marketId: M, n: 1, wallet: B, outcome: 'no', cents: 30, size: 200, ts: T0 + 3_000 }),
      // D takes YES from maker C, who holds nothing: C is short YES, i.e. long NO at 100 − 50.
      buy({ marketId: M, n: 1, wallet: D, maker: C, outcome: 'yes', cents: 50, size: 10, ts: T0 + 4_000 }),
    );
    expect(ledger.wallet(A.toLowerCase())).toBe(ledger.wallet(A));
    expect(view(ledger.wallet(A))).toEqual({
      trades: 3,
      taker: 3,
      maker: 0,
      volumeUsd: 40 + 50 + 30,
      realizedUsd: 7.5, // (60 − 45) × 50
      markets: [`${VB}:${M}`],
      positions: [{ outcome: 'yes', token: yesTok(1), shares: 150, costUsd: 67.5, realizedUsd: 7.5, payout: undefined }],
    });
    expect(view(ledger.wallet(C))!.positions).toEqual([{ outcome: 'no', token: undefined, shares: 10, costUsd: 5, realizedUsd: 0, payout: undefined }]);
    expect(ledger.wallet(C)!.makerTrades).toBe(1);

    apply(settle(M, 100, T0 + 10_000));
    expect(view(ledger.wallet(A))!.realizedUsd).toBe(7.5 + 150 - 67.5);
    expect(view(ledger.wallet(A))!.positions).toEqual([{ outcome: 'yes', token: yesTok(1), shares: 0, costUsd: 0, realizedUsd: 90, payout: 10_000 }]);
    expect(view(ledger.wallet(B))!.realizedUsd).toBe(-60);
    expect(view(ledger.wallet(C))!.realizedUsd).toBe(-5);
    expect(view(ledger.wallet(D))!.realizedUsd).toBe(5);
    // Settling twice pays nothing twice.
    expect(ledger.settle(ledger['state'].catalog.get(VB, M)!)).toBe(0);
  });

  it('a sale of shares bought before the ledger was watching realizes nothing and never goes short', () => {
    const { ledger, apply } = setup();
    const A = addr('e');
    apply(
      market(M, 1, T0),
      buy({ marketId: M, n: 1, wallet: A, outcome: 'no', cents: 20, size: 10, ts: T0 }),
      sell({ marketId: M, n: 1, wallet: A, outcome: 'no', cents: 30, size: 25, ts: T0 + 1 }),
    );
    expect(view(ledger.wallet(A))!.positions).toEqual([{ outcome: 'no', token: noTok(1), shares: 0, costUsd: 0, realizedUsd: 1, payout: undefined }]);
    expect(ledger.wallet(A)!.openCost).toBe(0);
  });
});

describe('WalletLedger entry scoring', () => {
  it('scores each taker buy one horizon later against the market price: good, bad, neutral', () => {
    const { ledger, apply, state } = setup();
    const scored: ScoredEntry[] = [];
    ledger.scored$.subscribe((s) => scored.push(s));
    apply(market(M, 1, T0), book(M, yesTok(1), 39, 41, T0));
    expect(currentYesPrice(state, VB, M)).toEqual({ price: 4000, source: 'book_mid' });
    apply(
      buy({ marketId: M, n: 1, wallet: addr('1'), outcome: 'yes', cents: 41, size: 10, ts: T0 }),
      buy({ marketId: M, n: 1, wallet: addr('2'), outcome: 'no', cents: 61, size: 10, ts: T0 }),
      buy({ marketId: M, n: 1, wallet: addr('3'), outcome: 'yes', cents: 45, size: 10, ts: T0 + 60_000 }),
    );
    apply(book(M, yesTok(1), 46, 48, T0 + 30_000));
    expect(ledger.advance(T0 + 119_999)).toBe(0);
    expect(ledger.advance(T0 + 120_000)).toBe(2);
    expect(ledger.advance(T0 + 180_000)).toBe(1);
    expect(scored.map((s) => [s.entry.wallet, s.move, s.verdict, s.priceSource])).toEqual([
      [addr('1').toLowerCase(), 600, 'good', 'book_mid'],
      [addr('2').toLowerCase(), -800, 'bad', 'book_mid'],
      [addr('3').toLowerCase(), 200, 'neutral', 'book_mid'],
    ]);
    expect(ledger.wallet(addr('1'))!.entries).toMatchObject({ made: 1, scored: 1, good: 1, bad: 0, moveSum: 600 });
    expect(ledger.wallet(addr('2'))!.entries).toMatchObject({ scored: 1, good: 0, bad: 1 });
    expect(ledger.scoredTotal).toBe(3);
    expect(ledger.pendingEntries).toBe(0);
  });

  it('a wide book is not a price: the last trade is used; a settled market is judged at its settlement', () => {
    const { state, apply } = setup();
    apply(market(M, 1, T0), book(M, yesTok(1), 10, 90, T0));
    expect(currentYesPrice(state, VB, M)).toBeUndefined();
    apply(buy({ marketId: M, n: 1, outcome: 'yes', cents: 55, size: 1, ts: T0 }));
    expect(currentYesPrice(state, VB, M)).toEqual({ price: 5500, source: 'last_trade' });
    apply(settle(M, 0, T0 + 1));
    expect(currentYesPrice(state, VB, M)).toEqual({ price: 0, source: 'settlement' });
  });

  it('tells smart and reliably wrong wallets apart by the lower confidence bound, not the raw rate', () => {
    expect(wilsonLow(5, 5)).toBeCloseTo(0.649, 3);
    expect(wilsonLow(3, 5)).toBeCloseTo(0.272, 3);
    expect(wilsonLow(0, 0)).toBe(0);
    const { ledger } = setup();
    const w = { entries: { made: 5, notional: 0, scored: 5, good: 5, bad: 0, moveSum: 0 } } as WalletRecord;
    expect(ledger.isSmart(w)).toBe(true);
    expect(ledger.isSmart(w, { ...w.entries, good: 3 })).toBe(false);
    expect(ledger.isSmart(w, { ...w.entries, scored: 4, good: 4 })).toBe(false);
    expect(ledger.isFade(w, { ...w.entries, good: 0, bad: 5 })).toBe(true);
  });
});

describe('WalletLedger volume and persistence', () => {
  it('materializes one-minute volume per token', () => {
    const { ledger, apply } = setup();
    apply(market(M, 1, T0));
    apply(
      buy({ marketId: M, n: 1, wallet: addr('1'), outcome: 'yes', cents: 40, size: 10, ts: T0 }),
      buy({ marketId: M, n: 1, wallet: addr('1'), outcome: 'yes', cents: 50, size: 5, ts: T0 + 30_000 }),
      buy({ marketId: M, n: 1, wallet: addr('2'), outcome: 'no', cents: 60, size: 2, ts: T0 + 61_000 }),
      buy({ marketId: 'KXA', n: 0, outcome: 'yes', cents: 60, size: 2, ts: T0, venue: 'venue_a' }),
    );
    expect([...ledger.tokenVolume(VB, yesTok(1))!.buckets]).toEqual([[T0, { shares: 15, notional: 40 * 100 * 10 + 50 * 100 * 5, trades: 2 }]]);
    expect([...ledger.tokenVolume(VB, noTok(1))!.buckets]).toEqual([[T0 + 60_000, { shares: 2, notional: 12_000, trades: 1 }]]);
    expect(
      ledger
        .marketVolumes(VB, M)
        .map((v) => v.outcome)
        .sort(),
    ).toEqual(['no', 'yes']);
    // venue_a is not a wallet venue: its per-token volume is not materialized.
    expect(ledger.marketVolumes('venue_a', 'KXA')).toEqual([]);
    expect(ledger.watermark.get(VB)).toBe(T0 + 61_000);
  });

  it('persists wallet records to LMDB and loads them after a reopen, with volume rebuilt from trades', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-wallets-'));
    dirs.push(dir);
    const now = Date.now();
    const first = setup({ persist: dir, now: () => now });
    first.apply(market(M, 1, now), book(M, yesTok(1), 39, 41, now));
    for (let i = 0; i < 20; i++)
      first.apply(
        buy({
          marketId: M,
          n: 1,
          wallet: addr(String(i % 4)),
          maker: addr('f'),
          outcome: i % 3 ? 'yes' : 'no',
          cents: 41,
          size: 10 + i,
          ts: now - 300_000 + i * 1_000,
        }),
      );
    first.apply(sell({ marketId: M, n: 1, wallet: addr('1'), outcome: 'yes', cents: 45, size: 5, ts: now - 100_000 }));
    first.ledger.advance(now);
    await first.persistence!.snapshot(first.state);
    const before = [...first.ledger.allWallets()].map((w) => JSON.stringify(view(w)) + JSON.stringify(w.entries) + JSON.stringify(w.recent)).sort();
    const scored = first.ledger.scoredTotal;
    const vol = JSON.stringify([...first.ledger.tokenVolume(VB, yesTok(1))!.buckets]);
    const w = first.ledger.wallet(addr('1'))!;
    const prev = { realized: w.realized, positions: new Map([...w.positions].map(([k, x]) => [k, { ...x }])) };
    expect([...prev.positions.values()].some((x) => x.shares > 0)).toBe(true);
    for (const c of cleanups.splice(0).reverse()) await c();

    const state = new EngineState(venues);
    const p = new Persistence(dir);
    p.load(state);
    const ledger = new WalletLedger(state, p, { now: () => now });
    cleanups.push(async () => {
      await ledger.close();
      await p.close();
    });
    // close() wrote the volume with the last trade in it: nothing is replayed from the trade log
    expect(ledger.load()).toEqual({ wallets: 5, volumeTrades: 0 });
    const after = [...ledger.allWallets()].map((w) => JSON.stringify(view(w)) + JSON.stringify(w.entries) + JSON.stringify(w.recent)).sort();
    expect(after).toEqual(before);
    expect(ledger.scoredTotal).toBe(scored);
    expect(scored).toBe(20);
    expect(JSON.stringify([...ledger.tokenVolume(VB, yesTok(1))!.buckets])).toBe(vol);
    expect(ledger.holdersOf(VB, M)).toHaveLength(5);
    // A market that settled while the ledger was down (catalog restored, ledger not yet loaded)
    // is settled by load: every open position paid out at 1 dollar a YES share.
    applyEvent(state, settle(M, 100, now));
    const again = new WalletLedger(state, p, { now: () => now });
    again.load();
    const w1 = again.wallet(addr('1'))!;
    const expected = prev.realized + [...prev.positions.values()].reduce((a, x) => a + x.shares * (x.outcome === 'yes' ? 10_000 : 0) - x.cost, 0);
    expect(w1.realized).toBeCloseTo(expected, 6);
    for (const pos of w1.positions.values()) expect(pos).toMatchObject({ shares: 0, cost: 0, payout: pos.outcome === 'yes' ? 10_000 : 0 });
    expect(w1.openCost).toBe(0);
  });

  it('restores volume from its last write and replays only the trades logged after it, counting none twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-wallets-'));
    dirs.push(dir);
    const now = Date.now();
    const trade = (i: number) =>
      buy({ marketId: M, n: 1, wallet: addr(String(i % 3)), outcome: i % 2 ? 'yes' : 'no', cents: 40 + (i % 5), size: 5 + i, ts: now - 600_000 + i * 20_000 });
    // A run that writes its volume after 12 trades, logs 7 more, and stops without closing the ledger (a crash).
    const state = new EngineState(venues);
    const p = new Persistence(dir);
    const changes = persistChanges(state, p);
    const ledger = new WalletLedger(state, p, { now: () => now, advanceMs: 0, flushMs: 0 });
    const flow = walletFlow(state, ledger);
    applyEvent(state, market(M, 1, now));
    for (let i = 0; i < 12; i++) applyEvent(state, trade(i));
    await ledger.flush(true);
    for (let i = 12; i < 19; i++) applyEvent(state, trade(i));
    const volumes = (l: WalletLedger) => JSON.stringify(l.marketVolumes(VB, M).map((v) => [v.token, [...v.buckets]]));
    const live = volumes(ledger);
    flow.unsubscribe();
    changes.unsubscribe();
    await p.close();

    const p2 = new Persistence(dir);
    cleanups.push(() => p2.close());
    p2.load(new EngineState(venues));
    const restarted = new WalletLedger(new EngineState(venues), p2, { now: () => now });
    expect(restarted.load().volumeTrades).toBe(7);
    expect(volumes(restarted)).toBe(live);
    // Without a stored volume every trade within retention is replayed, to the same buckets.
    await p2.db('wallets').remove(['m', 'volume']);
    const replayed = new WalletLedger(new EngineState(venues), p2, { now: () => now });
    expect(replayed.load().volumeTrades).toBe(19);
    expect(volumes(replayed)).toBe(live);
    // Stored buckets older than retention at the next start are not restored.
    await replayed.flush(true);
    const later = new WalletLedger(new EngineState(venues), p2, { now: () => now + 48 * 3_600_000 - 300_000 });
    expect(later.load().volumeTrades).toBe(0);
    const minutes = later.marketVolumes(VB, M).flatMap((v) => [...v.buckets.keys()]);
    expect(minutes.length).toBeGreaterThan(0);
    expect(Math.min(...minutes)).toBeGreaterThanOrEqual(now - 300_000 - 60_000);
  });

  it('holds at most maxPositions positions: evicts the least recently traded, keeps wallet totals, and a reload agrees', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-wallets-'));
    dirs.push(dir);
    const now = Date.now();
    const first = setup({ persist: dir, now: () => now, maxPositions: 3 });
    const [M1, M2, M3, M4] = [cond('1'), cond('2'), cond('3'), cond('4')];
    const A = addr('a');
    const B = addr('b');
    first.apply(market(M1, 1, now), market(M2, 2, now), market(M3, 3, now), market(M4, 4, now));
    first.apply(
      buy({ marketId: M1, n: 1, wallet: A, outcome: 'yes', cents: 40, size: 100, ts: now - 5_000 }),
      buy({ marketId: M2, n: 2, wallet: A, outcome: 'yes', cents: 20, size: 50, ts: now - 4_000 }),
      buy({ marketId: M3, n: 3, wallet: B, outcome: 'no', cents: 30, size: 10, ts: now - 3_000 }),
      // A sells half of M1: realizes (60 − 40) × 50 = $10 and makes M1 the most recently traded
      sell({ marketId: M1, n: 1, wallet: A, outcome: 'yes', cents: 60, size: 50, ts: now - 2_000 }),
    );
    const a = first.ledger.wallet(A)!;
    expect(first.ledger.positionCount).toBe(3);
    expect(a.openCost).toBe(40 * 100 * 50 + 20 * 100 * 50);
    // a fourth position evicts the least recently traded one: A's M2 (open, $10 of cost)
    first.apply(buy({ marketId: M4, n: 4, wallet: B, outcome: 'yes', cents: 70, size: 10, ts: now - 1_000 }));
    expect(first.ledger.positionCount).toBe(3);
    expect(first.ledger.evictedPositions).toBe(1);
    expect([...a.positions.keys()]).toEqual([`${VB}:${M1}:yes`]);
    expect(a.realized).toBe(20 * 100 * 50); // the realized PnL stays in the wallet's totals
    expect(a.openCost).toBe(40 * 100 * 50); // the evicted position's cost left the open cost
    expect(first.ledger.holdersOf(VB, M2)).toEqual([]);
    expect(first.ledger.holdersOf(VB, M1).map((w) => w.address)).toEqual([A.toLowerCase()]);
    expect(a.markets.size + (a.marketsEvicted ?? 0)).toBe(2); // markets traded still counts M2
    // the newest position is never the one evicted, even past the cap by one trade's two sides
    first.apply(buy({ marketId: M2, n: 2, wallet: addr('c'), maker: addr('d'), outcome: 'yes', cents: 25, size: 5, ts: now }));
    expect(first.ledger.positionCount).toBe(3);
    expect(first.ledger.positionOf(first.ledger.wallet(addr('c'))!, VB, M2, 'yes')?.shares).toBe(5);
    expect(first.ledger.positionOf(first.ledger.wallet(addr('d'))!, VB, M2, 'no')?.shares).toBe(5);
    const before = [...first.ledger.allWallets()].map((w) => JSON.stringify(view(w)) + w.openCost).sort();
    for (const c of cleanups.splice(0).reverse()) await c();

    // LMDB forgot the evicted positions too: a reload holds the same, and a smaller cap evicts oldest first
    const state = new EngineState(venues);
    const p = new Persistence(dir);
    p.load(state);
    const ledger = new WalletLedger(state, p, { now: () => now, maxPositions: 3 });
    cleanups.push(async () => {
      await ledger.close();
      await p.close();
    });
    ledger.load();
    expect([...ledger.allWallets()].map((w) => JSON.stringify(view(w)) + w.openCost).sort()).toEqual(before);
    const small = new WalletLedger(state, p, { now: () => now, maxPositions: 2 });
    small.load();
    expect(small.positionCount).toBe(2);
    expect(small.holdersOf(VB, M4)).toEqual([]); // B's M4 (now − 1 s) was the oldest left
  });

  it('scores due entries and writes dirty records on its own timers once attached', async () => {
    // Only the interval timers and the clock are faked: LMDB's own commit scheduling stays real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    cleanups.push(async () => void vi.useRealTimers());
    const dir = mkdtempSync(join(tmpdir(), 'cb-wallets-'));
    dirs.push(dir);
    const state = new EngineState(venues);
    const p = new Persistence(dir);
    const ledger = new WalletLedger(state, p, { advanceMs: 10, flushMs: 10 });
    const flow = walletFlow(state, ledger);
    cleanups.push(async () => {
      flow.unsubscribe();
      await ledger.close();
      await p.close();
    });
    const now = Date.now();
    applyEvent(state, market(M, 1, now));
    applyEvent(state, book(M, yesTok(1), 49, 51, now));
    applyEvent(state, buy({ marketId: M, n: 1, wallet: addr('9'), outcome: 'yes', cents: 41, size: 10, ts: now - 120_000 }));
    vi.advanceTimersByTime(9);
    expect(ledger.scoredTotal).toBe(0);
    vi.advanceTimersByTime(1); // the advance timer scores the due entry, then the flush timer writes its wallet
    expect(ledger.wallet(addr('9'))!.entries).toMatchObject({ scored: 1, good: 1 });
    await p.db('wallets').committed;
    expect((p.db('wallets').get(['w', addr('9').toLowerCase()]) as { entries: { good: number } }).entries.good).toBe(1);
  });

  // Its time per trade is measured in bench/signals/alerts.bench.ts, against the trade ring.
  it("applies 100 000 trades with only the horizon's entries pending", () => {
    const { ledger, state } = setup();
    let maxPending = 0;
    for (let i = 0; i < 100_000; i++) {
      const t = buy({
        marketId: cond(String(i % 10)),
        n: i % 10,
        wallet: addr(String(i % 16)),
        outcome: i % 2 ? 'yes' : 'no',
        cents: 40,
        size: 10,
        ts: T0 + i * 10,
      });
      ledger.apply({ ...t, seq: i + 1 });
      if (i % 100 === 99) {
        ledger.advance(t.timestamp); // the 1 s timer: one advance per 100 trades at 10 ms apart
        maxPending = Math.max(maxPending, ledger.pendingEntries);
      }
    }
    expect(ledger.applied).toBe(100_000);
    expect(state.trades.size).toBe(0); // fed directly, not through the state
    // 120 s of trades at one per 10 ms, plus the trades since the last advance.
    expect(maxPending).toBeLessThanOrEqual(12_000 + 100);
    expect(ledger.walletCount).toBe(16);
  });
});
