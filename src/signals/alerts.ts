import type { Database } from 'lmdb';
import { Subject } from 'rxjs';
import type { Logger } from '../core/log.js';
import type { VenueLabel } from '../core/types.js';
import { WriteBarrier } from '../persist/barrier.js';
import type { Persistence } from '../persist/store.js';
import { marketKey } from '../state/catalog.js';
import { wilsonLow, type AppliedTrade, type Outcome, type ScoredEntry, type WalletFill, type WalletLedger } from './wallets.js';

/**
 * Alerts from the trade flow (spec 2.14, 4.14, 4.15), each with a `reason` in words and the
 * `figures` that triggered it. What each type means here:
 *
 * - `smart_money` (at trade time): a taker buy of at least `smartMinUsd` by a wallet whose record
 *   of scored entries says it gets in early: at least `smartMinEntries` scored, at least
 *   a hit rate whose lower 95% confidence bound is at least `smartMinHitRate` (see WalletLedger: an entry is good when the market moved its
 *   way by ≥ 4 cents within the horizon). Fired when the trade is seen, so it is actionable.
 *
 * - `insider` (when the move confirms, one horizon after the entry): a large position taken
 *   ahead of a move of at least `insiderMinMoveUnits`. Firing at confirmation rather than at trade
 *   time is deliberate: at trade time a large bet is only a large bet (most are not informed);
 *   after the move it is evidence. The alert names the entry time, so the lead time is visible.
 *   Three paths, each needing the confirmed move and an entry of at least `insiderMinUsd`:
 *   - `track_record`: the wallet had at least `insiderPriorMinEntries` scored entries with a hit
 *     rate of at least `insiderPriorMinHitRate` before this one, and the entry was at least
 *     `insiderMinSizeRatio` × its typical entry (a bigger bet than usual). For a wallet with a
 *     record, the record replaces concentration as the evidence that the move was not luck.
 *   - `fresh_wallet`: a wallet with at most `insiderFreshMaxEntries` scored entries whose position
 *     is at least `insiderFreshMinUsd` and at least `insiderFreshMinShare` of its open exposure
 *     (the classic new-wallet, one-market bet). Size and concentration are the only evidence a
 *     new wallet offers, so the bar is high.
 *   - `anonymous_trade` (venues whose public trades carry no wallets, i.e. venue_a): a single
 *     trade of at least `anonymousMinUsd` followed by the move. `wallet` is null. This is the only
 *     alert an anonymous venue yields: smart_money, fade and captain_hook need a wallet's history.
 *
 * - `captain_hook` (at trade time): a wallet that built a position (cost at least
 *   `hookMinCostUsd`) and sells into a spike: in one run of sales it takes out at least
 *   `hookMinFraction` of the position at a price at least `hookMinGainUnits` above its average
 *   cost, while the outcome trades at least `hookMinSpikeUnits` above its low of the last
 *   `hookWindowMs`. The hook: whoever chases the spike is buying from the wallet that set it up.
 *   Only explicit sales count by default: buying the other outcome locks the same price in, but
 *   on the simulator (whose wallets never sell) counting it fired on noise wallets that simply
 *   bought both sides at different times; `hookImpliedExits` turns it on.
 *
 * - `fade` (at trade time, fade-finder feed): a taker buy of at least `fadeMinUsd` by a wallet that
 *   is reliably wrong: at least `fadeMinEntries` scored, the lower 95% bound of its miss rate at least
 *   `fadeMinMissRate`.
 *
 * Maker fills do not raise smart_money or fade alerts: a maker's timing is chosen by the taker.
 * Repeats are folded: one alert per (type, wallet, market, outcome) per `cooldownMs`.
 *
 * Alerts are kept newest-last in a bounded ring (`memory`) and appended to LMDB `db('wallets')`
 * under ['a', seq] (the last `persistLimit` kept); older pages are read from LMDB, and a window of
 * them oldest first (`stored`: a WebSocket replay of the alert channels, src/ws/replay-alerts.ts).
 */

export type AlertType = 'smart_money' | 'insider' | 'captain_hook' | 'fade';
/** The smart-money feed's types (spec 4.14). */
export const SMART_MONEY_TYPES: readonly AlertType[] = ['smart_money', 'insider', 'captain_hook'];
/** The fade-finder feed's types (spec 4.15). */
export const FADE_TYPES: readonly AlertType[] = ['fade'];

