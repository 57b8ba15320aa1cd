import { realClock } from '../core/clock.js';
import type { Database } from 'lmdb';
import { Subject } from 'rxjs';
import type { Logger } from '../core/log.js';
import { PAYOUT, roundSize } from '../core/price.js';
import type { Trade, VenueLabel } from '../core/types.js';
import { WriteBarrier } from '../persist/barrier.js';
import type { Persistence } from '../persist/store.js';
import { marketKey, type CatalogChange, type MarketRecord } from '../state/catalog.js';
import type { EngineState } from '../state/engine.js';
import type { StoredTrade } from '../state/trades.js';
import { PriceRings } from './price-rings.js';

/**
 * The wallet ledger (issue 6): every wallet seen on a trade (maker and taker, lower-cased), its
 * positions per (venue, market, outcome), average cost, realized PnL (sales and settlement),
 * volume, first/last seen, markets traded; and a score of its entries: each taker buy is looked at
 * again `horizonMs` later against the market's price then, and counted good (moved our way by at
 * least `goodMoveUnits`), bad (moved against by as much) or neutral. The alert engine
 * (alerts.ts) and the venue_b wallet endpoints read from here.
 *
 * Cost per trade is O(1) amortized: map lookups, one queue push, a bounded array push. Scoring
 * pops the head of a FIFO queue (entries arrive in time order, so the queue is in due order; a
 * polled trade that arrives a few seconds late waits behind a later one, which only delays its
 * score). Wallet records are written to LMDB `db('wallets')` in batches off the request path
 * (dirty set flushed every `flushMs`) and loaded at start; pending scores are not persisted (they
 * would be scored against a price from after a restart gap, so they are dropped instead).
 *
 * Money is kept in units × shares (10_000 = one dollar), like prices.
 */

export type Outcome = 'yes' | 'no';

/** One wallet's holding of one outcome of one market. */
export interface PositionRecord {
  readonly venue: VenueLabel;
  readonly marketId: string;
  readonly outcome: Outcome;
  /** The outcome token (venue_b asset id), when trades named it. */
  token: string | undefined;
  /** Shares held now. */
  shares: number;
  /** Cost basis of the shares held (units × shares): average cost × shares. */
  cost: number;
  /** Realized PnL of this position (sales and settlement), units × shares. */
  realized: number;
  bought: number;
  sold: number;
  openedAt: number;
  updatedAt: number;
  /** Shares held when the current run of sales began (reset by a buy): what captain_hook measures against. */
  runStart: number;
  /** Shares sold in the current run of sales. */
  runSold: number;
  /** When the market settled (ms) and what one share paid (units). */
  settledAt?: number | undefined;
  payout?: number | undefined;
}

/** A wallet's scored entries (taker buys looked at again after the horizon). */
export interface EntryStats {
  /** Taker buys made. */
  made: number;
  /** Sum of their notional (units × shares), for the wallet's typical entry size. */
  notional: number;
  /** Entries scored so far (good + bad + neutral). */
  scored: number;
  good: number;
  bad: number;
  /** Sum of the favourable move of scored entries (units; negative = against). */
  moveSum: number;
}

/** Everything the ledger knows about one wallet. */
export interface WalletRecord {
  readonly address: string;
  /** Public profile name and pseudonym, the latest the venue showed on one of its trades. */
  name?: string | undefined;
  pseudonym?: string | undefined;
  firstSeen: number;
  lastSeen: number;
  trades: number;
  takerTrades: number;
  makerTrades: number;
  /** Notional traded, units × shares. */
  volume: number;
  /** Realized PnL over all positions, units × shares. */
  realized: number;
  /** Cost basis of every open position, units × shares (for concentration). */
  openCost: number;
  /** Market keys (`venue:marketId`) traded whose positions the ledger still holds. */
  readonly markets: Set<string>;
  /** Markets traded whose positions were evicted (markets_traded = markets.size + this). */
  marketsEvicted?: number;
  /** Positions keyed `venue:marketId:outcome`. */
  readonly positions: Map<string, PositionRecord>;
  readonly entries: EntryStats;
  /** Sequence numbers of the wallet's latest trades, oldest first (bounded, see `recentTrades`). */
  readonly recent: number[];
}

/** A trade's effect on one wallet. */
export interface WalletFill {
  readonly wallet: WalletRecord;
  readonly role: 'taker' | 'maker';
  readonly outcome: Outcome;
  readonly action: 'buy' | 'sell';
  /** Price of `outcome`, units. */
  readonly price: number;
  readonly size: number;
  /** The position after the fill. */
  readonly position: PositionRecord;
  /** Set when the fill took shares out of a position (a sale) or, for a buy of the other outcome, closed one economically. */
  readonly exit?: ExitInfo | undefined;
}

/** Shares leaving a position: an explicit sale, or (implied) a buy of the other outcome at 100 − p, which locks the same price in. */
export interface ExitInfo {
  readonly implied: boolean;
  readonly outcome: Outcome;
  readonly shares: number;
  /** Shares held before this fill. */
  readonly sharesBefore: number;
  /** Shares held when the current run of sales began. */
  readonly runStart: number;
  /** Shares sold in the current run, this fill included. */
  readonly runSold: number;
  /** Average cost (units per share) before the fill. */
  readonly avgCost: number;
  /** The exit price of `outcome` (units). */
  readonly exitPrice: number;
  /** Cost basis (units × shares) before the fill. */
  readonly costBefore: number;
}

