import { walletFlow } from '../../pipelines/signals.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { Persistence } from '../../src/persist/store.js';
import { AlertEngine, type Alert, type AlertOptions, type AlertType } from '../../src/signals/alerts.js';
import { WalletLedger } from '../../src/signals/wallets.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { addr, book, buy, cond, market, sell, VA, VB, yesTok } from './events.js';
import { runAlertStudy } from '../support/study.js';
import { alertJson } from '../../src/views/alert.js';

const config = loadConfig({ env: {} });
const T0 = Date.UTC(2026, 2, 10, 12);
const H = 120_000;
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(opts: { persist?: string; alerts?: AlertOptions } = {}) {
  let now = T0;
  const state = new EngineState(config.venues);
  const persistence = opts.persist ? new Persistence(opts.persist) : undefined;
  const ledger = new WalletLedger(state, persistence, { now: () => now, advanceMs: 0 });
  const alerts = new AlertEngine(ledger, persistence, opts.alerts);
  const flow = walletFlow(state, ledger, alerts);
  cleanups.push(async () => {
    flow.unsubscribe();
    await alerts.close();
    await ledger.close();
    await persistence?.close();
  });
  const apply = (...evs: NormalizedEvent[]): void => {
    for (const e of evs) {
      now = Math.max(now, e.localTimestamp);
      applyEvent(state, e);
    }
  };
  /** Moves the clock and scores what is due (the ledger's 1 s timer). */
  const at = (t: number): void => {
    now = t;
    ledger.advance(t);
  };
  let markets = 0;
  /**
   * `n` entries by `wallet`, each on its own market: YES bought at 41¢ (100 shares, $41), then
   * the book moves 9¢ its way (good) or against it (bad) before the horizon.
   */
  const train = (wallet: string, n: number, how: 'good' | 'bad'): string[] => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const k = ++markets;
      const m = cond('e').slice(0, 60) + k.toString(16).padStart(6, '0');
      const t = now + 1_000;
      apply(market(m, k, t), book(m, yesTok(k), 39, 41, t), buy({ marketId: m, n: k, wallet, outcome: 'yes', cents: 41, size: 100, ts: t }));
      apply(how === 'good' ? book(m, yesTok(k), 49, 51, t + 30_000) : book(m, yesTok(k), 31, 33, t + 30_000));
      at(t + H);
      ids.push(m);
    }
    return ids;
  };
  const newMarket = (yesBid = 39, yesAsk = 41): { id: string; k: number } => {
    const k = ++markets;
    const id = cond('f').slice(0, 60) + k.toString(16).padStart(6, '0');
    apply(market(id, k, now), book(id, yesTok(k), yesBid, yesAsk, now));
    return { id, k };
  };
  const of = (type: AlertType): Alert[] => alerts.recent().filter((a) => a.type === type);
  return { state, ledger, alerts, apply, at, train, newMarket, of, now: () => now };
}

