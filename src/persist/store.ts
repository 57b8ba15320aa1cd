import { realClock, type Clock } from '../core/clock.js';
import {
  accessSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { join, resolve } from 'node:path';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import type { Logger } from '../core/log.js';
import { WriteBarrier } from './barrier.js';
import { DiskGuard, type GuardOptions } from './guard.js';
import { acquireOpening, alive, HolderRegistration, type OpeningLock } from './opening.js';
import type { Level } from '../core/types.js';
import type { Candle } from '../state/candles.js';
import type { MarketRecord } from '../state/catalog.js';
import { setStoreId, storedMarket, storeIdOf } from '../state/catalog.js';
import type { StateBook } from '../state/books.js';
import type { EngineState } from '../state/engine.js';
import type { QuoteRecord } from '../state/quotes.js';
import type { StoredTrade } from '../state/trades.js';
import { OpenRollups, RollupSlots } from './rollups.js';
import { checkInChild, damageLines, healthy, type CheckScope } from './check.js';
import {
  afterId,
  BINARY_KEYS,
  candleId,
  FIRST_KEY,
  ID_BASE,
  ID_MAX,
  idCandleKey,
  idCandleRange,
  idKey,
  readIdAt,
  readIdCandleKey,
  readIdKey,
  REKEYED,
  STRUCTURES_KEY,
} from './keys.js';
import { upgradeStore } from './migrate.js';
import { otherHolders } from './opening.js';

/** A problem with DATA_DIR: the message says which file and what to do. */
export class PersistenceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PersistenceError';
  }
}

/**
 * The store's format. 2: catalog values are LZ4-compressed (lmdb-js `compression`) and candle values
 * leave out what their key holds (a format-1 candle, a whole record, is still taken as it is). 3: the
 * market-keyed databases (catalog, quotes, books, candles at three resolutions) are keyed by the
 * binary codes of keys.ts instead of `venue:id` strings and ordered-binary arrays. 4: the same
 * databases keyed by a dense u32 id per market (catalog, quotes, candles) and per instrument (books),
 * with no table (keys.ts; the records that carry the ids: `load`). A store of formats 1 to 3 is
 * upgraded to format 4 on its first writable open (migrate.ts); a read-only open of one can copy it
 * (`crossbook data backup`) but not read its records.
 */
export const FORMAT = 4;
const READABLE_FORMATS: readonly number[] = [1, 2, 3, 4];
/** The databases keyed by market ids (the next id is one past the largest key of them all). */
const MARKET_ID_DBS = ['catalog', 'quotes', 'candles', 'candles1h', 'candles1d'] as const;
/**
 * The catalog's records are mostly text (titles, rules, outcome names): compressed they take about
 * two thirds of the pages, and every page the writer touches stays mapped, in the process's RSS.
 * Its other databases hold short numeric records that LZ4 does not shrink.
 */
const CATALOG_COMPRESSION = { threshold: 128 } as const;
/** Minutes that closed more than this long ago are final: their candles and rollups no longer change. */
export const HISTORY_STABLE_MS = 3 * 60_000;
export const MARKER = 'crossbook.json';
/** Records per commit in a snapshot (a few hundred KB of books at most, well inside the guard's reserve). */
const SNAPSHOT_CHUNK = 256;
/** Removals per commit when pruning minutes (one leaf page each at worst: ~2 MB, inside the reserve). */
const PRUNE_CHUNK = 512;
/** Markets sought between two yields of the event loop when pruning. */
const PRUNE_SEEKS = 64;
export const DB_FILE = 'crossbook.mdb';

interface Marker {
  readonly format: number;
  readonly createdAt: string;
}

interface StoredBook {
  readonly venue: string;
  readonly instrument: string;
  readonly bids: Level[];
  readonly asks: Level[];
  readonly ts: number;
}

/** The LMDB sub-databases (one environment, one file), in the order they are opened and checked. */
export const DB_NAMES = [
  'meta',
  'catalog',
  'quotes',
  'books',
  'candles',
  'candles1h',
  'candles1d',
  'trades',
  'tradesByTime',
  'keys',
  'quota',
  'groups',
  'matching',
  'wallets',
  'opportunities',
  'webhooks',
  'audit',
] as const;

/** Names of the LMDB sub-databases. */
export type DbName = (typeof DB_NAMES)[number];

/** How a sub-database opens. */
export interface DbOptions {
  readonly name: DbName;
  readonly encoding: 'msgpack';
  readonly keyEncoder?: typeof BINARY_KEYS;
  readonly sharedStructuresKey: symbol | Buffer;
  readonly compression?: { threshold: number };
}

/**
 * How every sub-database of a store of `format` is opened (by the service, `crossbook data check`,
 * `repair` and the upgrade alike). Format 3 keys the market-keyed databases with raw bytes
 * (keys.ts); their shared structures then live under the byte key 0, since a symbol is no binary key.
 */