/** A trade as the ledger applied it. */
export interface AppliedTrade {
  readonly trade: StoredTrade;
  /** Price × size of the traded instrument, units × shares. */
  readonly notional: number;
  readonly taker?: WalletFill | undefined;
  readonly maker?: WalletFill | undefined;
}

/** An entry waiting for its horizon. */
export interface PendingEntry {
  readonly due: number;
  readonly venue: VenueLabel;
  readonly marketId: string;
  readonly token: string | undefined;
  readonly outcome: Outcome;
  /** undefined for anonymous trades (venue_a): scored for size-based alerts only. */
  readonly wallet: string | undefined;
  /** YES price paid, units (the outcome's price mirrored for NO). */
  readonly entryYes: number;
  /** Price of the outcome bought, units. */
  readonly price: number;
  readonly size: number;
  readonly notional: number;
  readonly timestamp: number;
  readonly tradeId: string;
  readonly seq: number;
  /** The wallet's position in this outcome after the entry (cost, units × shares). */
  readonly positionCost: number;
  /** That position's share of the wallet's open cost basis (0..1). */
  readonly concentration: number;
  /** The wallet's average entry notional before this entry (units × shares), 0 when none. */
  readonly typicalNotional: number;
}

/** An entry after its horizon. */
export interface ScoredEntry {
  readonly entry: PendingEntry;
  /** The wallet after scoring; `prior` is its stats before this entry was counted. */
  readonly wallet: WalletRecord | undefined;
  readonly prior: Readonly<EntryStats> | undefined;
  readonly yesAfter: number;
  readonly priceSource: YesPrice['source'];
  /** Move in the entry's favour, units (negative = against). */
  readonly move: number;
  readonly verdict: 'good' | 'bad' | 'neutral';
}

/** A market's current YES price and where it came from. */
export interface YesPrice {
  readonly price: number;
  readonly source: 'settlement' | 'book_mid' | 'last_trade';
}

/**
 * The price a market is judged at: the settlement value once settled; else the mid of the book
 * when both sides exist and the spread is at most `maxSpread` (a wide spread's mid says little);
 * else the last trade.
 */
export function currentYesPrice(state: EngineState, venue: VenueLabel, marketId: string, maxSpread = 2_000): YesPrice | undefined {
  const m = state.catalog.get(venue, marketId);
  if (m && isSettled(m)) return { price: m.settlementValue!, source: 'settlement' };
  const q = state.quotes.get(venue, marketId);
  if (!q) return undefined;
  if (q.yesBid !== undefined && q.yesAsk !== undefined && q.yesAsk - q.yesBid <= maxSpread)
    return { price: Math.round((q.yesBid + q.yesAsk) / 2), source: 'book_mid' };
  if (q.lastPrice !== undefined) return { price: q.lastPrice, source: 'last_trade' };
  return undefined;
}

/** Settled with a known value (determined or finalized). */
export function isSettled(m: MarketRecord): boolean {
  return (m.status === 'determined' || m.status === 'finalized') && m.settlementValue !== undefined;
}

export interface LedgerOptions {
  /** How long after an entry it is scored (default 120 s). */
  readonly horizonMs?: number;
  /** A move of at least this many units in the entry's favour is a good entry, against it a bad one (default 400 = 4 cents). */
  readonly goodMoveUnits?: number;
  /** A wallet is "smart" with at least this many scored entries … (default 5) */
  readonly smartMinEntries?: number;
  /** … and a hit rate whose lower 95% bound (Wilson) is at least this (default 0.5). */
  readonly smartMinHitRate?: number;
  /** A wallet is "reliably wrong" with at least this many scored entries … (default 5) */
  readonly fadeMinEntries?: number;
  /** … and a miss rate whose lower 95% bound is at least this (default 0.5). */
  readonly fadeMinMissRate?: number;
  /** Trade sequence numbers kept per wallet for its activity (default 100). */
  readonly recentTrades?: number;
  /** Per-token one-minute volume kept in memory (default 48 h); rebuilt from persisted trades at start. */
  readonly volumeRetentionMs?: number;
  /** Smart-wallet entries kept for Smart Activity (default 24 h). */
  readonly smartFlowMs?: number;
  /**
   * Positions held in memory over all wallets (default 200,000; about 600 bytes each with its holder and market entries, ~120 MB): past it the least
   * recently traded position is evicted, its realized PnL staying in its wallet's totals.
   */
  readonly maxPositions?: number;
  /** Smart Activity is "warming" until this many entries were scored (default 200). */
  readonly warmMinScored?: number;
  /** Dirty wallet records are written this often (default 5 s; 0 = only on flush()/close()). */
  readonly flushMs?: number;
  /**
   * The per-token volume is written (with the sequence of the last trade in it) by the first flush
   * this long after the previous write, and at close (default 10 min): start-up loads it and replays
   * only the trades logged after it, so a crash costs at most this much replay.
   */
  readonly volumeSnapshotMs?: number;
  /** Due entries are scored this often (default 1 s; 0 = no timer, the caller drives advance()). */
  readonly advanceMs?: number;
  /** Venues whose per-token volume is materialized (default: the walletData venues). */
  readonly volumeVenues?: readonly VenueLabel[];
  readonly log?: Logger;
  readonly now?: () => number;
}

/** One minute of one token's volume. */
export interface VolumeBucket {
  shares: number;
  /** units × shares */
  notional: number;
  trades: number;
}