export type Figure = number | string | boolean | null;

export interface Alert {
  readonly seq: number;
  readonly type: AlertType;
  readonly venue: VenueLabel;
  readonly marketId: string;
  readonly token: string | null;
  readonly outcome: Outcome;
  readonly action: 'buy' | 'sell';
  readonly wallet: string | null;
  /** Price of `outcome` on the trade, units. */
  readonly price: number;
  readonly size: number;
  /** price × size, units × shares. */
  readonly notional: number;
  readonly tradeId: string;
  readonly tradeTimestamp: number;
  /** When the alert was raised (ms); non-decreasing in seq. */
  readonly createdAt: number;
  readonly reason: string;
  readonly figures: Readonly<Record<string, Figure>>;
  /**
   * The wallet's realized PnL over all its positions when the alert was raised, units × shares (the
   * ledger's lifetime figure); null for an alert without a wallet; absent in alerts stored before it was kept.
   */
  readonly walletPnl?: number | null | undefined;
}

export interface AlertOptions {
  readonly smartMinUsd?: number;
  readonly fadeMinUsd?: number;
  readonly insiderMinMoveUnits?: number;
  readonly insiderMinUsd?: number;
  readonly insiderMinSizeRatio?: number;
  readonly insiderPriorMinEntries?: number;
  readonly insiderPriorMinHitRate?: number;
  readonly insiderFreshMaxEntries?: number;
  readonly insiderFreshMinUsd?: number;
  readonly insiderFreshMinShare?: number;
  readonly anonymousMinUsd?: number;
  readonly hookMinCostUsd?: number;
  readonly hookMinGainUnits?: number;
  readonly hookMinSpikeUnits?: number;
  readonly hookMinFraction?: number;
  readonly hookWindowMs?: number;
  /** Count a buy of the other outcome as a sale for captain_hook (default false: see the file comment). */
  readonly hookImpliedExits?: boolean;
  readonly cooldownMs?: number;
  /** Alerts kept in memory (default 10 000). */
  readonly memory?: number;
  /** Alerts kept in LMDB (default 100 000). */
  readonly persistLimit?: number;
  readonly log?: Logger;
}

const DEFAULTS = {
  smartMinUsd: 10,
  fadeMinUsd: 25,
  insiderMinMoveUnits: 600,
  insiderMinUsd: 25,
  insiderMinSizeRatio: 1,
  insiderPriorMinEntries: 3,
  insiderPriorMinHitRate: 0.6,
  insiderFreshMaxEntries: 2,
  insiderFreshMinUsd: 1_000,
  insiderFreshMinShare: 0.8,
  anonymousMinUsd: 500,
  hookMinCostUsd: 50,
  hookMinGainUnits: 1_000,
  hookMinSpikeUnits: 800,
  hookMinFraction: 0.5,
  hookWindowMs: 30 * 60_000,
  hookImpliedExits: false,
  cooldownMs: 10 * 60_000,
  memory: 10_000,
  persistLimit: 100_000,
} as const;

export interface AlertQuery {
  readonly types: ReadonlySet<AlertType>;
  /** Venue labels; undefined = all. */
  readonly venues?: ReadonlySet<VenueLabel> | undefined;
  /** Only alerts created at or after this (ms). */
  readonly since?: number | undefined;
  /** Only alerts older than this sequence number (the cursor). */
  readonly before?: number | undefined;
  readonly limit: number;
}

/** A page of the stored alerts of a window (`AlertEngine.stored`). */
export interface StoredQuery {
  /** Created at or after this (ms). */
  readonly from: number;
  /** Created at or before this (ms). */
  readonly to: number;
  /** Where the page starts: the `cursor` the previous page answered (absent: the window's first alert). */
  readonly cursor?: number | undefined;
  readonly limit: number;
}

const usd = (unitsTimesShares: number): number => Math.round(unitsTimesShares / 100) / 100;
const cents = (units: number): number => Math.round(units) / 100;
const pct = (x: number): number => Math.round(x * 1000) / 10;
const short = (a: string): string => (a.length > 12 ? `${a.slice(0, 6)}…${a.slice(-4)}` : a);
const A_END = ['a', Number.MAX_SAFE_INTEGER];