describe('smart_money and fade (raised at trade time)', () => {
  it('fires smart_money on a wallet with a record of good early entries, folds repeats, skips small and unknown wallets', () => {
    const s = setup();
    const W = addr('a');
    s.train(W, 5, 'good');
    expect(s.ledger.isSmart(s.ledger.wallet(W)!)).toBe(true);
    expect(s.of('smart_money')).toEqual([]); // its record was building: nothing to raise yet
    const m = s.newMarket();
    s.apply(buy({ marketId: m.id, n: m.k, wallet: addr('b'), outcome: 'yes', cents: 41, size: 100, ts: s.now() }));
    s.apply(buy({ marketId: m.id, n: m.k, wallet: W, outcome: 'yes', cents: 41, size: 20, ts: s.now() })); // $8.20 < $10
    expect(s.of('smart_money')).toEqual([]);
    s.apply(buy({ marketId: m.id, n: m.k, wallet: W, outcome: 'no', cents: 59, size: 100, ts: s.now() }));
    const [a] = s.of('smart_money');
    expect(a).toMatchObject({ type: 'smart_money', venue: VB, marketId: m.id, wallet: W.toLowerCase(), outcome: 'no', action: 'buy', price: 5900, size: 100 });
    expect(a!.figures).toMatchObject({
      scored_entries: 5,
      good_entries: 5,
      bad_entries: 0,
      hit_rate: 100,
      hit_rate_lower_bound: 64.9,
      avg_move_cents: 9,
      amount_usd: 59,
      min_entries: 5,
    });
    expect(a!.reason).toMatch(/5 of its 5 scored entries were good/);
    // The same wallet, market and outcome within the cooldown is folded; another market is not.
    s.apply(buy({ marketId: m.id, n: m.k, wallet: W, outcome: 'no', cents: 59, size: 100, ts: s.now() + 1 }));
    expect(s.of('smart_money')).toHaveLength(1);
    const m2 = s.newMarket();
    s.apply(buy({ marketId: m2.id, n: m2.k, wallet: W, outcome: 'yes', cents: 41, size: 100, ts: s.now() + 2 }));
    expect(s.of('smart_money')).toHaveLength(2);
    expect(s.of('fade')).toEqual([]);
  });

  it('fires fade on a large bet by a reliably wrong wallet, not on its small ones', () => {
    const s = setup();
    const F = addr('c');
    s.train(F, 5, 'bad');
    expect(s.ledger.isFade(s.ledger.wallet(F)!)).toBe(true);
    const m = s.newMarket();
    s.apply(buy({ marketId: m.id, n: m.k, wallet: F, outcome: 'yes', cents: 41, size: 50, ts: s.now() })); // $20.50 < $25
    expect(s.of('fade')).toEqual([]);
    s.apply(buy({ marketId: m.id, n: m.k, wallet: F, outcome: 'yes', cents: 41, size: 100, ts: s.now() }));
    expect(s.of('fade')).toHaveLength(1);
    expect(s.of('fade')[0]!.figures).toMatchObject({
      scored_entries: 5,
      bad_entries: 5,
      miss_rate: 100,
      miss_rate_lower_bound: 64.9,
      avg_move_cents: -9,
      amount_usd: 41,
      min_amount_usd: 25,
    });
    expect(s.of('smart_money')).toEqual([]);
    expect(s.of('insider')).toEqual([]);
  });
});

describe("the trader's lifetime PnL on an alert", () => {
  it('is the wallet ledger realized PnL when the alert was raised, in USD on the record; null without a wallet', () => {
    const s = setup();
    const F = addr('c');
    s.train(F, 5, 'bad');
    const m = s.newMarket();
    // A small position sold at a loss: $20.50 in at 41¢, out at 35¢ (−$3), below every threshold.
    s.apply(buy({ marketId: m.id, n: m.k, wallet: F, outcome: 'yes', cents: 41, size: 50, ts: s.now() }));
    s.apply(sell({ marketId: m.id, n: m.k, wallet: F, outcome: 'yes', cents: 35, size: 50, ts: s.now() + 1 }));
    expect(s.of('fade')).toEqual([]);
    s.apply(buy({ marketId: m.id, n: m.k, wallet: F, outcome: 'yes', cents: 41, size: 100, ts: s.now() + 2 }));
    const [fade] = s.of('fade');
    expect(fade!.walletPnl).toBe((3500 - 4100) * 50);
    expect(alertJson('polymarket', fade!, null)).toMatchObject({ lifetime_pnl: -3, smart_lifetime_pnl: -3, side: 'buy', outcome: 'yes' });
    // a later gain does not rewrite the alert: it says what was known when it was raised
    s.apply(sell({ marketId: m.id, n: m.k, wallet: F, outcome: 'yes', cents: 60, size: 100, ts: s.now() + 3 }));
    expect(s.ledger.wallet(F)!.realized).toBe((3500 - 4100) * 50 + (6000 - 4100) * 100);
    expect(s.of('fade')[0]!.walletPnl).toBe((3500 - 4100) * 50);
    // an alert stored before the figure was kept, or raised without a wallet, has none
    const { walletPnl: _gone, ...older } = fade!;
    expect(alertJson('polymarket', older, null)).toMatchObject({ lifetime_pnl: null, smart_lifetime_pnl: null });
    expect(alertJson('kalshi', { ...fade!, wallet: null, walletPnl: null }, null).lifetime_pnl).toBeNull();
  });
});