export function dbOptions(name: DbName, format = FORMAT): DbOptions {
  const compression = name === 'catalog' ? { compression: CATALOG_COMPRESSION } : {};
  if (format >= 3 && REKEYED.has(name)) return { name, encoding: 'msgpack', keyEncoder: BINARY_KEYS, sharedStructuresKey: STRUCTURES_KEY, ...compression };
  return { name, encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures'), ...compression };
}

/**
 * LMDB persistence under DATA_DIR: snapshots of the catalog, quotes and books (only what changed
 * since the last snapshot, periodically and at shutdown) and append logs of closed one-minute
 * candles and trades, values encoded with msgpackr (lmdb-js's msgpack encoding, with shared
 * structures so repeated record shapes are stored once).
 *
 * Durability point: a put is durable once its promise resolves (lmdb-js commits and fsyncs the
 * batch); `flushed()` awaits every pending write.
 */
export class Persistence {
  readonly dir: string;
  readonly root: RootDatabase;
  private readonly dbs = new Map<DbName, Database>();
  private readonly dirty = { catalog: new DirtyKeys(), quotes: new DirtyKeys(), books: new DirtyKeys() };
  /** Every write issued (puts, removals): what `flushed()` and the chunked writers wait for. */
  private readonly writes = new WriteBarrier();
  /**
   * Bumped whenever a one-minute candle older than HISTORY_STABLE_MS is written (backfills, clock
   * skew): history older than that horizon is otherwise immutable, which is what lets
   * `/prices/history` cache its serialized closed buckets under a key that includes this epoch.
   */
  historyEpoch = 0;
  /**
   * Writes to the trade log and its time index (appends, prunes) that have settled, committed or
   * failed. What a reader of either sees changes only when this moves (this process is the store's
   * only writer; `indexTrades` runs before anything reads), so a reader that keeps what it read
   * needs to read again only then: /trades did so after every commit of any log (quota counters,
   * candles, snapshots), half of them without a trade.
   */
  tradeLogSettled = 0;
  /** Write failures (full disk, read-only dir): counted and logged once; the service keeps serving. */
  writeErrors = 0;
  lastWriteError: string | undefined;
  /** Set when DATA_DIR could not be written at start and this store is a temporary copy (see openPersistence). */
  fallback: { readonly dataDir: string; readonly reason: string } | undefined;
  /**
   * The write gate (guard.ts): LMDB only writes into space already allocated, and nothing is
   * written while the disk is (nearly) full. Undefined for a read-only store.
   */
  readonly guard: DiskGuard | undefined;
  /** This process's registration as a writer of the file, which other processes' opens wait for (opening.ts). */
  private holder: HolderRegistration | undefined;
  /** Set when writing resumed after a pause: the next snapshot writes everything. */
  private resync = false;
  /** The engine's clock (which minutes are still settling into their rollups). */
  private readonly clock: Clock;
  /**
   * Format 4's ids (keys.ts). The next market and instrument ids: one past the largest key of the
   * databases keyed by them (sought at open), then counted up, never given twice.
   */
  private nextMarket = ID_BASE;
  private nextInstrument = ID_BASE;
  /**
   * venue → market → id of the markets the catalog does not hold (a quote or candle of a market not
   * listed, or not yet): their quote records carry the ids in the store. Few or none: a listed
   * market's id lives on its catalog record (`storeIdOf`), an instrument's on its book.
   */
  private readonly loose = new Map<string, Map<string, number>>();
  /** The state whose records hold the ids (the one `load`, `snapshot` or `flushCatalog` was last given). */
  private state: EngineState | undefined;

  constructor(
    dataDir: string,
    private readonly log?: Logger,
    opts: { readonly readOnly?: boolean; readonly guard?: GuardOptions; readonly clock?: Clock; readonly openWaitMs?: number } = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.dir = resolve(dataDir);
    const marker = join(this.dir, MARKER);
    const file = join(this.dir, DB_FILE);
    const hasMarker = existsSync(marker);
    const hasDb = existsSync(file);
    if (existsSync(this.dir) && !statSync(this.dir).isDirectory()) throw new PersistenceError(`DATA_DIR ${this.dir} exists and is not a directory`);
    if (hasMarker && !hasDb)
      throw new PersistenceError(
        `DATA_DIR ${this.dir}: ${DB_FILE} is missing but ${MARKER} says data was stored here; restore the file or point DATA_DIR at an empty directory`,
      );
    if (!hasMarker && hasDb)
      throw new PersistenceError(
        `DATA_DIR ${this.dir}: ${DB_FILE} exists without ${MARKER}; refusing to guess whose data this is (move it away or restore ${MARKER})`,
      );
    /** A marker of an older format, whose store is upgraded before it opens. */
    let upgrade: Marker | undefined;
    /** The format the databases are opened in: an older one only read-only. */
    let format = FORMAT;
    if (hasMarker) {
      let m: Marker;
      try {
        m = JSON.parse(readFileSync(marker, 'utf8')) as Marker;
      } catch (e) {
        throw new PersistenceError(`DATA_DIR ${this.dir}: ${MARKER} is corrupt (${(e as Error).message})`);
      }
      if (!READABLE_FORMATS.includes(m.format))
        throw new PersistenceError(`DATA_DIR ${this.dir}: data format ${m.format} is not supported by this version (reads ${READABLE_FORMATS.join(', ')})`);
      if (m.format !== FORMAT && !opts.readOnly) upgrade = m;
      else format = m.format;
    } else if (!opts.readOnly) {
      try {
        mkdirSync(this.dir, { recursive: true });
        accessSync(this.dir, constants.W_OK);
      } catch (e) {
        throw new PersistenceError(`DATA_DIR ${this.dir} cannot be created or written: ${(e as Error).message}`);
      }
    }
    if (hasDb) checkLmdbHeader(file);
    // No other process may commit while LMDB opens the file (opening.ts says why): the lock is held
    // until this store's own first writes are done.
    let opening: OpeningLock;
    try {
      opening = acquireOpening(file, opts.openWaitMs);
    } catch (e) {
      throw new PersistenceError(`DATA_DIR ${this.dir}: ${(e as Error).message}`);
    }
    try {
      if (upgrade) this.upgrade(file, marker, upgrade);
      try {
        this.root = open({ path: file, noSubdir: true, maxDbs: 32, mapSize: 8 * 1024 ** 3, readOnly: opts.readOnly ?? false });
        const guard = opts.readOnly ? undefined : new DiskGuard(file, this.root, this.guardEvents(), opts.guard);
        this.guard = guard;
        for (const name of DB_NAMES) {
          const db = this.root.openDB(dbOptions(name, format));
          this.dbs.set(name, guard ? guard.wrap(db) : db);
        }
        // Reading a key forces LMDB to validate the meta pages: a corrupt file fails here, loudly.
        this.db('meta').get('format');
      } catch (e) {
        throw new PersistenceError(`DATA_DIR ${this.dir}: cannot open ${DB_FILE}: ${(e as Error).message}`);
      }
      openStores.add(this);
      guardLmdbRejections();
      this.guard?.start();
      if (this.guard) {
        // From here on this process answers other processes' opens (opening.ts).
        const holder = new HolderRegistration(file, this.guard);
        this.holder = holder;
        this.guard.beforeSyncWrite = () => holder.beforeSyncWrite();
      }
      if (!hasMarker && !opts.readOnly) {
        if (this.guard && !this.guard.open) {
          this.guard.stop();
          void this.root.close().finally(() => this.holder?.close());
          openStores.delete(this);
          throw new PersistenceError(`DATA_DIR ${this.dir} cannot take a new store: ${this.guard.state.reason}`);
        }
        writeFileSync(marker, JSON.stringify({ format: FORMAT, createdAt: new Date().toISOString() } satisfies Marker, null, 2));
        this.db('meta').putSync('format', FORMAT);
      }
    } finally {
      opening.release();
    }
    this.format = format;
    if (format === FORMAT) this.seekIds();
  }

  /** The next ids: one past the largest key of the databases keyed by each kind (a seek each). */
  private seekIds(): void {
    const last = (name: DbName): number => {
      const [k] = this.db(name).getKeys({ reverse: true, limit: 1, end: FIRST_KEY });
      // An empty database's walk may still meet its structures record (key 0), which is no id.
      return k instanceof Uint8Array && k.length >= 4 && k[0]! >= 5 ? readIdAt(k) : ID_BASE - 1;
    };
    this.nextMarket = Math.max(...MARKET_ID_DBS.map(last)) + 1;
    this.nextInstrument = last('books') + 1;
  }

  /** A new id of `kind`, refused past ID_MAX (4.2 billion minus 84 million ids: never, in practice). */
  private newId(kind: 'market' | 'instrument'): number {
    const id = kind === 'market' ? this.nextMarket++ : this.nextInstrument++;
    if (id > ID_MAX) throw new PersistenceError(`DATA_DIR ${this.dir}: the store has given every ${kind} id (${ID_MAX})`);
    return id;
  }

  /** The id of a market given one (its catalog record's, or a loose one), or 0. */
  private marketIdOf(venue: string, marketId: string): number {
    const m = this.state?.catalog.get(venue, marketId);
    const id = m === undefined ? 0 : storeIdOf(m);
    return id !== 0 ? id : (this.loose.get(venue)?.get(marketId) ?? 0);
  }

  /** The id of a catalog record, given now when it has none (a loose id the market had, or a new one). */
  private recordId(m: MarketRecord): number {
    let id = storeIdOf(m);
    if (id !== 0) return id;
    const l = this.loose.get(m.venue);
    id = l?.get(m.marketId) ?? 0;
    if (id !== 0) l!.delete(m.marketId);
    else id = this.newId('market');
    setStoreId(m, id);
    return id;
  }

  /**
   * The id of a market, given now when it has none, for a write under it by `by`. The record that
   * carries a new id (the catalog's, or for a market the catalog does not hold, its quote) is put
   * first, unless it is the caller's own write: lmdb-js commits in the order writes are issued, so
   * nothing lands under an id whose carrier did not land before it (a crash between them orphans,
   * never misattributes: ARCHITECTURE.md, persistence).
   */
  private marketIdFor(venue: string, marketId: string, by: 'quote' | 'candle'): number {
    const state = this.state;
    const m = state?.catalog.get(venue, marketId);
    if (m !== undefined) {
      if (storeIdOf(m) !== 0) return storeIdOf(m);
      const id = this.recordId(m);
      this.track(this.db('catalog').put(idKey(id), storedMarket(m)));
      return id;
    }
    let l = this.loose.get(venue);
    let id = l?.get(marketId);
    if (id !== undefined) return id;
    if (!l) this.loose.set(venue, (l = new Map()));
    l.set(marketId, (id = this.newId('market')));
    const q = by === 'candle' ? state?.quotes.get(venue, marketId) : undefined;
    if (q !== undefined) this.track(this.db('quotes').put(idKey(id), { ...q }));
    return id;
  }

  /** An instrument's id, given now when its book has none. */
  private instrumentId(b: StateBook): number {
    let id = b.storeId;
    if (id === 0) b.storeId = id = this.newId('instrument');
    return id;
  }

  /** The store's format: FORMAT, or an older one opened read-only (whose records this version does not read). */
  readonly format: number;

  /**
   * Upgrades an older store to FORMAT before it opens (migrate.ts), while this process holds the
   * opening lock. Refused, with the store untouched, while another process has the file open (it
   * would go on writing the old file) or when the copy cannot be made.
   */
  private upgrade(file: string, marker: string, old: Marker): void {
    const others = otherHolders(file);
    if ([...openStores].some((s) => s.dir === this.dir)) others.push(process.pid);
    if (others.length)
      throw new PersistenceError(
        `DATA_DIR ${this.dir} holds a format-${old.format} store, which this version upgrades to format ${FORMAT} when it opens it, but process ${others.join(', ')} has it open: stop it and start again`,
      );
    try {
      const r = upgradeStore(file, marker, old);
      const records = Object.values(r.copied).reduce((a, b) => a + b, 0);
      this.log?.warn({ dir: this.dir, from: old.format, records, ms: Math.round(r.ms) }, `upgraded DATA_DIR to store format ${FORMAT}`);
    } catch (e) {
      throw new PersistenceError(
        `DATA_DIR ${this.dir}: upgrading ${DB_FILE} from format ${old.format} to ${FORMAT} failed: ${(e as Error).message}. The store is unchanged (format ${old.format}); the previous version still opens it`,
      );
    }
  }

  /** Refuses to read the records of an older format (opened read-only: its keys are not this version's). */
  private readable(): void {
    if (this.format !== FORMAT)
      throw new PersistenceError(
        `DATA_DIR ${this.dir} holds a format-${this.format} store: start the service on it once to upgrade it to format ${FORMAT} before reading it`,
      );
  }

  db(name: DbName): Database {
    return this.dbs.get(name)!;
  }

  /** Restores catalog, quotes, books and the trade sequence into `state`. Returns counts. */
  load(state: EngineState, recentTrades = 10_000): { markets: number; quotes: number; books: number; trades: number } {
    this.readable();
    this.state = state;
    // Each record's id is its key: the records the state holds carry them from here (no table).
    let markets = 0;
    for (const { key, value } of this.db('catalog').getRange()) {
      const m = state.catalog.restore(value as MarketRecord);
      setStoreId(m, readIdKey(key as Buffer));
      state.books.link(m.venue, m.marketId, m.yesInstrument, m.noInstrument);
      markets++;
    }
    let quotes = 0;
    for (const { key, value } of this.db('quotes').getRange()) {
      const q = value as QuoteRecord;
      const id = readIdKey(key as Buffer);
      state.quotes.restore(q);
      // A market the catalog does not hold: its quote record carries its id. (One the catalog holds
      // under another id is an orphan of a crash: its record is read, and written under the market's id.)
      if (state.catalog.get(q.venue, q.marketId) === undefined) {
        let l = this.loose.get(q.venue);
        if (!l) this.loose.set(q.venue, (l = new Map()));
        l.set(q.marketId, id);
      }
      quotes++;
    }
    let books = 0;
    for (const { key, value } of this.db('books').getRange()) {
      const b = value as StoredBook;
      state.books.restore(b.venue, b.instrument, b.bids, b.asks, b.ts).storeId = readIdKey(key as Buffer);
      books++;
    }
    const trades = this.db('trades');
    const recent: StoredTrade[] = [];
    for (const { value } of trades.getRange({ reverse: true, limit: recentTrades })) recent.push(value as StoredTrade);
    recent.reverse();
    const lastSeq = recent.length ? recent[recent.length - 1]!.seq : 0;
    state.trades.restore(lastSeq, recent);
    this.indexTrades();
    return { markets, quotes, books, trades: trades.getCount() };
  }

  /** A market's record changed: it goes into the next snapshot. */
  markMarket(venue: string, marketId: string): void {
    this.dirty.catalog.add(venue, marketId);
  }

  /** A market's quote changed: it goes into the next snapshot. */
  markQuote(venue: string, marketId: string): void {
    this.dirty.quotes.add(venue, marketId);
  }

  /**
   * An instrument's book changed: it goes into the next snapshot. `held`: the book's own mark slot
   * (the state's StateBook), which spares the set lookup when the book is already marked.
   */
  markBook(venue: string, instrument: string, held?: { persistMark: number }): void {
    const d = this.dirty.books;
    if (held !== undefined) {
      if (held.persistMark === d.generation) return;
      held.persistMark = d.generation;
    }
    d.add(venue, instrument);
  }

  /**
   * Appends a closed one-minute candle and folds it into its hour and day candles, so that long
   * histories (a year at 1h or 1d) read thousands of rollups instead of half a million minutes. The
   * rollups being built are kept in memory (the last hour and day per market): a put is not
   * readable before its batch commits, so read-modify-write through LMDB would lose minutes.
   */
  appendCandle(c: Candle): void {
    const id = this.marketIdFor(c.venue, c.marketId, 'candle');
    const put = this.db('candles').put(idCandleKey(id, c.t), storedCandle(c));
    const lateHour = !this.fold('candles1h', this.hourRollups, c, id, 3_600_000);
    const lateDay = !this.fold('candles1d', this.dayRollups, c, id, 86_400_000);
    if (!lateHour && !lateDay && c.t + 60_000 > this.clock.now() - HISTORY_STABLE_MS) return this.track(put);
    // A minute older than the stable horizon or than its open rollup (a backfill, clock skew): once
    // it is readable (a put is invisible until its batch commits), rebuild the rollup buckets it
    // falls in from the minute log, and bump the epoch so cached history is rebuilt too.
    this.historyEpoch++;
    this.track(
      put
        .then(() => Promise.all([lateHour && this.rebuildRollup('candles1h', c, id, 3_600_000), lateDay && this.rebuildRollup('candles1d', c, id, 86_400_000)]))
        .then(() => this.historyEpoch++),
    );
  }

  /** Recomputes one rollup bucket from the committed one-minute candles in it. */
  private rebuildRollup(db: 'candles1h' | 'candles1d', c: Candle, id: number, width: number): Promise<unknown> {
    const t = c.t - (c.t % width);
    let r: Candle | undefined;
    for (const { key, value } of this.db('candles').getRange(idCandleRange(id, t, t + width))) {
      const m = candleOf(key, value, c.venue, c.marketId);
      mergeMinute((r ??= { ...m, t, volume: 0, trades: 0, notional: undefined }), m);
    }
    return r ? this.db(db).put(idCandleKey(id, t), storedCandle(r)) : Promise.resolve();
  }

  /** The hour and day rollups of a market are folded together, from the same minutes: one slot index for both. */
  private readonly rollupSlots = new RollupSlots();
  private readonly hourRollups = new OpenRollups(this.rollupSlots);
  private readonly dayRollups = new OpenRollups(this.rollupSlots);

  /** Folds a minute into its open rollup; false for a late minute of an older bucket (rebuilt from the minute log). */
  private fold(db: 'candles1h' | 'candles1d', open: OpenRollups, c: Candle, id: number, width: number): boolean {
    const t = c.t - (c.t % width);
    let r = open.get(c.venue, c.marketId);
    if (!r || r.t !== t) {
      if (r && t < r.t) return false;
      // After a restart the bucket may already hold minutes written before: continue from it.
      const key = idCandleKey(id, t);
      const v: unknown = this.db(db).get(key);
      const stored = v === undefined ? undefined : candleOf(key, v, c.venue, c.marketId);
      r = stored ?? { ...c, t, volume: 0, trades: 0, notional: undefined };
      if (!stored) {
        r.h = c.h;
        r.l = c.l;
      }
    }
    mergeMinute(r, c);
    open.set(r);
    this.track(this.db(db).put(idCandleKey(id, t), storedCandle(r)));
    return true;
  }

  /**
   * Removes one-minute candles that began before `cutoff` (ms), market by market, and resolves
   * with how many went; the hour and day rollups stay, so long ranges at 1h and 1d still answer.
   * The log is keyed [market id, minute], so each market's old minutes are one range from its
   * first key: a seek per market, never a walk over the minutes kept. Removals commit in chunks
   * with the guard checking its reserve between them, like a snapshot; while writing is paused
   * (a full disk) they are dropped and the next run takes them.
   */
  pruneMinutes(cutoff: number): Promise<number> {
    return this.running(
      this.removeMinutes(cutoff).catch((e: Error) => {
        this.log?.error({ err: e.message, dir: this.dir }, 'removing old one-minute candles failed; the next run tries again');
        return 0;
      }),
    );
  }

  private async removeMinutes(cutoff: number): Promise<number> {
    const log = this.db('candles');
    let removed = 0;
    let seeks = 0;
    let removals = 0;
    let next: Key = FIRST_KEY;
    for (;;) {
      const [first] = log.getKeys({ start: next, limit: 1 });
      if (first === undefined) break;
      const id = candleId(first as Buffer);
      // Read before the first await: a range is not read across commits.
      const old = [...log.getKeys(idCandleRange(id, 0, cutoff))];
      for (const key of old) {
        // Counted when it commits: a removal the paused guard drops resolves false.
        const r = log.remove(key);
        r.then(
          (gone) => {
            if (gone) removed++;
          },
          () => undefined, // counted by track
        );
        this.track(r);
        // Wait for the commits and let the guard check its reserve, as a snapshot does per chunk.
        if (++removals % PRUNE_CHUNK !== 0) continue;
        await this.writes.settled();
        this.guard?.check();
        await nextTurn();
      }
      // The next market's first key: past every minute this market can have.
      next = afterId(id);
      // A seek reads pages (~10 µs): yield the loop often enough that a run never holds it long.
      if (++seeks % PRUNE_SEEKS === 0) await nextTurn();
    }
    await this.flushed();
    if (removed > 0) {
      this.historyEpoch++;
      this.log?.info({ removed, before: new Date(cutoff).toISOString() }, 'removed one-minute candles past their retention');
    }
    return removed;
  }

  /** Appends a trade to the log (keyed by seq) and to the time index (keyed [timestamp, seq]). */
  appendTrade(t: StoredTrade): void {
    this.trackTradeLog(this.db('trades').put(t.seq, { ...t }));
    this.trackTradeLog(this.db('tradesByTime').put([t.timestamp, t.seq], 1));
  }

  /** Removes the trades before `cutoff` (ms) from the log and its time index, at most `max` per call. Returns how many. */
  pruneTrades(cutoff: number, max = 100_000): number {
    let n = 0;
    for (const key of this.db('tradesByTime').getKeys({ end: [cutoff], limit: max })) {
      const [, seq] = key as unknown as readonly [number, number];
      this.trackTradeLog(this.db('trades').remove(seq));
      this.trackTradeLog(this.db('tradesByTime').remove(key));
      n++;
    }
    return n;
  }

  /**
   * Rebuilds the [timestamp, seq] index of the trade log when it does not cover the log (a store
   * written before the index existed, or a write of one that was dropped while the disk was full).
   */
  indexTrades(): number {
    const log = this.db('trades');
    const idx = this.dbs.get('tradesByTime');
    // A read-only store (no guard) neither has nor writes what it lacks.
    if (!idx || !this.guard?.open || idx.getCount() === log.getCount()) return 0;
    idx.clearSync();
    let n = 0;
    let batch: [number, number][] = [];
    const write = (): void => {
      const rows = batch;
      batch = [];
      this.root.transactionSync(() => {
        for (const k of rows) void idx.put(k, 1);
      });
    };
    for (const { value } of log.getRange()) {
      const t = value as StoredTrade;
      batch.push([t.timestamp, t.seq]);
      n++;
      if (batch.length === 10_000) write();
    }
    if (batch.length) write();
    return n;
  }

  /**
   * Writes the catalog records that changed (new markets, status changes). Cheap, since the
   * catalog changes rarely: the service runs it every second so that a crash loses at most a
   * second of new listings, while books and quotes wait for the periodic snapshot. In commits of
   * SNAPSHOT_CHUNK records, as a snapshot: a venue's whole catalog (100k new markets at sim scale
   * 166) was 100k puts in one synchronous call, 5.4 s of the main thread at load 17. A record is
   * read when its put is issued, so a chunk written later writes the record as it is then.
   */
  flushCatalog(state: EngineState): Promise<number> {
    // Puts between its chunks: close() waits for it, as for a snapshot.
    return this.running(this.writeCatalog(state));
  }

  private async writeCatalog(state: EngineState): Promise<number> {
    this.state = state;
    const marks = this.dirty.catalog.take();
    await this.inChunks(this.catalogWrites(state, marks));
    return marks.size;
  }

  /** The catalog records' puts (of a catalog flush or a snapshot), yielding after each record. */
  private *catalogWrites(state: EngineState, marks: DirtyKeys): Generator<void> {
    const cat = this.db('catalog');
    for (const [venue, id] of marks.pairs()) {
      const m = state.catalog.get(venue, id);
      if (m) this.track(cat.put(idKey(this.recordId(m)), storedMarket(m)));
      yield;
    }
  }

  /**
   * Issues `writes` in commits of SNAPSHOT_CHUNK records, the guard checking its reserve between
   * them (a whole snapshot or catalog of a large store could be larger than the reserve: guard.ts),
   * and resolves when the last is durable.
   */
  private async inChunks(writes: Generator<void>): Promise<void> {
    for (let more = true; more;) {
      for (let k = 0; k < SNAPSHOT_CHUNK && more; k++) more = !writes.next().done;
      if (!more) break;
      await this.writes.settled();
      this.guard?.check();
    }
    await this.flushed();
  }

  /** Writes everything that changed since the last snapshot. Resolves when it is durable. */
  snapshot(state: EngineState, all = false): Promise<{ catalog: number; quotes: number; books: number }> {
    return this.running(this.writeSnapshot(state, all));
  }

  /** Work that reads and writes LMDB between its chunks (the guard's check): close() waits for it, so none lands on a closing environment. */
  private readonly inFlight = new Set<Promise<unknown>>();

  private running<T>(p: Promise<T>): Promise<T> {
    const done = (): void => void this.inFlight.delete(p);
    this.inFlight.add(p);
    p.then(done, done);
    return p;
  }

  private async writeSnapshot(state: EngineState, all: boolean): Promise<{ catalog: number; quotes: number; books: number }> {
    this.state = state;
    if (this.resync) {
      this.resync = false;
      all = true;
    }
    const catalog = all ? DirtyKeys.of(state.catalog.all()) : this.dirty.catalog.take();
    const quotes = all ? DirtyKeys.of(state.quotes.all()) : this.dirty.quotes.take();
    const books = all ? DirtyKeys.ofBooks(state.books.entries()) : this.dirty.books.take();
    if (all) {
      // Marks made before a full snapshot are covered by it.
      this.dirty.catalog.take();
      this.dirty.quotes.take();
      this.dirty.books.take();
    }
    // One record at a time from the captured marks: a snapshot of every market builds no list of
    // keys or of pending writes, which would be promoted to the old space while the chunks commit.
    await this.inChunks(this.snapshotWrites(state, catalog, quotes, books));
    return { catalog: catalog.size, quotes: quotes.size, books: books.size };
  }

  /** Issues the puts (and removals) of one snapshot, yielding after each record. */
  private *snapshotWrites(state: EngineState, catalog: DirtyKeys, quotes: DirtyKeys, books: DirtyKeys): Generator<void> {
    const quo = this.db('quotes');
    const boo = this.db('books');
    yield* this.catalogWrites(state, catalog);
    for (const [venue, id] of quotes.pairs()) {
      const q = state.quotes.get(venue, id);
      if (q) this.track(quo.put(idKey(this.marketIdFor(venue, id, 'quote')), { ...q }));
      yield;
    }
    for (const [venue, instrument] of books.pairs()) {
      const b = state.books.instrument(venue, instrument);
      if (b?.ready)
        this.track(
          boo.put(idKey(this.instrumentId(b)), { venue, instrument, bids: b.levelsOf(true), asks: b.levelsOf(false), ts: b.timestamp } satisfies StoredBook),
        );
      else if (b && b.storeId !== 0) this.track(boo.remove(idKey(b.storeId)));
      yield;
    }
  }

  /** Resolves when every write issued so far is durable (or failed and was counted). */
  async flushed(): Promise<void> {
    await this.writes.settled();
    await this.root.flushed;
  }

  private track(p: Promise<unknown>): void {
    this.writes.track(p, (e) => this.noteWriteError(e));
  }

  /** `track` for a write to the trade log or its index, counted in `tradeLogSettled` once it settles. */
  private trackTradeLog(p: Promise<unknown>): void {
    this.track(p);
    p.then(this.tradeLogMoved, this.tradeLogMoved);
  }

  private readonly tradeLogMoved = (): void => {
    this.tradeLogSettled++;
  };

  /**
   * Candles of a market in [from, to) ms, oldest first: one-minute candles, or the hour (`1h`) or
   * day (`1d`) rollups.
   */
  candles(venue: string, marketId: string, from: number, to: number, resolution: '1m' | '1h' | '1d' = '1m'): Candle[] {
    const db = resolution === '1h' ? 'candles1h' : resolution === '1d' ? 'candles1d' : 'candles';
    this.readable();
    const out: Candle[] = [];
    const id = this.marketIdOf(venue, marketId);
    if (id === 0) return out; // never written under an id: no candles
    for (const { key, value } of this.db(db).getRange(idCandleRange(id, from, to))) out.push(candleOf(key, value, venue, marketId));
    return out;
  }

  async close(): Promise<void> {
    this.guard?.stop();
    await Promise.allSettled([...this.inFlight]);
    await this.flushed();
    await this.root.close();
    this.holder?.close();
    openStores.delete(this);
    if (this.fallback) rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * Counts a failed write and logs the first one, and stops writing (guard.ts: after a failed
   * LMDB write nothing more goes to the environment until there is room again).
   */
  noteWriteError(e: Error): void {
    this.writeErrors++;
    if (this.lastWriteError === undefined) this.log?.error({ err: e.message, dir: this.dir }, 'persistence write failed; serving from memory');
    this.lastWriteError = e.message;
    this.guard?.pause(`a write failed: ${e.message}`);
  }

  private guardEvents(): { paused(reason: string, failed: boolean): void; resumed(): void } {
    return {
      paused: (reason, failed) => {
        if (failed) {
          this.writeErrors++;
          this.lastWriteError = reason;
        }
        // A failed write is a full disk or quota most of the time, but not always (a damaged page
        // fails every commit after it): say what to do in both cases.
        this.log?.error(
          { dir: this.dir, reason },
          failed
            ? 'persistence paused after a failed write; serving from memory. It resumes by itself once the disk has room; if the disk is not full, stop the service and run `crossbook data check`'
            : 'persistence paused; serving from memory until the disk has room again',
        );
      },
      resumed: () => {
        this.lastWriteError = undefined;
        this.resync = true;
        this.log?.warn({ dir: this.dir, dropped: this.guard?.state.dropped }, 'persistence resumed; the next snapshot writes the whole state');
      },
    };
  }

  /**
   * For /status: whether what the service takes in is reaching the disk. degraded while writing
   * is paused (full disk), after a failed write, or when serving from a temporary copy.
   */
  health(): { status: 'ok' | 'degraded'; writable: boolean; write_errors: number; last_error: string | null } {
    const g = this.guard?.state;
    const paused = g?.paused ? `writes paused (${g.reason}); ${g.dropped} writes dropped` : undefined;
    const problem = this.fallback?.reason ?? paused ?? this.lastWriteError;
    return { status: problem ? 'degraded' : 'ok', writable: !this.fallback, write_errors: this.writeErrors, last_error: problem ?? null };
  }
}

/**
 * A candle as stored: its venue, market and minute are the key ([venue, marketId, t]), so the value
 * holds only the prices and counts (about half the bytes of the whole record, in every candle log).
 */
interface StoredCandle {
  readonly o: number;
  readonly h: number;
  readonly l: number;
  readonly c: number;
  readonly mid: number | undefined;
  readonly volume: number;
  readonly trades: number;
  /** YES bid and ask at the last observation and the money traded (units × shares); absent in candles stored before they were kept. */
  readonly bid?: number | undefined;
  readonly ask?: number | undefined;
  readonly n?: number | undefined;
}

function storedCandle(c: Candle): StoredCandle {
  return { o: c.o, h: c.h, l: c.l, c: c.c, mid: c.mid, volume: c.volume, trades: c.trades, bid: c.bid, ask: c.ask, n: c.notional };
}

/** The candle under `key` of `venue`/`marketId` (whose id the key holds): a stored value completed from its key, or a whole record as format 1 stored it (copied as it was by the upgrade). */
function candleOf(key: Key, value: unknown, venue: string, marketId: string): Candle {
  const v = value as StoredCandle & Partial<Candle>;
  if (v.venue !== undefined) return v as Candle;
  const { t } = readIdCandleKey(key as Buffer);
  return { venue, marketId, t, o: v.o, h: v.h, l: v.l, c: v.c, mid: v.mid, volume: v.volume, trades: v.trades, bid: v.bid, ask: v.ask, notional: v.n };
}

/** Folds a later one-minute candle into a rollup candle (its open stays). */
function mergeMinute(r: Candle, m: Candle): void {
  if (m.h > r.h) r.h = m.h;
  if (m.l < r.l) r.l = m.l;
  r.c = m.c;
  r.mid = m.mid;
  r.volume += m.volume;
  r.trades += m.trades;
  r.bid = m.bid;
  r.ask = m.ask;
  if (m.notional !== undefined) r.notional = (r.notional ?? 0) + m.notional;
}

const openStores = new Set<Persistence>();
let guarded = false;

/**
 * When a commit fails (full disk, I/O error), lmdb-js rejects internal promises that nobody holds
 * (its per-transaction commit error among them); under Node's default policy that kills the
 * process. This listener counts those as write errors of the open stores, so the service keeps
 * serving from memory. Any other unhandled rejection keeps the default outcome: when no other
 * listener (a test runner) handles it, it is printed and the process exits 1.
 */
function guardLmdbRejections(): void {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', (reason) => {
    if (isLmdbFailure(reason)) {
      for (const s of openStores) s.noteWriteError(reason);
      return;
    }
    if (process.listenerCount('unhandledRejection') > 1) return;
    console.error(reason);
    process.exit(1);
  });
}