/** One outcome token's one-minute volume (insertion order = time order, mostly). */
export interface TokenVolume {
  readonly venue: VenueLabel;
  readonly marketId: string;
  readonly token: string;
  readonly outcome: Outcome;
  readonly buckets: Map<number, VolumeBucket>;
}

const MINUTE = 60_000;

/** A smart wallet's entry, for Smart Activity. */
export interface SmartFlow {
  readonly timestamp: number;
  readonly venue: VenueLabel;
  readonly marketId: string;
  readonly outcome: Outcome;
  readonly wallet: string;
  readonly notional: number;
  readonly size: number;
}

interface StoredWallet extends Omit<WalletRecord, 'markets' | 'positions'> {
  readonly markets: string[];
  readonly positions: PositionRecord[];
}

interface LedgerMeta {
  readonly scoredTotal: number;
  readonly firstTradeAt: number;
}

/** The per-token volume as written by flush/close, and the trade log position it covers. */
interface StoredVolume {
  /** Sequence (trade log key) of the newest trade applied: every trade up to it is in the buckets. */
  readonly seq: number;
  /** One row per token: venue, token, market, outcome, then [minute, shares, notional, trades] per bucket, flat. */
  readonly tokens: [VenueLabel, string, string, Outcome, number[]][];
}

const WALLET_START = ['w', ''];
const WALLET_END = ['w', '\uffff'];
const META_KEY = ['m', 'ledger'];
const VOLUME_KEY = ['m', 'volume'];

const opp = (o: Outcome): Outcome => (o === 'yes' ? 'no' : 'yes');
const posKey = (venue: VenueLabel, marketId: string, o: Outcome): string => `${venue}:${marketId}:${o}`;

/**
 * Which outcome the taker's position changed in, how, and at what price of that outcome:
 * a sell of a token is a sale of the token's outcome (the one the taker did not take); anything
 * else is a buy of `takerSide`. undefined when the trade has no direction.
 */
export function takerDirection(t: Trade): { outcome: Outcome; action: 'buy' | 'sell'; price: number } | undefined {
  if (t.takerSide === undefined) return undefined;
  if (t.side === 'sell') {
    const o = opp(t.takerSide);
    return { outcome: o, action: 'sell', price: t.price };
  }
  return { outcome: t.takerSide, action: 'buy', price: t.takerSide === 'yes' ? t.yesPrice : PAYOUT - t.yesPrice };
}

/** Positions the ledger holds when neither options nor config say (signals.wallets.maxPositions). */
export const DEFAULT_MAX_POSITIONS = 200_000;

/** The ledger; see the file comment. */
export class WalletLedger {
  readonly horizonMs: number;
  readonly goodMove: number;
  readonly applied$ = new Subject<AppliedTrade>();
  readonly scored$ = new Subject<ScoredEntry>();
  private readonly o: Required<Omit<LedgerOptions, 'log' | 'now' | 'volumeVenues'>>;
  private readonly now: () => number;
  private readonly log: Logger | undefined;
  private readonly db: Database | undefined;
  private readonly wallets = new Map<string, WalletRecord>();
  /** market key → wallets with a position record in it. */
  private readonly holders = new Map<string, Set<string>>();
  private readonly queue: PendingEntry[] = [];
  private qHead = 0;
  private readonly flow: SmartFlow[] = [];
  private flowHead = 0;
  /** Per-market minute lows and highs of the YES price (captain_hook's window low). */
  private readonly rings = new PriceRings();
  /** venue → token → the token's market, outcome and one-minute volume (walletData venues). */
  private readonly tokenIndex = new Map<VenueLabel, Map<string, TokenVolume>>();
  /** market key → its tokens' volumes (at most one per outcome). */
  private readonly marketTokens = new Map<string, TokenVolume[]>();
  private readonly volumeVenues: ReadonlySet<VenueLabel>;
  private readonly dirty = new Set<string>();
  /**
   * Every held position, least recently traded first (a fill moves its position to the end): what
   * `maxPositions` evicts from.
   */
  private readonly lru = new Map<PositionRecord, WalletRecord>();
  /** Positions evicted over the process's life. */
  evictedPositions = 0;
  /** Writes in flight, waited for by flush/close without a copy of them per wait (persist/barrier.ts). */
  private readonly writes = new WriteBarrier();
  private lastPrune = 0;
  /** Sequence of the newest trade in the volume (applied, or replayed at load). */
  private volumeSeq = 0;
  private volumeSavedAt = 0;
  /** Newest trade time per venue (ms): the volume materialization watermark. */
  readonly watermark = new Map<VenueLabel, number>();
  /** Entries scored over the ledger's life (persisted). */
  scoredTotal = 0;
  /** Entries dropped unscored (no price at the horizon). */
  unscored = 0;
  firstTradeAt = 0;
  applied = 0;
  writeErrors = 0;