describe('insider (raised when the move confirms)', () => {
  it('track_record: a wallet with a good record, a large entry and a confirmed move', () => {
    const s = setup();
    const W = addr('d');
    const ids = s.train(W, 5, 'good');
    // Entries 4 and 5 had 3 and 4 good earlier entries when they were scored.
    const ins = s.of('insider');
    expect(ins.map((a) => a.marketId)).toEqual(ids.slice(3));
    expect(ins[0]!.figures).toMatchObject({
      path: 'track_record',
      move_cents: 9,
      horizon_seconds: 120,
      amount_usd: 41,
      prior_entries: 3,
      prior_good_entries: 3,
      prior_hit_rate: 100,
    });
    expect(ins[0]!.createdAt - ins[0]!.tradeTimestamp).toBe(H);
  });

  it('fresh_wallet: a new wallet with one large concentrated position; small fresh bets do not fire', () => {
    const s = setup();
    const m = s.newMarket();
    s.apply(buy({ marketId: m.id, n: m.k, wallet: addr('e'), outcome: 'yes', cents: 40, size: 3_000, ts: s.now() }));
    s.apply(buy({ marketId: m.id, n: m.k, wallet: addr('f'), outcome: 'yes', cents: 40, size: 250, ts: s.now() }));
    s.apply(book(m.id, yesTok(m.k), 48, 50, s.now() + 10_000));
    s.at(s.now() + H);
    const ins = s.of('insider');
    expect(ins).toHaveLength(1);
    expect(ins[0]).toMatchObject({ wallet: addr('e').toLowerCase(), outcome: 'yes', price: 4000, size: 3_000 });
    expect(ins[0]!.figures).toMatchObject({ path: 'fresh_wallet', move_cents: 9, amount_usd: 1200, position_usd: 1200, concentration: 100, prior_entries: 0 });
  });

  it('anonymous_trade: venue_a trades carry no wallet; only a large one followed by the move fires', () => {
    const s = setup();
    const id = 'KXTEST-26MAR10-Y';
    s.apply(market(id, 0, s.now(), VA), book(id, id, 39, 41, s.now(), VA));
    s.apply(buy({ marketId: id, n: 0, venue: VA, outcome: 'yes', cents: 41, size: 2_000, ts: s.now() }));
    s.apply(buy({ marketId: id, n: 0, venue: VA, outcome: 'yes', cents: 41, size: 200, ts: s.now() }));
    s.apply(book(id, id, 49, 51, s.now() + 10_000, VA));
    s.at(s.now() + H);
    const ins = s.of('insider');
    expect(ins).toHaveLength(1);
    expect(ins[0]).toMatchObject({ venue: VA, wallet: null, token: id, size: 2_000 });
    expect(ins[0]!.figures).toMatchObject({ path: 'anonymous_trade', amount_usd: 820, move_cents: 9 });
    expect(s.ledger.walletCount).toBe(0);
  });
});

describe('captain_hook (raised at trade time)', () => {
  it('fires once when a wallet sells most of a position well above its cost into a spike', () => {
    const s = setup();
    const m = s.newMarket(29, 31);
    const C = addr('1');
    const t = s.now();
    s.apply(buy({ marketId: m.id, n: m.k, wallet: C, outcome: 'yes', cents: 30, size: 500, ts: t }));
    s.apply(buy({ marketId: m.id, n: m.k, wallet: addr('2'), outcome: 'yes', cents: 45, size: 100, ts: t + 600_000 }));
    s.apply(sell({ marketId: m.id, n: m.k, wallet: C, outcome: 'yes', cents: 46, size: 200, ts: t + 660_000 })); // 40%: not yet
    expect(s.of('captain_hook')).toEqual([]);
    s.apply(sell({ marketId: m.id, n: m.k, wallet: C, outcome: 'yes', cents: 46, size: 100, ts: t + 661_000 })); // 60%
    s.apply(sell({ marketId: m.id, n: m.k, wallet: C, outcome: 'yes', cents: 46, size: 100, ts: t + 662_000 })); // 80%: same run
    const hooks = s.of('captain_hook');
    expect(hooks).toHaveLength(1);
    expect(hooks[0]).toMatchObject({ wallet: C.toLowerCase(), outcome: 'yes', action: 'sell', price: 4600, size: 100 });
    expect(hooks[0]!.figures).toMatchObject({
      avg_cost_cents: 30,
      exit_price_cents: 46,
      gain_cents: 16,
      window_low_cents: 30,
      spike_cents: 16,
      shares_sold: 300,
      position_shares: 500,
      fraction_sold: 60,
      position_cost_usd: 150,
      implied_by_other_outcome: false,
    });
    expect(s.ledger.wallet(C)!.realized).toBe(16 * 100 * 400);
    // the alert keeps the realized PnL as it stood at the sale that raised it (300 of 500 sold at +16¢)
    expect(hooks[0]!.walletPnl).toBe(16 * 100 * 300);
  });

  it('does not fire on a small gain, a small position, or a sale at a price that has held for the window', () => {
    const s = setup();
    const m = s.newMarket(29, 31);
    const t = s.now();
    s.apply(buy({ marketId: m.id, n: m.k, wallet: addr('3'), outcome: 'yes', cents: 40, size: 500, ts: t }));
    s.apply(buy({ marketId: m.id, n: m.k, wallet: addr('4'), outcome: 'yes', cents: 10, size: 100, ts: t })); // $10 position
    s.apply(buy({ marketId: m.id, n: m.k, wallet: addr('5'), outcome: 'yes', cents: 30, size: 500, ts: t }));
    for (let i = 1; i <= 60; i++) s.apply(buy({ marketId: m.id, n: m.k, wallet: addr('6'), outcome: 'yes', cents: 46, size: 1, ts: t + i * 60_000 }));
    const late = t + 61 * 60_000;
    s.apply(sell({ marketId: m.id, n: m.k, wallet: addr('3'), outcome: 'yes', cents: 46, size: 500, ts: late })); // +6¢
    s.apply(sell({ marketId: m.id, n: m.k, wallet: addr('4'), outcome: 'yes', cents: 46, size: 100, ts: late }));
    s.apply(sell({ marketId: m.id, n: m.k, wallet: addr('5'), outcome: 'yes', cents: 46, size: 500, ts: late })); // no spike in the last 30 min
    expect(s.of('captain_hook')).toEqual([]);
    expect(s.ledger.windowLow(VB, m.id, 'yes', late, 30 * 60_000)).toBe(4600);
  });

  it("drops a market's price ring once it has had no trade for the ring's 64 minutes, and keeps it until then", () => {
    const s = setup();
    const m = s.newMarket(29, 31);
    const t = s.now();
    const before = s.ledger.priceRings;
    s.apply(buy({ marketId: m.id, n: m.k, wallet: addr('3'), outcome: 'yes', cents: 40, size: 500, ts: t }));
    expect(s.ledger.priceRings).toBe(before + 1);
    s.ledger.advance(t + 63 * 60_000);
    expect(s.ledger.priceRings).toBe(before + 1);
    expect(s.ledger.windowLow(VB, m.id, 'yes', t + 30 * 60_000, 30 * 60_000)).toBe(4000);
    s.ledger.advance(t + 65 * 60_000);
    expect(s.ledger.priceRings).toBe(before);
    expect(s.ledger.windowLow(VB, m.id, 'yes', t + 30 * 60_000, 30 * 60_000)).toBeUndefined();
  });
});