/** The alert engine; see the file comment. */
export class AlertEngine {
  readonly alerts$ = new Subject<Alert>();
  private readonly o: Required<Omit<AlertOptions, 'log'>>;
  private readonly db: Database | undefined;
  private ring: Alert[] = [];
  private readonly cooldown = new Map<string, number>();
  private readonly anonymousVenues: ReadonlySet<VenueLabel>;
  /** Writes in flight, waited for by flush/close without a copy of them per wait (persist/barrier.ts). */
  private readonly writes = new WriteBarrier();
  private prunedTo = 0;
  seq = 0;
  private lastCreated = 0;
  /** Alerts raised per type since start. */
  readonly counts: Record<AlertType, number> = { smart_money: 0, insider: 0, captain_hook: 0, fade: 0 };
  writeErrors = 0;

  constructor(
    private readonly ledger: WalletLedger,
    persistence: Persistence | undefined,
    opts: AlertOptions = {},
  ) {
    const { log: _log, ...rest } = opts;
    this.o = { ...DEFAULTS, ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) } as Required<Omit<AlertOptions, 'log'>>;
    this.log = opts.log;
    this.db = persistence?.db('wallets');
    this.anonymousVenues = new Set(ledger.venues.filter((v) => v.capabilities.smartMoney && !v.capabilities.walletData).map((v) => v.label));
  }

  private readonly log: Logger | undefined;

  get options(): Readonly<Required<Omit<AlertOptions, 'log'>>> {
    return this.o;
  }

  /** Loads the newest `memory` alerts and the sequence from LMDB. */
  load(): number {
    if (!this.db) return 0;
    const got: Alert[] = [];
    for (const { value } of this.db.getRange({ start: A_END, end: ['a', 0], reverse: true, limit: this.o.memory })) got.push(value as Alert);
    got.reverse();
    this.ring = got;
    const last = got[got.length - 1];
    if (last) {
      this.seq = last.seq;
      this.lastCreated = last.createdAt;
      this.prunedTo = Math.max(0, this.seq - this.o.persistLimit);
    }
    return got.length;
  }

  /** Waits for every appended alert to be durable; the pipeline that feeds the engine has stopped by then. */
  async close(): Promise<void> {
    await this.writes.settled();
  }

  /** Resolves when every appended alert is durable. */
  async flushed(): Promise<void> {
    await this.writes.settled();
  }

  // ---- detection ------------------------------------------------------------------------------

  /** A trade the ledger applied: smart_money, fade and captain_hook are judged at once. */
  onTrade(a: AppliedTrade): void {
    const f = a.taker;
    if (f && f.action === 'buy') {
      const w = f.wallet;
      const notional = f.price * f.size;
      const e = w.entries;
      if (this.ledger.isSmart(w) && usd(notional) >= this.o.smartMinUsd) {
        const rate = e.good / e.scored;
        this.fire(
          'smart_money',
          a,
          f,
          `${short(w.address)} buys ${f.outcome.toUpperCase()} at ${cents(f.price)}¢ ($${usd(notional)}); ${e.good} of its ${e.scored} scored entries were good early entries (${pct(rate)}%)`,
          {
            scored_entries: e.scored,
            good_entries: e.good,
            bad_entries: e.bad,
            hit_rate: pct(rate),
            hit_rate_lower_bound: pct(wilsonLow(e.good, e.scored)),
            avg_move_cents: cents(e.moveSum / e.scored),
            realized_pnl_usd: usd(w.realized),
            amount_usd: usd(notional),
            min_entries: this.ledger.options.smartMinEntries,
            min_hit_rate_lower_bound: pct(this.ledger.options.smartMinHitRate),
          },
        );
      }
      if (this.ledger.isFade(w) && usd(notional) >= this.o.fadeMinUsd) {
        const rate = e.bad / e.scored;
        this.fire(
          'fade',
          a,
          f,
          `${short(w.address)} bets $${usd(notional)} on ${f.outcome.toUpperCase()} at ${cents(f.price)}¢; ${e.bad} of its ${e.scored} scored entries went against it (${pct(rate)}%): consider the other side`,
          {
            scored_entries: e.scored,
            bad_entries: e.bad,
            good_entries: e.good,
            miss_rate: pct(rate),
            miss_rate_lower_bound: pct(wilsonLow(e.bad, e.scored)),
            avg_move_cents: cents(e.moveSum / e.scored),
            realized_pnl_usd: usd(w.realized),
            amount_usd: usd(notional),
            min_amount_usd: this.o.fadeMinUsd,
            min_entries: this.ledger.options.fadeMinEntries,
            min_miss_rate_lower_bound: pct(this.ledger.options.fadeMinMissRate),
          },
        );
      }
    }
    if (a.taker?.exit) this.hook(a, a.taker);
    if (a.maker?.exit) this.hook(a, a.maker);
  }

  private hook(a: AppliedTrade, f: WalletFill): void {
    const x = f.exit!;
    if (x.implied && !this.o.hookImpliedExits) return;
    const startCost = x.avgCost * x.runStart;
    if (usd(startCost) < this.o.hookMinCostUsd) return;
    const gain = x.exitPrice - x.avgCost;
    if (gain < this.o.hookMinGainUnits) return;
    const fraction = x.runSold / x.runStart;
    // Fire when this fill takes the run across the threshold, not on every later chunk.
    if (fraction < this.o.hookMinFraction || (!x.implied && (x.runSold - x.shares) / x.runStart >= this.o.hookMinFraction)) return;
    const t = a.trade;
    const low = this.ledger.windowLow(t.venue, t.marketId, x.outcome, t.timestamp, this.o.hookWindowMs);
    if (low === undefined || x.exitPrice - low < this.o.hookMinSpikeUnits) return;
    const exitFill: WalletFill = { ...f, outcome: x.outcome, action: 'sell', price: x.exitPrice, size: x.shares };
    this.fire(
      'captain_hook',
      a,
      exitFill,
      `${short(f.wallet.address)} ${x.implied ? 'locks in' : 'sells'} ${pct(fraction)}% of a ${x.outcome.toUpperCase()} position bought at ${cents(x.avgCost)}¢ at ${cents(x.exitPrice)}¢, into a spike ${cents(x.exitPrice - low)}¢ above the ${Math.round(this.o.hookWindowMs / 60_000)}-minute low`,
      {
        avg_cost_cents: cents(x.avgCost),
        exit_price_cents: cents(x.exitPrice),
        gain_cents: cents(gain),
        window_low_cents: cents(low),
        spike_cents: cents(x.exitPrice - low),
        window_minutes: Math.round(this.o.hookWindowMs / 60_000),
        shares_sold: x.runSold,
        position_shares: x.runStart,
        fraction_sold: pct(fraction),
        position_cost_usd: usd(startCost),
        gain_usd: usd(gain * x.shares),
        implied_by_other_outcome: x.implied,
      },
    );
  }

  /** An entry the ledger scored after its horizon: insider is judged then. */
  onScored(s: ScoredEntry): void {
    const e = s.entry;
    if (s.verdict !== 'good' || s.move < this.o.insiderMinMoveUnits) return;
    const amount = usd(e.notional);
    if (amount < this.o.insiderMinUsd) return;
    const common = {
      entry_price_cents: cents(e.price),
      entry_yes_cents: cents(e.entryYes),
      yes_after_cents: cents(s.yesAfter),
      move_cents: cents(s.move),
      horizon_seconds: Math.round(this.ledger.horizonMs / 1000),
      entered_at: new Date(e.timestamp).toISOString(),
      amount_usd: amount,
      price_source: s.priceSource,
    };
    const base = {
      venue: e.venue,
      marketId: e.marketId,
      token: e.token ?? null,
      outcome: e.outcome,
      price: e.price,
      size: e.size,
      notional: e.notional,
      tradeId: e.tradeId,
      tradeTimestamp: e.timestamp,
    };
    if (e.wallet === undefined) {
      if (!this.anonymousVenues.has(e.venue) || amount < this.o.anonymousMinUsd) return;
      this.emit(
        'insider',
        { ...base, wallet: null, walletPnl: null },
        `an anonymous $${amount} ${e.outcome.toUpperCase()} buy at ${cents(e.price)}¢ preceded a ${cents(s.move)}¢ move within ${common.horizon_seconds} s`,
        {
          path: 'anonymous_trade',
          ...common,
          min_amount_usd: this.o.anonymousMinUsd,
        },
      );
      return;
    }
    const w = s.wallet;
    const prior = s.prior;
    if (!w || !prior) return;
    const priorRate = prior.scored > 0 ? prior.good / prior.scored : 0;
    const posUsd = usd(e.positionCost);
    let path: 'track_record' | 'fresh_wallet' | undefined;
    if (
      prior.scored >= this.o.insiderPriorMinEntries &&
      priorRate >= this.o.insiderPriorMinHitRate &&
      e.notional >= this.o.insiderMinSizeRatio * e.typicalNotional
    )
      path = 'track_record';
    else if (prior.scored <= this.o.insiderFreshMaxEntries && posUsd >= this.o.insiderFreshMinUsd && e.concentration >= this.o.insiderFreshMinShare)
      path = 'fresh_wallet';
    if (!path) return;
    const why =
      path === 'track_record'
        ? `its ${prior.good} of ${prior.scored} earlier entries were good (${pct(priorRate)}%) and this bet was ${Math.round((e.notional / Math.max(1, e.typicalNotional)) * 10) / 10}× its usual size`
        : `a fresh wallet with ${pct(e.concentration)}% of its exposure ($${posUsd}) in this one outcome`;
    this.emit(
      'insider',
      { ...base, wallet: w.address, walletPnl: w.realized },
      `${short(w.address)} bought ${e.outcome.toUpperCase()} at ${cents(e.price)}¢ ($${amount}) ${common.horizon_seconds} s before a ${cents(s.move)}¢ move; ${why}`,
      {
        path,
        ...common,
        position_usd: posUsd,
        concentration: pct(e.concentration),
        typical_entry_usd: usd(e.typicalNotional),
        prior_entries: prior.scored,
        prior_good_entries: prior.good,
        prior_hit_rate: pct(priorRate),
      },
    );
  }

  // ---- storage --------------------------------------------------------------------------------

  private fire(type: AlertType, a: AppliedTrade, f: WalletFill, reason: string, figures: Record<string, Figure>): void {
    const t = a.trade;
    this.emit(
      type,
      {
        venue: t.venue,
        marketId: t.marketId,
        token: f.position.token ?? (f.outcome === tokenOf(a) ? (t.instrument ?? null) : null),
        outcome: f.outcome,
        action: f.action,
        wallet: f.wallet.address,
        walletPnl: f.wallet.realized,
        price: f.price,
        size: f.size,
        notional: f.price * f.size,
        tradeId: t.tradeId,
        tradeTimestamp: t.timestamp,
      },
      reason,
      figures,
    );
  }

  private emit(
    type: AlertType,
    b: Omit<Alert, 'seq' | 'type' | 'createdAt' | 'reason' | 'figures' | 'action'> & { action?: 'buy' | 'sell' },
    reason: string,
    figures: Record<string, Figure>,
  ): void {
    const now = this.ledger.clock();
    const key = `${type}|${b.wallet ?? b.tradeId}|${marketKey(b.venue, b.marketId)}|${b.outcome}`;
    const last = this.cooldown.get(key);
    if (last !== undefined && now - last < this.o.cooldownMs) return;
    this.cooldown.delete(key);
    this.cooldown.set(key, now);
    if (this.cooldown.size > 50_000) this.pruneCooldown(now);
    this.lastCreated = Math.max(this.lastCreated, now);
    const alert: Alert = { seq: ++this.seq, type, ...b, action: b.action ?? 'buy', createdAt: this.lastCreated, reason, figures };
    this.counts[type]++;
    this.ring.push(alert);
    if (this.ring.length > 2 * this.o.memory) this.ring = this.ring.slice(-this.o.memory);
    if (this.db) {
      this.track(this.db.put(['a', alert.seq], alert));
      if (alert.seq - this.o.persistLimit > this.prunedTo + 1_000) this.prunePersisted(alert.seq - this.o.persistLimit);
    }
    this.alerts$.next(alert);
  }

  private pruneCooldown(now: number): void {
    for (const [k, t] of this.cooldown) {
      if (now - t < this.o.cooldownMs) break;
      this.cooldown.delete(k);
    }
  }

  private prunePersisted(upTo: number): void {
    const db = this.db!;
    for (let s = this.prunedTo + 1; s <= upTo; s++) this.track(db.remove(['a', s]));
    this.prunedTo = upTo;
  }

  private track(p: Promise<unknown>): void {
    this.writes.track(p, (e) => {
      if (this.writeErrors++ === 0) this.log?.error({ err: e.message }, 'alert write failed; serving from memory');
    });
  }

  // ---- reads ----------------------------------------------------------------------------------

  /** A page of alerts, newest first, and whether older matching alerts exist. */
  page(q: AlertQuery): { alerts: Alert[]; more: boolean } {
    const out: Alert[] = [];
    const match = (a: Alert): boolean => q.types.has(a.type) && (!q.venues || q.venues.has(a.venue));
    let oldestSeen = Number.MAX_SAFE_INTEGER;
    for (let i = this.ring.length - 1; i >= 0; i--) {
      const a = this.ring[i]!;
      oldestSeen = a.seq;
      if (q.before !== undefined && a.seq >= q.before) continue;
      if (q.since !== undefined && a.createdAt < q.since) return { alerts: out, more: false };
      if (!match(a)) continue;
      if (out.length === q.limit) return { alerts: out, more: true };
      out.push(a);
    }
    // Older than memory: continue from LMDB.
    if (!this.db || oldestSeen <= 1) return { alerts: out, more: false };
    const from = Math.min(oldestSeen, q.before ?? Number.MAX_SAFE_INTEGER) - 1;
    if (from < 1) return { alerts: out, more: false };
    for (const { value } of this.db.getRange({ start: ['a', from], end: ['a', 0], reverse: true })) {
      const a = value as Alert;
      if (q.since !== undefined && a.createdAt < q.since) break;
      if (!match(a)) continue;
      if (out.length === q.limit) return { alerts: out, more: true };
      out.push(a);
    }
    return { alerts: out, more: false };
  }

  /** Alerts in memory, oldest first. */
  recent(): readonly Alert[] {
    return this.ring;
  }

  /**
   * Stored alerts created in [from, to], oldest first, a page of at most `limit`: from the seq
   * `cursor` on (what the previous page answered), or from the first alert created at or after
   * `from` (a binary search over the seqs: creation times never go back along them). `cursor` is
   * undefined once the window has no more. Read from LMDB a page at a time (memory holds one page,
   * whatever the window), or from memory when there is no store. An alert whose write is still in
   * flight is not read (`flushed()` first to see them all).
   */
  stored(q: StoredQuery): { alerts: Alert[]; cursor: number | undefined } {
    const out: Alert[] = [];
    for (const a of this.ascending(q.cursor ?? this.firstCreatedAt(q.from), q.limit + 1)) {
      if (a.createdAt > q.to) break;
      if (out.length === q.limit) return { alerts: out, cursor: a.seq };
      out.push(a);
    }
    return { alerts: out, cursor: undefined };
  }

  /** The oldest alert still stored: a seq above 1 means older ones were pruned (the newest `persistLimit` are kept). */
  oldestStored(): Alert | undefined {
    return this.ascending(0, 1)[0];
  }

  /** Up to `limit` stored alerts from seq `start` on, oldest first. */
  private ascending(start: number, limit: number): Alert[] {
    if (!this.db) {
      // The ring holds consecutive seqs, newest last.
      const i = Math.max(0, start - (this.ring[0]?.seq ?? 0));
      return this.ring.slice(i, i + limit);
    }
    const out: Alert[] = [];
    for (const { value } of this.db.getRange({ start: ['a', start], end: A_END, limit })) out.push(value as Alert);
    return out;
  }

  /** The seq of the first stored alert created at or after `t` (past the newest when none is). */
  private firstCreatedAt(t: number): number {
    let lo = this.oldestStored()?.seq ?? this.seq + 1;
    let hi = this.seq + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const a = this.ascending(mid, 1)[0];
      if (a === undefined || a.createdAt >= t) hi = mid;
      else lo = a.seq + 1;
    }
    return lo;
  }
}

function tokenOf(a: AppliedTrade): Outcome | undefined {
  const t = a.trade;
  if (t.takerSide === undefined) return undefined;
  return t.side === 'sell' ? (t.takerSide === 'yes' ? 'no' : 'yes') : t.takerSide;
}