  constructor(
    private readonly state: EngineState,
    private readonly persistence: Persistence | undefined,
    opts: LedgerOptions = {},
  ) {
    this.o = {
      horizonMs: opts.horizonMs ?? 120_000,
      goodMoveUnits: opts.goodMoveUnits ?? 400,
      smartMinEntries: opts.smartMinEntries ?? 5,
      smartMinHitRate: opts.smartMinHitRate ?? 0.5,
      fadeMinEntries: opts.fadeMinEntries ?? 5,
      fadeMinMissRate: opts.fadeMinMissRate ?? 0.5,
      recentTrades: opts.recentTrades ?? 100,
      volumeRetentionMs: opts.volumeRetentionMs ?? 48 * 3_600_000,
      smartFlowMs: opts.smartFlowMs ?? 24 * 3_600_000,
      maxPositions: opts.maxPositions ?? DEFAULT_MAX_POSITIONS,
      warmMinScored: opts.warmMinScored ?? 200,
      flushMs: opts.flushMs ?? 5_000,
      volumeSnapshotMs: opts.volumeSnapshotMs ?? 600_000,
      advanceMs: opts.advanceMs ?? 1_000,
    };
    this.horizonMs = this.o.horizonMs;
    this.goodMove = this.o.goodMoveUnits;
    this.now = opts.now ?? realClock.now;
    this.log = opts.log;
    this.db = persistence?.db('wallets');
    this.volumeVenues = new Set(opts.volumeVenues ?? state.venues.filter((v) => v.capabilities.walletData).map((v) => v.label));
  }

  get options(): Readonly<Required<Omit<LedgerOptions, 'log' | 'now' | 'volumeVenues'>>> {
    return this.o;
  }

  /** The venues of the state the ledger follows. */
  get venues(): EngineState['venues'] {
    return this.state.venues;
  }