function isLmdbFailure(e: unknown): e is Error {
  if (!(e instanceof Error)) return false;
  if ('commitError' in e) return true;
  return /[/\\]node_modules[/\\]lmdb[/\\]/.test(e.stack ?? '');
}

/** errno codes that mean "this directory cannot take writes", as opposed to bad data in it. */
const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT']);

/**
 * Opens DATA_DIR for the service. A directory that cannot be written (read-only mount,
 * permissions, full disk) does not stop the service: it logs a clear error and serves from a
 * temporary copy of what DATA_DIR holds (so keys, catalog and history are still there), with
 * `/status` saying persistence is degraded; nothing written then survives a restart, and DATA_DIR
 * itself is never touched. Bad data in DATA_DIR (corrupt file, foreign format) still fails start.
 */
export function openPersistence(dataDir: string, log?: Logger, opts: { readonly check?: CheckScope | 'off'; readonly clock?: Clock } = {}): Persistence {
  const dir = resolve(dataDir);
  if (opts.check !== 'off') assertIntact(dir, opts.check ?? 'state');
  const problem = unwritable(dir);
  const clock = opts.clock;
  if (!problem) return new Persistence(dir, log, { clock });
  const tmp = mkdtempSync(join(tmpdir(), FALLBACK_PREFIX));
  for (const f of [MARKER, DB_FILE, 'demo-key'])
    if (existsSync(join(dir, f))) {
      try {
        copyFileSync(join(dir, f), join(tmp, f));
      } catch (e) {
        rmSync(tmp, { recursive: true, force: true });
        throw new PersistenceError(`DATA_DIR ${dir} is not writable (${problem}) and ${f} cannot be read either: ${(e as Error).message}`);
      }
    }
  const reason = `DATA_DIR ${dir} is not writable (${problem}): serving from a temporary copy; nothing taken in from now on survives a restart`;
  log?.error({ dataDir: dir, copy: tmp, err: problem }, reason);
  let p: Persistence;
  try {
    p = new Persistence(tmp, log, { clock });
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  p.fallback = { dataDir: dir, reason };
  // DATA_DIR cannot take it, so the note that a server serves a copy of it goes beside the copy,
  // where `crossbook keys` looks (serversOnCopies).
  writeFileSync(join(tmp, FALLBACK_NOTE), JSON.stringify({ dataDir: dir, pid: process.pid } satisfies FallbackNote));
  return p;
}

const FALLBACK_NOTE = 'crossbook-fallback.json';
const FALLBACK_PREFIX = 'crossbook-fallback-';

interface FallbackNote {
  readonly dataDir: string;
  readonly pid: number;
}

/**
 * Running servers that serve a temporary copy of `dataDir` (it was not writable when they
 * started): a change made to `dataDir` itself, such as a key revocation, does not reach them.
 * Found by the note each one leaves beside its copy in the temporary directory (the process's
 * and /tmp).
 */
export function serversOnCopies(dataDir: string): { pid: number; copy: string }[] {
  const want = resolve(dataDir);
  const out: { pid: number; copy: string }[] = [];
  for (const base of new Set([tmpdir(), '/tmp'])) {
    let names: string[];
    try {
      names = readdirSync(base).filter((n) => n.startsWith(FALLBACK_PREFIX));
    } catch {
      continue;
    }
    for (const n of names) {
      const copy = join(base, n);
      try {
        const note = JSON.parse(readFileSync(join(copy, FALLBACK_NOTE), 'utf8')) as FallbackNote;
        if (note.dataDir === want && alive(note.pid)) out.push({ pid: note.pid, copy });
      } catch {
        // not a note (yet), or not readable: nothing to report
      }
    }
  }
  return out;
}

/** Why `dir` cannot take writes (an errno code and message), or undefined when it can. */
function unwritable(dir: string): string | undefined {
  const probe = join(dir, `.crossbook-write-probe-${process.pid}`);
  try {
    if (existsSync(dir) && !statSync(dir).isDirectory()) return undefined; // Persistence gives the clear error
    mkdirSync(dir, { recursive: true });
    writeFileSync(probe, 'x');
    unlinkSync(probe);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code && UNWRITABLE.has(code) ? `${code}: ${(e as Error).message}` : undefined;
  }
}

/**
 * Refuses to start on a damaged crossbook.mdb: the databases start reads (or with `full`, the
 * whole file) are walked in a child process
 * (`checkInChild`: LMDB aborts on some damaged pages) before anything reads it, so the service
 * never starts on part of its state, and never dies later on a page it reaches by chance. One
 * line says which file, what is damaged and what to do.
 */
function assertIntact(dir: string, scope: CheckScope): void {
  const file = join(dir, DB_FILE);
  if (!existsSync(file) || !existsSync(join(dir, MARKER))) return; // the constructor says what is missing
  checkLmdbHeader(file);
  const report = checkInChild(file, scope);
  if (report.unopened !== undefined || healthy(report)) return; // not openable at all: the constructor says why
  throw new PersistenceError(`DATA_DIR ${dir}: ${DB_FILE} is damaged (${damageLines(report).join('; ')}). ${WHAT_TO_DO}`);
}

/**
 * Runs a read of the store at start (`what`: what it restores); an error from LMDB or the decoder
 * (a damaged page the start check did not walk) becomes one clear line naming the file and what to
 * do, instead of a stack trace.
 */
export function restoring<T>(p: Persistence, what: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (e instanceof PersistenceError) throw e;
    throw new PersistenceError(`DATA_DIR ${p.dir}: reading ${what} from ${DB_FILE} failed (${(e as Error).message}); the file may be damaged. ${WHAT_TO_DO}`);
  }
}

