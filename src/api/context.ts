import { realClock, type Clock } from '../core/clock.js';
import type { Config } from '../config/schema.js';
import type { Persistence } from '../persist/store.js';
import type { MarketRecord } from '../state/catalog.js';
import type { EngineState } from '../state/engine.js';
import { FragmentCache } from '../views/market.js';
import { VenueDirectory } from '../venues/directory.js';
import type { TradePages } from './trade-pages.js';
import type { HistorySource } from './as-of.js';

/** What the data endpoints read from: the state, the persisted history, the venue directory. */
export class ApiContext {
  readonly fragments = new FragmentCache();
  /** The /trades page cache, once the route is registered (its counters are read by tests). */
  tradePages: TradePages | undefined;
  /** The history `as_of` reads rebuild the past from (undefined: capture off, no `as_of`). */
  history: HistorySource | undefined = undefined;
  private sortedKeys: string[] = [];
  private sortedRecords: MarketRecord[] = [];
  private sortedAt = -1;
  private commitCount = 0;
  private countingCommits = false;

  constructor(
    readonly config: Config,
    readonly state: EngineState,
    readonly persistence: Persistence,
    /** The process's one directory (tests may let it be built here). */
    readonly venues: VenueDirectory = new VenueDirectory(config),
    /** The engine's clock: what "now" is for a request's default window (wall time in the service). */
    readonly clock: Clock = realClock,
  ) {}

  /**
   * LMDB commits of this process's store since the first call: what a reader sees there changes
   * only when this moves (this process is the store's only writer), so a reply built from LMDB
   * reads can be kept while it stands still. Counts asynchronous writes (`put`, `remove`), the only
   * kind the candle and trade logs get after start-up; a synchronous one (`putSync`,
   * `transactionSync`) fires no commit event.
   */
  commits(): number {
    if (!this.countingCommits) {
      this.countingCommits = true;
      this.persistence.root.on('aftercommit', () => this.commitCount++);
    }
    return this.commitCount;
  }

  /**
   * Every market key, sorted (venue label, then market id): the order of /markets pages and the
   * base of keyset cursors, stable while markets are added. Re-sorted only after a record was
   * added or replaced (the catalog never forgets a market, and updates its records in place).
   */
  marketKeys(): readonly string[] {
    this.sort();
    return this.sortedKeys;
  }

  /** The records of `marketKeys()`, index for index (no lookup by key on a page walk). */
  marketRecords(): readonly MarketRecord[] {
    this.sort();
    return this.sortedRecords;
  }

  private sort(): void {
    const catalog = this.state.catalog;
    if (this.sortedAt === catalog.inserts) return;
    const pairs = [...catalog.all()].map((m): [string, MarketRecord] => [`${m.venue}:${m.marketId}`, m]);
    pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    this.sortedKeys = pairs.map((p) => p[0]);
    this.sortedRecords = pairs.map((p) => p[1]);
    this.sortedAt = catalog.inserts;
  }
}

/** First index in sorted `keys` strictly after `key` (binary search). */
export function after(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Opaque cursors: base64url JSON, validated on the way back in. */
export function encodeCursor(v: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(v)).toString('base64url');
}

export function decodeCursor(s: string): Record<string, unknown> | undefined {
  if (!/^[A-Za-z0-9_-]{1,2000}$/.test(s)) return undefined;
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
