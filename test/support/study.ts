import { walletFlow } from '../../pipelines/signals.js';
import type { Config } from '../../src/config/schema.js';
import { simFlow } from './flow.js';
import { AlertEngine, type AlertOptions, type AlertType } from '../../src/signals/alerts.js';
import { WalletLedger, type LedgerOptions } from '../../src/signals/wallets.js';

type WalletClass = 'informed' | 'fader' | 'noise';

/** How one alert type (or rule) did against the wallet class it is meant to find. */
export interface AlertScore {
  readonly alerts: number;
  /** Alerts on wallets of each class. */
  readonly byClass: Record<WalletClass, number>;
  /** Alerts on the intended class / all alerts. */
  readonly precision: number;
  /** Intended-class wallets alerted / intended-class wallets that traded. */
  readonly walletRecall: number;
  /** Intended-class entries (taker buys) alerted / entries made. */
  readonly entryRecall: number;
}

export interface AlertStudy {
  readonly ms: number;
  readonly ticks: number;
  readonly simulatedMinutes: number;
  readonly trades: Record<WalletClass, number>;
  readonly wallets: Record<WalletClass, number>;
  readonly scored: number;
  readonly report: { readonly smart_money: AlertScore; readonly insider: AlertScore; readonly fade: AlertScore };
  /**
   * The baseline: a size-only "whale" rule, alerting on every taker buy in the top decile by
   * notional (`minUsd` and up; what most alert feeds do), scored against the informed class.
   */
  readonly whale: AlertScore & { readonly minUsd: number; readonly quantile: number };
}

/**
 * SIMULATOR DATA. Runs the wallet ledger and the alert engine over a seeded world's venue_b
 * trades and books (test/support/flow.ts: the data-api records as the polling feed gives them, taker
 * wallets only) and scores each alert type against the world's hidden wallet classes: informed
 * wallets trade ahead of scheduled price jumps, faders against them, noise wallets at random. The
 * ledger and the alert engine know nothing of the classes. Deterministic for a seed.
 */
export function runAlertStudy(
  config: Config,
  o: { seed: number; ticks: number; msPerTick?: number; whaleQuantile?: number; ledger?: LedgerOptions; alerts?: AlertOptions },
): AlertStudy {
  const msPerTick = o.msPerTick ?? 5;
  const whaleQuantile = o.whaleQuantile ?? 0.9;
  const f = simFlow(config, { seed: o.seed, msPerTick });
  const ledger = new WalletLedger(f.state, undefined, { ...o.ledger, now: f.now, advanceMs: 0 });
  const alerts = new AlertEngine(ledger, undefined, { memory: 1_000_000, ...o.alerts });
  const flow = walletFlow(f.state, ledger, alerts);
  const classes: readonly WalletClass[] = ['informed', 'fader', 'noise'];
  const sets = (): Record<WalletClass, Set<string>> => ({ informed: new Set(), fader: new Set(), noise: new Set() });
  const entries = sets();
  const traded = sets();
  const buys: { wallet: string; tradeId: string; usd: number }[] = [];
  ledger.applied$.subscribe((a) => {
    const w = a.taker?.wallet.address;
    const k = w ? f.classOf(w) : undefined;
    if (!w || !k) return;
    traded[k].add(w);
    if (a.taker!.action !== 'buy') return;
    entries[k].add(a.trade.tradeId);
    buys.push({ wallet: w, tradeId: a.trade.tradeId, usd: a.notional / 10_000 });
  });
  const t0 = performance.now();
  f.run(o.ticks, (now) => ledger.advance(now));
  const ms = performance.now() - t0;
  flow.unsubscribe();
  void ledger.close();
  void alerts.close();

  const score = (hits: readonly { wallet?: string | null | undefined; tradeId?: string | null | undefined }[], target: WalletClass): AlertScore => {
    const byClass = { informed: 0, fader: 0, noise: 0 };
    const wallets = new Set<string>();
    const ids = new Set<string>();
    for (const a of hits) {
      const k = a.wallet ? f.classOf(a.wallet) : undefined;
      if (!k) continue;
      byClass[k]++;
      if (k === target) {
        wallets.add(a.wallet!);
        if (a.tradeId) ids.add(a.tradeId);
      }
    }
    return {
      alerts: hits.length,
      byClass,
      precision: hits.length ? byClass[target] / hits.length : 0,
      walletRecall: traded[target].size ? wallets.size / traded[target].size : 0,
      entryRecall: entries[target].size ? ids.size / entries[target].size : 0,
    };
  };
  const sizes = buys.map((b) => b.usd).sort((a, b) => a - b);
  const whaleUsd = sizes.length ? sizes[Math.min(sizes.length - 1, Math.floor(sizes.length * whaleQuantile))]! : 0;
  const whales = buys.filter((b) => b.usd >= whaleUsd);
  const of = (type: AlertType) => alerts.recent().filter((a) => a.type === type);
  const count = (x: Record<WalletClass, Set<string>>): Record<WalletClass, number> =>
    Object.fromEntries(classes.map((k) => [k, x[k].size])) as Record<WalletClass, number>;
  return {
    ms,
    ticks: o.ticks,
    simulatedMinutes: (o.ticks * msPerTick) / 60_000,
    trades: { ...f.tradesBy },
    wallets: count(traded),
    scored: ledger.scoredTotal,
    report: { smart_money: score(of('smart_money'), 'informed'), insider: score(of('insider'), 'informed'), fade: score(of('fade'), 'fader') },
    whale: { ...score(whales, 'informed'), minUsd: Math.round(whaleUsd * 100) / 100, quantile: whaleQuantile },
  };
}