describe('alert storage', () => {
  it('appends to LMDB, pages past the memory ring, and reloads the newest after a reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-alerts-'));
    dirs.push(dir);
    const s = setup({ persist: dir, alerts: { memory: 3 } });
    const W = addr('7');
    s.train(W, 5, 'good');
    for (let i = 0; i < 6; i++) {
      const m = s.newMarket();
      s.apply(buy({ marketId: m.id, n: m.k, wallet: W, outcome: 'yes', cents: 41, size: 100, ts: s.now() + i }));
    }
    await s.alerts.flushed();
    const all = s.alerts.page({ types: new Set<AlertType>(['smart_money', 'insider']), limit: 100 });
    expect(all.alerts.map((a) => a.type)).toEqual([...Array(6).fill('smart_money'), 'insider', 'insider']);
    expect(all.alerts.map((a) => a.seq)).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    const p1 = s.alerts.page({ types: new Set<AlertType>(['smart_money']), limit: 4 });
    expect([p1.alerts.map((a) => a.seq), p1.more]).toEqual([[8, 7, 6, 5], true]);
    const p2 = s.alerts.page({ types: new Set<AlertType>(['smart_money']), limit: 4, before: 5 });
    expect([p2.alerts.map((a) => a.seq), p2.more]).toEqual([[4, 3], false]);
    expect(
      s.alerts.page({ types: new Set<AlertType>(['insider', 'smart_money']), limit: 100, since: all.alerts[2]!.createdAt }).alerts.length,
    ).toBeGreaterThanOrEqual(3);
    for (const c of cleanups.splice(0).reverse()) await c();

    const p = new Persistence(dir);
    const state = new EngineState(config.venues);
    const ledger = new WalletLedger(state, p);
    const again = new AlertEngine(ledger, p, { memory: 3 });
    cleanups.push(async () => {
      await again.close();
      await ledger.close();
      await p.close();
    });
    expect(ledger.load().wallets).toBe(1);
    expect(again.load()).toBe(3);
    expect(again.seq).toBe(8);
    expect(again.page({ types: new Set<AlertType>(['smart_money', 'insider']), limit: 100 }).alerts).toEqual(all.alerts);
  });
});