  /** The ledger's clock (options.now: the engine's clock; wall time unless one is given). */
  clock(): number {
    return this.now();
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  /**
   * Loads wallet records from LMDB, settles positions of markets that settled while we were
   * down, and rebuilds the in-memory per-token volume from persisted trades within retention.
   */
  load(): { wallets: number; volumeTrades: number } {
    if (!this.db || !this.persistence) return { wallets: 0, volumeTrades: 0 };
    const meta = this.db.get(META_KEY) as LedgerMeta | undefined;
    if (meta) {
      this.scoredTotal = meta.scoredTotal;
      this.firstTradeAt = meta.firstTradeAt;
    }
    let wallets = 0;
    const held: [PositionRecord, WalletRecord][] = [];
    for (const { value } of this.db.getRange({ start: WALLET_START, end: WALLET_END })) {
      const w = fromStored(value as StoredWallet);
      this.wallets.set(w.address, w);
      for (const p of w.positions.values()) {
        this.addHolder(marketKey(p.venue, p.marketId), w.address);
        if (p.token && this.volumeVenues.has(p.venue)) this.tokenFor(p.venue, p.marketId, p.token, p.outcome);
        held.push([p, w]);
      }
      wallets++;
    }
    held.sort((a, b) => a[0].updatedAt - b[0].updatedAt);
    for (const [p, w] of held) this.lru.set(p, w);
    this.evict();
    for (const k of this.holders.keys()) {
      const m = this.state.catalog.byKey(k);
      if (m && isSettled(m)) this.settle(m);
    }
    return { wallets, volumeTrades: this.loadVolume(this.persistence.db('trades')) };
  }

  /**
   * The per-token volume at start: the stored buckets, then the trades logged after them; without
   * stored buckets (or when they cover trades the log does not have), every trade within retention.
   * Returns the trades replayed from the log.
   */
  private loadVolume(trades: Database): number {
    const cutoff = this.now() - this.o.volumeRetentionMs;
    let last: number | undefined;
    for (const key of trades.getKeys({ reverse: true, limit: 1 })) last = key as number;
    const stored = this.db!.get(VOLUME_KEY) as StoredVolume | undefined;
    let startSeq: number | undefined;
    if (stored && last !== undefined && stored.seq <= last) {
      this.restoreVolume(stored, cutoff);
      startSeq = stored.seq + 1;
    } else {
      // Trades are keyed by arrival sequence (polled venues deliver a little out of time order):
      // find where retention starts walking back, then replay forward so buckets go in in time order.
      const slack = 10 * MINUTE;
      for (const { key, value } of trades.getRange({ reverse: true })) {
        if ((value as StoredTrade).timestamp < cutoff - slack) break;
        startSeq = key as number;
      }
    }
    this.volumeSeq = last ?? 0;
    let replayed = 0;
    if (startSeq !== undefined)
      for (const { value } of trades.getRange({ start: startSeq })) {
        const t = value as StoredTrade;
        if (t.timestamp < cutoff || !this.volumeVenues.has(t.venue)) continue;
        this.addVolume(t);
        replayed++;
      }
    return replayed;
  }

  private restoreVolume(stored: StoredVolume, cutoff: number): void {
    for (const [venue, token, marketId, outcome, flat] of stored.tokens) {
      if (!this.volumeVenues.has(venue)) continue;
      let v: TokenVolume | undefined;
      for (let i = 0; i < flat.length; i += 4) {
        if (flat[i]! < cutoff - MINUTE) continue;
        v ??= this.tokenFor(venue, marketId, token, outcome);
        v.buckets.set(flat[i]!, { shares: flat[i + 1]!, notional: flat[i + 2]!, trades: flat[i + 3]! });
      }
    }
  }

  /** The per-token volume as stored, with the sequence of the newest trade in it. */
  private storedVolume(): StoredVolume {
    const tokens: StoredVolume['tokens'] = [];
    for (const byToken of this.tokenIndex.values())
      for (const [token, v] of byToken) {
        if (v.buckets.size === 0) continue;
        const flat: number[] = [];
        for (const [m, b] of v.buckets) flat.push(m, b.shares, b.notional, b.trades);
        tokens.push([v.venue, token, v.marketId, v.outcome, flat]);
      }
    return { seq: this.volumeSeq, tokens };
  }

  /** How often pipelines/signals.ts scores entries (advance) and writes dirty wallets (flush); 0 = never. */
  get intervals(): { readonly advanceMs: number; readonly flushMs: number } {
    return { advanceMs: this.o.advanceMs, flushMs: this.o.flushMs };
  }

  /** The ledger's clock (options.now, or wall time). */
  time(): number {
    return this.now();
  }

  /** Writes every dirty wallet record (one LMDB batch), and the volume when it is due; resolves when durable. */
  async flush(all = false): Promise<void> {
    const now = this.now();
    if (this.db && (all || now - this.volumeSavedAt >= this.o.volumeSnapshotMs)) {
      this.volumeSavedAt = now;
      this.track(this.db.put(VOLUME_KEY, this.storedVolume()));
    }
    // Without a store (a pipeline replay) there is nothing to write: the marks are dropped, not kept.
    if (!this.db) this.dirty.clear();
    else if (this.dirty.size > 0) {
      for (const a of this.dirty) {
        const w = this.wallets.get(a);
        if (w) this.track(this.db.put(['w', a], toStored(w)));
      }
      this.dirty.clear();
      this.track(this.db.put(META_KEY, { scoredTotal: this.scoredTotal, firstTradeAt: this.firstTradeAt } satisfies LedgerMeta));
    }
    await this.writes.settled();
  }

  /** Writes what is dirty; the pipeline that feeds the ledger has stopped by then. */
  async close(): Promise<void> {
    await this.flush(true);
  }

  private track(p: Promise<unknown>): void {
    this.writes.track(p, (e) => {
      if (this.writeErrors++ === 0) this.log?.error({ err: e.message }, 'wallet ledger write failed; serving from memory');
    });
  }

  // ---- ingest ---------------------------------------------------------------------------------

  /** Applies one trade (pipelines/signals.ts calls it for every new trade). */
  apply(t: StoredTrade): void {
    this.applied++;
    if (t.seq > this.volumeSeq) this.volumeSeq = t.seq;
    if (this.firstTradeAt === 0 || t.timestamp < this.firstTradeAt) this.firstTradeAt = t.timestamp;
    if (t.timestamp > (this.watermark.get(t.venue) ?? 0)) this.watermark.set(t.venue, t.timestamp);
    const mk = marketKey(t.venue, t.marketId);
    this.rings.observe(mk, t.yesPrice, t.timestamp);
    if (this.volumeVenues.has(t.venue)) this.addVolume(t);
    const d = takerDirection(t);
    const notional = t.price * t.size;
    let taker: WalletFill | undefined;
    let maker: WalletFill | undefined;
    if (t.taker) taker = this.fill(t.taker, t, mk, 'taker', d);
    if (t.maker) {
      const w = this.walletFor(t.maker.toLowerCase(), t.timestamp);
      let md: { outcome: Outcome; action: 'buy' | 'sell'; price: number } | undefined;
      if (d) {
        if (d.action === 'sell') md = { outcome: d.outcome, action: 'buy', price: d.price };
        else {
          // The maker sold what the taker bought if it held it; otherwise it took the other side.
          const held = w.positions.get(posKey(t.venue, t.marketId, d.outcome));
          md =
            held && held.shares > 0
              ? { outcome: d.outcome, action: 'sell', price: d.price }
              : { outcome: opp(d.outcome), action: 'buy', price: PAYOUT - d.price };
        }
      }
      maker = this.fill(t.maker, t, mk, 'maker', md);
    }
    // A taker whose fill was refused (a late report from a settled market) has no entry to score.
    if (d && d.action === 'buy' && (t.taker === undefined || taker !== undefined)) {
      const w = taker?.wallet;
      const posCost = taker ? taker.position.cost : d.price * t.size;
      const typical = w && w.entries.made > 1 ? (w.entries.notional - d.price * t.size) / (w.entries.made - 1) : 0;
      this.queue.push({
        due: t.timestamp + this.o.horizonMs,
        venue: t.venue,
        marketId: t.marketId,
        token: t.instrument,
        outcome: d.outcome,
        wallet: w?.address,
        entryYes: d.outcome === 'yes' ? d.price : PAYOUT - d.price,
        price: d.price,
        size: t.size,
        notional: d.price * t.size,
        timestamp: t.timestamp,
        tradeId: t.tradeId,
        seq: t.seq,
        positionCost: posCost,
        concentration: w && w.openCost > 0 ? Math.min(1, posCost / w.openCost) : 1,
        typicalNotional: typical,
      });
      if (w && this.isSmart(w)) {
        this.flow.push({
          timestamp: t.timestamp,
          venue: t.venue,
          marketId: t.marketId,
          outcome: d.outcome,
          wallet: w.address,
          notional: d.price * t.size,
          size: t.size,
        });
        this.pruneFlow(t.timestamp);
      }
    }
    this.applied$.next({ trade: t, notional, taker, maker });
  }

  private walletFor(address: string, ts: number): WalletRecord {
    let w = this.wallets.get(address);
    if (!w) {
      w = {
        address,
        firstSeen: ts,
        lastSeen: ts,
        trades: 0,
        takerTrades: 0,
        makerTrades: 0,
        volume: 0,
        realized: 0,
        openCost: 0,
        markets: new Set(),
        positions: new Map(),
        entries: { made: 0, notional: 0, scored: 0, good: 0, bad: 0, moveSum: 0 },
        recent: [],
      };
      this.wallets.set(address, w);
    }
    return w;
  }

  private fill(
    raw: string,
    t: StoredTrade,
    mk: string,
    role: 'taker' | 'maker',
    d: { outcome: Outcome; action: 'buy' | 'sell'; price: number } | undefined,
  ): WalletFill | undefined {
    const address = raw.toLowerCase();
    const w = this.walletFor(address, t.timestamp);
    w.trades++;
    if (role === 'taker') {
      w.takerTrades++;
      if (t.takerName) w.name = t.takerName;
      if (t.takerPseudonym) w.pseudonym = t.takerPseudonym;
    } else w.makerTrades++;
    w.volume += t.price * t.size;
    if (t.timestamp < w.firstSeen) w.firstSeen = t.timestamp;
    if (t.timestamp > w.lastSeen) w.lastSeen = t.timestamp;
    w.markets.add(mk);
    w.recent.push(t.seq);
    if (w.recent.length > this.o.recentTrades) w.recent.shift();
    this.dirty.add(address);
    if (!d) return undefined;
    const m = this.state.catalog.byKey(mk);
    if (m && isSettled(m)) return undefined; // late report of a trade in a settled market: its positions are closed
    const pos = this.position(w, t.venue, t.marketId, d.outcome, t.timestamp);
    if (t.instrument && d.outcome === tokenOutcome(t)) pos.token = t.instrument;
    pos.updatedAt = t.timestamp;
    this.lru.delete(pos);
    this.lru.set(pos, w);
    this.evict();
    let exit: ExitInfo | undefined;
    if (d.action === 'buy') {
      const other = w.positions.get(posKey(t.venue, t.marketId, opp(d.outcome)));
      if (other && other.shares > 0) {
        const shares = Math.min(t.size, other.shares);
        exit = {
          implied: true,
          outcome: other.outcome,
          shares,
          sharesBefore: other.shares,
          runStart: other.shares,
          runSold: shares,
          avgCost: other.cost / other.shares,
          exitPrice: PAYOUT - d.price,
          costBefore: other.cost,
        };
      }
      pos.shares = roundSize(pos.shares + t.size);
      pos.cost += d.price * t.size;
      pos.bought = roundSize(pos.bought + t.size);
      pos.runStart = 0;
      pos.runSold = 0;
      w.openCost += d.price * t.size;
      if (role === 'taker') {
        w.entries.made++;
        w.entries.notional += d.price * t.size;
      }
    } else {
      pos.sold = roundSize(pos.sold + t.size);
      const sold = Math.min(t.size, pos.shares);
      if (sold > 0) {
        if (pos.runSold === 0) pos.runStart = pos.shares;
        const avg = pos.cost / pos.shares;
        const pnl = (d.price - avg) * sold;
        const before = pos.shares;
        const costBefore = pos.cost;
        pos.realized += pnl;
        w.realized += pnl;
        pos.shares = roundSize(pos.shares - sold);
        pos.runSold = roundSize(pos.runSold + sold);
        const costOut = pos.shares <= 0 ? pos.cost : avg * sold;
        pos.cost -= costOut;
        w.openCost = Math.max(0, w.openCost - costOut);
        if (pos.shares <= 0) {
          pos.shares = 0;
          pos.cost = 0;
        }
        exit = {
          implied: false,
          outcome: d.outcome,
          shares: sold,
          sharesBefore: before,
          runStart: pos.runStart,
          runSold: pos.runSold,
          avgCost: avg,
          exitPrice: d.price,
          costBefore,
        };
      }
      // A sale of more than we saw bought: the rest was bought before we were watching; nothing to realize.
    }
    return { wallet: w, role, outcome: d.outcome, action: d.action, price: d.price, size: t.size, position: pos, exit };
  }

  private position(w: WalletRecord, venue: VenueLabel, marketId: string, outcome: Outcome, ts: number): PositionRecord {
    const k = posKey(venue, marketId, outcome);
    let p = w.positions.get(k);
    if (!p) {
      p = {
        venue,
        marketId,
        outcome,
        token: undefined,
        shares: 0,
        cost: 0,
        realized: 0,
        bought: 0,
        sold: 0,
        openedAt: ts,
        updatedAt: ts,
        runStart: 0,
        runSold: 0,
      };
      w.positions.set(k, p);
      this.addHolder(marketKey(venue, marketId), w.address);
    }
    return p;
  }

  /**
   * Evicts the least recently traded positions past `maxPositions` (a fill moved its own position
   * to the end first, so it is never the one evicted): an open one takes its cost basis out of the wallet's open cost; the wallet
   * leaves the market's holders once it holds neither outcome there, and the market moves to
   * its evicted-markets count. The wallet is marked dirty so LMDB forgets the position too.
   */
  private evict(): void {
    while (this.lru.size > this.o.maxPositions) {
      const [p, w] = this.lru.entries().next().value as [PositionRecord, WalletRecord];
      this.lru.delete(p);
      w.positions.delete(posKey(p.venue, p.marketId, p.outcome));
      if (p.shares > 0) w.openCost = Math.max(0, w.openCost - p.cost);
      if (!w.positions.has(posKey(p.venue, p.marketId, opp(p.outcome)))) {
        const mk = marketKey(p.venue, p.marketId);
        const hs = this.holders.get(mk);
        if (hs) {
          hs.delete(w.address);
          if (hs.size === 0) this.holders.delete(mk);
        }
        if (w.markets.delete(mk)) w.marketsEvicted = (w.marketsEvicted ?? 0) + 1;
      }
      this.dirty.add(w.address);
      this.evictedPositions++;
    }
  }

  /** Positions the ledger holds over all wallets. */
  get positionCount(): number {
    return this.lru.size;
  }

  private addHolder(mk: string, address: string): void {
    let s = this.holders.get(mk);
    if (!s) this.holders.set(mk, (s = new Set()));
    s.add(address);
  }

  // ---- scoring --------------------------------------------------------------------------------

  /** Scores every entry whose horizon has passed by `now` (the timer calls this every second). */
  advance(now: number): number {
    let n = 0;
    while (this.qHead < this.queue.length && this.queue[this.qHead]!.due <= now) {
      const e = this.queue[this.qHead]!;
      this.queue[this.qHead++] = undefined as unknown as PendingEntry;
      this.score(e);
      n++;
    }
    if (this.qHead > 1024 && this.qHead * 2 > this.queue.length) {
      this.queue.splice(0, this.qHead);
      this.qHead = 0;
    }
    if (now - this.lastPrune > MINUTE) {
      this.lastPrune = now;
      this.pruneVolume(now - this.o.volumeRetentionMs);
      this.pruneFlow(now);
      this.rings.prune(now);
    }
    return n;
  }

  /** Entries waiting for their horizon. */
  get pendingEntries(): number {
    return this.queue.length - this.qHead;
  }

  private score(e: PendingEntry): void {
    const p = currentYesPrice(this.state, e.venue, e.marketId);
    if (!p) {
      this.unscored++;
      return;
    }
    const move = (p.price - e.entryYes) * (e.outcome === 'yes' ? 1 : -1);
    const verdict = move >= this.o.goodMoveUnits ? 'good' : move <= -this.o.goodMoveUnits ? 'bad' : 'neutral';
    this.scoredTotal++;
    let w: WalletRecord | undefined;
    let prior: EntryStats | undefined;
    if (e.wallet !== undefined) {
      w = this.wallets.get(e.wallet);
      if (w) {
        prior = { ...w.entries };
        w.entries.scored++;
        if (verdict === 'good') w.entries.good++;
        else if (verdict === 'bad') w.entries.bad++;
        w.entries.moveSum += move;
        this.dirty.add(w.address);
      }
    }
    this.scored$.next({ entry: e, wallet: w, prior, yesAfter: p.price, priceSource: p.source, move, verdict });
  }

  /**
   * A wallet with a record of good early entries: at least `smartMinEntries` scored and the lower
   * one-sided 95% confidence bound of its hit rate at least `smartMinHitRate`. The bound, not the
   * raw rate, is what keeps a lucky start (3 good of 5) from passing as skill.
   */
  isSmart(w: WalletRecord, stats: Readonly<EntryStats> = w.entries): boolean {
    return stats.scored >= this.o.smartMinEntries && wilsonLow(stats.good, stats.scored) >= this.o.smartMinHitRate;
  }

  /** A wallet that is reliably wrong: the same test on its bad entries (`fadeMinEntries`, `fadeMinMissRate`). */
  isFade(w: WalletRecord, stats: Readonly<EntryStats> = w.entries): boolean {
    return stats.scored >= this.o.fadeMinEntries && wilsonLow(stats.bad, stats.scored) >= this.o.fadeMinMissRate;
  }

  /** Smart Activity has no ranking until enough entries were scored to tell smart wallets apart. */
  warming(): boolean {
    return this.scoredTotal < this.o.warmMinScored;
  }

  // ---- settlement -----------------------------------------------------------------------------

  /** A market's record changed: settlements realize positions. */
  onCatalog(c: CatalogChange): void {
    if (isSettled(c.market)) this.settle(c.market);
  }

  /** Pays out every open position of a settled market (realized PnL = payout − cost). */
  settle(m: MarketRecord): number {
    const hs = this.holders.get(marketKey(m.venue, m.marketId));
    if (!hs || m.settlementValue === undefined) return 0;
    const yesPays = Math.min(PAYOUT, Math.max(0, m.settlementValue));
    let n = 0;
    for (const a of hs) {
      const w = this.wallets.get(a);
      if (!w) continue;
      for (const o of ['yes', 'no'] as const) {
        const p = w.positions.get(posKey(m.venue, m.marketId, o));
        if (!p || p.settledAt !== undefined) continue;
        const payout = o === 'yes' ? yesPays : PAYOUT - yesPays;
        const pnl = p.shares * payout - p.cost;
        p.realized += pnl;
        w.realized += pnl;
        w.openCost = Math.max(0, w.openCost - p.cost);
        p.shares = 0;
        p.cost = 0;
        p.settledAt = m.updatedAt;
        p.payout = payout;
        this.dirty.add(a);
        n++;
      }
    }
    return n;
  }

  // ---- price rings (captain_hook spikes) ------------------------------------------------------

  /** Markets holding a price ring (a trade in the last 64 minutes, up to the next prune). */
  get priceRings(): number {
    return this.rings.size;
  }

  /**
   * The lowest price of `outcome` seen in trades of the market within `windowMs` before `now`
   * (at most 64 minutes), units; undefined when none.
   */
  windowLow(venue: VenueLabel, marketId: string, outcome: Outcome, now: number, windowMs: number): number | undefined {
    return this.rings.windowLow(marketKey(venue, marketId), outcome, now, windowMs);
  }

  // ---- volume ---------------------------------------------------------------------------------

  private tokenFor(venue: VenueLabel, marketId: string, token: string, outcome: Outcome): TokenVolume {
    let byToken = this.tokenIndex.get(venue);
    if (!byToken) this.tokenIndex.set(venue, (byToken = new Map()));
    let v = byToken.get(token);
    if (!v) {
      v = { venue, marketId, token, outcome, buckets: new Map() };
      byToken.set(token, v);
      const mk = marketKey(venue, marketId);
      const list = this.marketTokens.get(mk);
      if (list) list.push(v);
      else this.marketTokens.set(mk, [v]);
    }
    return v;
  }

  private addVolume(t: StoredTrade): void {
    const o = tokenOutcome(t) ?? 'yes';
    const v = this.tokenFor(t.venue, t.marketId, t.instrument ?? `${t.marketId}#${o}`, o);
    const minute = t.timestamp - (t.timestamp % MINUTE);
    let b = v.buckets.get(minute);
    if (!b) v.buckets.set(minute, (b = { shares: 0, notional: 0, trades: 0 }));
    b.shares = roundSize(b.shares + t.size);
    b.notional += t.price * t.size;
    b.trades++;
  }

  private pruneVolume(cutoff: number): void {
    for (const byToken of this.tokenIndex.values())
      for (const v of byToken.values()) {
        for (const m of v.buckets.keys()) {
          if (m >= cutoff - MINUTE) break;
          v.buckets.delete(m);
        }
      }
  }

  /** The per-token volume of a token, if any trade of it was seen within retention. */
  tokenVolume(venue: VenueLabel, token: string): TokenVolume | undefined {
    return this.tokenIndex.get(venue)?.get(token);
  }

  /** Per-token volumes of a market's outcome tokens. */
  marketVolumes(venue: VenueLabel, marketId: string): TokenVolume[] {
    return [...(this.marketTokens.get(marketKey(venue, marketId)) ?? [])];
  }

  /** The oldest time the in-memory volume covers. */
  volumeFrom(now: number): number {
    return Math.max(now - this.o.volumeRetentionMs, 0);
  }

  // ---- smart flow -----------------------------------------------------------------------------

  private pruneFlow(now: number): void {
    const cutoff = now - this.o.smartFlowMs;
    while (this.flowHead < this.flow.length && this.flow[this.flowHead]!.timestamp < cutoff) this.flowHead++;
    if (this.flowHead > 1024 && this.flowHead * 2 > this.flow.length) {
      this.flow.splice(0, this.flowHead);
      this.flowHead = 0;
    }
  }

  /** Smart-wallet entries since `from` (ms), oldest first. */
  *smartFlow(from: number): Generator<SmartFlow> {
    for (let i = this.flowHead; i < this.flow.length; i++) if (this.flow[i]!.timestamp >= from) yield this.flow[i]!;
  }

  // ---- reads ----------------------------------------------------------------------------------

  wallet(address: string): WalletRecord | undefined {
    return this.wallets.get(address.toLowerCase());
  }

  allWallets(): IterableIterator<WalletRecord> {
    return this.wallets.values();
  }

  get walletCount(): number {
    return this.wallets.size;
  }

  /** Wallets holding (or having held) a position in a market. */
  holdersOf(venue: VenueLabel, marketId: string): WalletRecord[] {
    const s = this.holders.get(marketKey(venue, marketId));
    if (!s) return [];
    const out: WalletRecord[] = [];
    for (const a of s) {
      const w = this.wallets.get(a);
      if (w) out.push(w);
    }
    return out;
  }

  /** A wallet's position in one outcome of a market. */
  positionOf(w: WalletRecord, venue: VenueLabel, marketId: string, outcome: Outcome): PositionRecord | undefined {
    return w.positions.get(posKey(venue, marketId, outcome));
  }

  /** Market and outcome of a token seen in trades (walletData venues). */
  token(venue: VenueLabel, token: string): { marketId: string; outcome: Outcome } | undefined {
    return this.tokenIndex.get(venue)?.get(token);
  }
}

/**
 * Lower bound of the Wilson score interval of k successes in n (one-sided 95%, z = 1.645): the
 * rate we can be 95% sure a wallet beats, given how few entries it has.
 */
export function wilsonLow(k: number, n: number, z = 1.645): number {
  if (n <= 0) return 0;
  const p = k / n;
  const z2 = z * z;
  return (p + z2 / (2 * n) - z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
}

/** Which outcome a trade's instrument is: the bought outcome for a buy, the other one for a sell. */
function tokenOutcome(t: Trade): Outcome | undefined {
  if (t.takerSide === undefined) return undefined;
  return t.side === 'sell' ? opp(t.takerSide) : t.takerSide;
}

function toStored(w: WalletRecord): StoredWallet {
  return { ...w, entries: { ...w.entries }, recent: [...w.recent], markets: [...w.markets], positions: [...w.positions.values()].map((p) => ({ ...p })) };
}

function fromStored(s: StoredWallet): WalletRecord {
  const positions = new Map<string, PositionRecord>();
  for (const p of s.positions) positions.set(posKey(p.venue, p.marketId, p.outcome), { ...p });
  return { ...s, entries: { ...s.entries }, recent: [...s.recent], markets: new Set(s.markets), positions };
}