/** What to do about a damaged store, said wherever one is found. */
export const WHAT_TO_DO =
  'Restore it from a backup (`crossbook data backup DIR` takes one while the service runs), or run `crossbook data repair` to keep what can still be read (`crossbook data check` lists the damage)';

/**
 * LMDB trusts its file: opening garbage crashes the process (SIGSEGV) instead of throwing. So the
 * two meta pages are checked first: magic 0xBEEFC0DE and a known format version. This catches
 * truncated, zeroed and foreign files; damage deeper in the tree is beyond a header check.
 */
function checkLmdbHeader(file: string): void {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(32);
    const bad = (why: string): never => {
      throw new PersistenceError(`DATA_DIR: ${file} is not a valid LMDB file (${why}); restore it from a backup or move it away`);
    };
    if (size < 8192) bad(`only ${size} bytes`);
    for (const page of [0, 4096]) {
      readSync(fd, buf, 0, 32, page);
      if (buf.readUInt32LE(24) !== 0xbeefc0de) bad(`bad magic in meta page at ${page}`);
      const version = buf.readUInt32LE(28);
      if (version < 1 || version > 2) bad(`unknown format version ${version}`);
    }
  } finally {
    closeSync(fd);
  }
}

/** Generations of DirtyKeys handed out so far (process-wide, so no two sets of marks share one). */
let generations = 0;