describe('a window of the stored alerts (what a WebSocket replay of the alert channels reads)', () => {
  it('reads [from, to] oldest first in pages chained by their cursor, from LMDB and from memory alike', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-alerts-window-'));
    dirs.push(dir);
    for (const s of [setup({ persist: dir, alerts: { memory: 3 } }), setup()]) {
      s.train(addr('7'), 5, 'good');
      for (let i = 0; i < 9; i++) {
        const m = s.newMarket();
        s.at(s.now() + 1_000);
        s.apply(buy({ marketId: m.id, n: m.k, wallet: addr('7'), outcome: 'yes', cents: 41, size: 100, ts: s.now() }));
      }
      await s.alerts.flushed();
      const all = s.alerts.page({ types: new Set<AlertType>(['smart_money', 'insider']), limit: 100 }).alerts.reverse();
      expect(all).toHaveLength(11);
      const window = (from: number, to: number, limit: number): number[] => {
        const seqs: number[] = [];
        let cursor: number | undefined;
        do {
          const p = s.alerts.stored({ from, to, cursor, limit });
          expect(p.alerts.length).toBeLessThanOrEqual(limit);
          seqs.push(...p.alerts.map((a) => a.seq));
          cursor = p.cursor;
        } while (cursor !== undefined);
        return seqs;
      };
      const between = (from: number, to: number): number[] => all.filter((a) => a.createdAt >= from && a.createdAt <= to).map((a) => a.seq);
      expect(window(0, Number.MAX_SAFE_INTEGER, 4)).toEqual(all.map((a) => a.seq));
      const [from, to] = [all[3]!.createdAt, all[8]!.createdAt];
      expect(window(from, to, 2)).toEqual(between(from, to));
      expect(window(from + 1, to - 1, 100)).toEqual(between(from + 1, to - 1));
      expect(window(all[10]!.createdAt + 1, Number.MAX_SAFE_INTEGER, 5)).toEqual([]);
      expect(window(0, all[0]!.createdAt - 1, 5)).toEqual([]);
      expect(s.alerts.oldestStored()).toEqual(all[0]);
    }
  });
});

/**
 * SIMULATOR DATA: a seeded world's venue_b trades (taker wallets only, as the data-api gives them)
 * and books, 1 000 000 ticks at 5 ms = 83 simulated minutes. The world's informed wallets trade
 * ahead of scheduled price jumps, its faders against them, its noise wallets at random; the ledger
 * and the alert engine know nothing of that. We measure, per alert type, precision (alerts on the
 * intended class / all alerts of the type) and recall (intended-class wallets alerted / that
 * traded; intended-class entries alerted / made).
 */
describe('alerts on the simulator (precision and recall per wallet class)', () => {
  it('smart_money and insider fire on informed wallets, fade on faders, none on noise wallets', () => {
    const study = runAlertStudy(config, { seed: 7, ticks: 1_000_000 });
    const { report } = study;
    const f = { tradesBy: study.trades };
    // The figures for the record (deterministic for the seed; bench/signals/alerts.bench.ts reports them).
    console.log(JSON.stringify(study, null, 1));

    expect(f.tradesBy.informed).toBeGreaterThan(300);
    expect(f.tradesBy.fader).toBeGreaterThan(60);
    // Floors, with the measured values (seed 7) in comments. Precision: the Wilson bound keeps
    // a noise wallet's lucky start from passing; measured 1.0 for all three, and a single stray
    // alert would still leave smart_money and insider above 0.95 and fade above 0.9.
    expect(report.smart_money.precision).toBeGreaterThanOrEqual(0.95);
    expect(report.insider.precision).toBeGreaterThanOrEqual(0.95);
    expect(report.fade.precision).toBeGreaterThanOrEqual(0.9);
    expect(report.smart_money.byClass.noise + report.insider.byClass.noise + report.fade.byClass.noise).toBe(0);
    // Every informed wallet is found (8 of 8), and every fader but at most one (measured 6 of 6).
    expect(report.smart_money.walletRecall).toBe(1);
    expect(report.insider.walletRecall).toBe(1);
    expect(report.fade.walletRecall).toBeGreaterThanOrEqual(5 / 6);
    // Entry-level recall is bounded by the warm-up (5 scored entries before a wallet qualifies),
    // the cooldown and the size floors; measured in the report, floors well below it.
    expect(report.smart_money.entryRecall).toBeGreaterThan(0.5);
    expect(report.insider.entryRecall).toBeGreaterThan(0.15);
    expect(report.fade.entryRecall).toBeGreaterThan(0.2);
    // A million simulated ticks: seconds on a quiet core, several times that on a loaded machine.
  }, 240_000);
});