/** Records changed since the last write, venue → ids: marking one builds no key string. */
class DirtyKeys {
  private byVenue = new Map<string, Set<string>>();
  /** Names the marks held now: it changes whenever they are taken or drained, so a record that noted it is known to be marked while it stands. */
  generation = ++generations;

  /** Every record of `xs`, marked. */
  static of(xs: Iterable<{ readonly venue: string; readonly marketId: string }>): DirtyKeys {
    const d = new DirtyKeys();
    for (const x of xs) d.add(x.venue, x.marketId);
    return d;
  }

  /** Every book of `entries` ([venue, instrument, book]), marked. */
  static ofBooks(entries: Iterable<readonly [string, string, unknown]>): DirtyKeys {
    const d = new DirtyKeys();
    for (const [venue, instrument] of entries) d.add(venue, instrument);
    return d;
  }

  add(venue: string, id: string): void {
    let ids = this.byVenue.get(venue);
    if (!ids) this.byVenue.set(venue, (ids = new Set()));
    ids.add(id);
  }

  /** The marks so far, as their own set (nothing copied); this set starts empty. */
  take(): DirtyKeys {
    const taken = new DirtyKeys();
    taken.byVenue = this.byVenue;
    this.byVenue = new Map();
    this.generation = ++generations;
    return taken;
  }

  /** How many records are marked. */
  get size(): number {
    let n = 0;
    for (const ids of this.byVenue.values()) n += ids.size;
    return n;
  }

  /** [venue, id] of each mark, in marking order per venue. */
  *pairs(): Generator<[string, string]> {
    for (const [venue, ids] of this.byVenue) for (const id of ids) yield [venue, id];
  }
}
