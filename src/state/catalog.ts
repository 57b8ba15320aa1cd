import { Subject } from 'rxjs';
import type { VenueConfig } from '../config/schema.js';
import type { MarketStatus, MarketStatusChange, MarketUpsert, VenueLabel } from '../core/types.js';
import { marketUrl, nativeId } from '../venues/directory.js';

/** A market as the catalog holds it: the latest upsert plus our own bookkeeping. */
export interface MarketRecord {
  readonly venue: VenueLabel;
  readonly marketId: string;
  title: string;
  eventTitle?: string | undefined;
  seriesTitle?: string | undefined;
  eventId?: string | undefined;
  seriesId?: string | undefined;
  outcome?: string | undefined;
  category?: string | undefined;
  tags?: readonly string[] | undefined;
  status: MarketStatus;
  openTime?: number | undefined;
  closeTime?: number | undefined;
  url?: string | undefined;
  yesInstrument?: string | undefined;
  noInstrument?: string | undefined;
  result?: string | undefined;
  settlementValue?: number | undefined;
  volume?: number | undefined;
  openInterest?: number | undefined;
  liquidity?: number | undefined;
  extra?: Readonly<Record<string, unknown>> | undefined;
  /** When we first saw this market (ms); may be revised earlier, never later (spec 2.11). */
  firstSeenAt: number;
  /** Internal record time of the first insert (ms): what delta mode filters on (spec 4.20 rule 6). */
  recordedAt: number;
  updatedAt: number;
}

export type CatalogChange =
  | { readonly kind: 'added'; readonly market: MarketRecord }
  | { readonly kind: 'updated'; readonly market: MarketRecord }
  | { readonly kind: 'status'; readonly market: MarketRecord; readonly previous: MarketStatus };

/** The key of a market across venues. */
export function marketKey(venue: VenueLabel, marketId: string): string {
  return `${venue}:${marketId}`;
}

const FIELDS = [
  'title',
  'eventTitle',
  'seriesTitle',
  'eventId',
  'seriesId',
  'outcome',
  'category',
  'tags',
  'status',
  'openTime',
  'closeTime',
  'url',
  'yesInstrument',
  'noInstrument',
  'result',
  'settlementValue',
  'volume',
  'openInterest',
  'liquidity',
  'extra',
] as const;

/**
 * A catalog record with every field in place from the start, in one order: one hidden class for
 * every market, all fields inside the object (a record built by adding only the fields an upsert
 * has keeps them in a separate property array, and past a dozen such fields V8 turns it into a
 * dictionary), and no field V8 stores as a boxed double (a field first stored a double boxes every
 * value in it; these start as undefined and hold integers unboxed). Absent fields are undefined,
 * as before, so readers and JSON see the same record.
 */
class CatalogRecord implements MarketRecord {
  readonly venue: VenueLabel;
  readonly marketId: string;
  title: string;
  eventTitle: string | undefined;
  seriesTitle: string | undefined;
  eventId: string | undefined;
  seriesId: string | undefined;
  outcome: string | undefined;
  category: string | undefined;
  tags: readonly string[] | undefined;
  status: MarketStatus;
  openTime: number | undefined;
  closeTime: number | undefined;
  url: string | undefined;
  yesInstrument: string | undefined;
  noInstrument: string | undefined;
  result: string | undefined;
  settlementValue: number | undefined;
  volume: number | undefined;
  openInterest: number | undefined;
  liquidity: number | undefined;
  extra: Readonly<Record<string, unknown>> | undefined;
  firstSeenAt: number;
  recordedAt: number;
  updatedAt: number;
  /**
   * A hash of the keys of the last `extra` that the catalog left out (`keptExtra`), so that an upsert
   * that changes only those still counts as a change, as it did when they were kept; undefined when
   * unknown (a record restored from a store that held only the kept keys): the next upsert's is
   * taken without counting. Private: not one of the record's keys (JSON, storage, spreads, tests).
   */
  #dropped: number | undefined = undefined;
  /**
   * The market's id in the store (store format 4, src/persist/keys.ts): the key of its catalog record,
   * quotes and candles; 0 until the store gives it one. Private, as `#dropped`: not one of the record's keys.
   */
  #storeId = 0;

  static dropped(r: CatalogRecord): number | undefined {
    return r.#dropped;
  }

  static storeId(r: CatalogRecord): number {
    return r.#storeId;
  }

  static setStoreId(r: CatalogRecord, id: number): void {
    r.#storeId = id;
  }

  static setDropped(r: CatalogRecord, h: number | undefined): void {
    r.#dropped = h;
  }

  /** The record of `src`'s identity and times, with the fields of `src` that are defined. */
  constructor(src: Omit<MarketRecord, 'firstSeenAt' | 'recordedAt' | 'updatedAt'>, firstSeenAt: number, recordedAt: number, updatedAt: number) {
    this.venue = src.venue;
    this.marketId = src.marketId;
    this.title = src.title;
    this.eventTitle = src.eventTitle;
    this.seriesTitle = src.seriesTitle;
    this.eventId = src.eventId;
    this.seriesId = src.seriesId;
    this.outcome = src.outcome;
    this.category = src.category;
    this.tags = src.tags;
    this.status = src.status;
    this.openTime = src.openTime;
    this.closeTime = src.closeTime;
    this.url = src.url;
    // One-book venues name the market itself as its book: one string for both.
    this.yesInstrument = src.yesInstrument === src.marketId ? this.marketId : src.yesInstrument;
    this.noInstrument = src.noInstrument;
    this.result = src.result;
    this.settlementValue = src.settlementValue;
    this.volume = src.volume;
    this.openInterest = src.openInterest;
    this.liquidity = src.liquidity;
    this.extra = src.extra;
    this.firstSeenAt = firstSeenAt;
    this.recordedAt = recordedAt;
    this.updatedAt = updatedAt;
  }
}

/**
 * The keys of a market's `extra` that something reads, and so the only ones the catalog keeps (with
 * the placeholders of the venue's `web.marketUrl`, `keptExtra`). The mappers put more in `extra` (the
 * venue's ids, flags and times that nothing serves); those stay in what the mappers emit (/replay,
 * the capture) and out of the catalog, its store and its snapshots: at 108k markets they were about
 * 10 MiB of the main heap (BENCHMARKS.md `cat19`). A reader of a new key adds it here.
 */
export const READ_EXTRA: readonly string[] = [
  // venue_a's catalog (src/api/venue-a/: the record it serves, the series' frequency, the combo filter)
  'combo',
  'frequency',
  'rules_primary',
  'rules_secondary',
  'settlement_value_dollars',
  'volume_fp',
  'open_interest_fp',
  'volume',
  'open_interest',
  'created_time',
  'open_time',
  'close_time',
  'expiration_time',
  'updated_time',
  'settlement_ts',
  // ticker_name (views/market.ts); Polymarket's match id and page URLs (venues/polymarket); /matching-markets by slug
  'slug',
  'eventSlug',
  'venueMarketId',
  // fee context and live games (signals/engine.ts feeContext, MatchingService.isGameLive)
  'live',
  'league',
  'futures',
  // the ids a page URL template may take from extra before the market's own (venues/directory.ts marketUrl)
  'marketId',
  'outcomeId',
];

/** The keys of `extra` the catalog keeps for a venue whose page URL template is `marketUrl`: READ_EXTRA and the template's placeholders. */
export function keptExtra(marketUrl: string): ReadonlySet<string> {
  const keys = new Set(READ_EXTRA);
  for (const m of marketUrl.matchAll(/\{(\w+)\}/g)) keys.add(m[1]!);
  return keys;
}

/** FNV-1a offset basis: the hash of an `extra` from which nothing was left out. */
const NOTHING_DROPPED = 0x811c9dc5 | 0;

/**
 * `x` with only the keys in `keep` (in `x`'s order; `x` itself when it has no other), and a hash
 * (FNV-1a, 32 bits) of the keys and values left out, as JSON.
 */
function splitExtra(x: Readonly<Record<string, unknown>>, keep: ReadonlySet<string>): { kept: Readonly<Record<string, unknown>>; dropped: number } {
  let out: Record<string, unknown> | undefined;
  let h = NOTHING_DROPPED;
  for (const k in x) {
    if (keep.has(k)) {
      if (out) out[k] = x[k];
      continue;
    }
    if (!out) {
      out = {};
      for (const k2 in x) {
        if (k2 === k) break;
        out[k2] = x[k2];
      }
    }
    const text = `${JSON.stringify(k)}:${JSON.stringify(x[k])},`;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  }
  return { kept: out ?? x, dropped: h };
}

/** Fields that many records share a value of (every market of a venue, a status, an event, a series, a category; an outcome's team). */
const SHARED = ['venue', 'status', 'eventTitle', 'seriesTitle', 'eventId', 'seriesId', 'category', 'outcome'] as const;
/**
 * Venue-specific strings in `extra` that markets share: short values (times, which repeat across an
 * event's markets; enums such as a price structure) and rules text (a series' markets share it).
 * Longer strings are left alone: mostly unique, where a table entry would cost more than it saves.
 */
const SHARED_EXTRA_LENGTH = 32;
/** Keys of `extra` whose value names one market (Polymarket's Gamma id, a market slug, an exchange venue's own market id): never shared, so kept out of the table. */
const OWN_EXTRA = new Set(['gammaId', 'slug', 'venueMarketId']);
const sharedExtra = (key: string, v: string): boolean => (v.length <= SHARED_EXTRA_LENGTH && !OWN_EXTRA.has(key)) || key.startsWith('rules');
/** Distinct shared values kept before the table starts over (it is a cache: a miss costs a copy, not a wrong value). */
const MAX_SHARED = 250_000;

/**
 * One copy of each shared value. Venues repeat an event's title, ids and tags in every market of the
 * event, and each record parsed from the wire holds its own copy: at 100,000 markets the copies
 * are a good part of the catalog.
 */
class Interner {
  private readonly strings = new Map<string, string>();
  private readonly lists = new Map<string, readonly string[]>();

  string(s: string): string {
    const had = this.strings.get(s);
    if (had !== undefined) return had;
    if (this.strings.size >= MAX_SHARED) this.strings.clear();
    this.strings.set(s, s);
    return s;
  }

  list(xs: readonly string[]): readonly string[] {
    const key = xs.join('\u0000');
    const had = this.lists.get(key);
    if (had !== undefined && had.length === xs.length) return had;
    if (this.lists.size >= MAX_SHARED) this.lists.clear();
    const own = Object.freeze(xs.map((x) => this.string(x)));
    this.lists.set(key, own);
    return own;
  }

  /** The record with its shared fields replaced by the shared copies. */
  record(rec: Record<string, unknown>, extraIsNew = true): void {
    for (const f of SHARED) {
      const v = rec[f];
      if (typeof v === 'string') rec[f] = this.string(v);
    }
    const tags = rec['tags'];
    if (Array.isArray(tags) && tags.every((t) => typeof t === 'string')) rec['tags'] = this.list(tags as string[]);
    const extra = rec['extra'];
    if (extraIsNew && typeof extra === 'object' && extra !== null && !Array.isArray(extra)) rec['extra'] = this.extra(extra as Record<string, unknown>);
  }

  /** A copy of `extra` (inObjectCopy) with its shared strings replaced by the shared copies. */
  private extra(x: Record<string, unknown>): Record<string, unknown> {
    const out = inObjectCopy(x);
    for (const k in out) {
      const v = out[k];
      if (typeof v === 'string' && sharedExtra(k, v)) out[k] = this.string(v);
    }
    return out;
  }
}

/**
 * A copy of `x` with every property inside the object. JSON.parse allocates an object for exactly the
 * keys it reads, where an object built key by key (as the mappers' are) keeps all but four in a
 * separate property array, and past a dozen in a dictionary several times the size; an object
 * spread keeps the source's layout. The copy's values are then set to `x`'s own (the same strings
 * and arrays, not the parser's). An object holding a value JSON would not carry as it is (undefined,
 * NaN, -0, a nested object) is copied by a spread instead.
 */
function inObjectCopy(x: Record<string, unknown>): Record<string, unknown> {
  for (const k in x) if (k === '__proto__' || !jsonExact(x[k])) return { ...x };
  const out = JSON.parse(JSON.stringify(x)) as Record<string, unknown>;
  for (const k in out) out[k] = x[k];
  return out;
}

/** A value that JSON.stringify and JSON.parse return unchanged. */
function jsonExact(v: unknown): boolean {
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
  if (Array.isArray(v)) return v.every((e) => typeof e === 'string');
  return typeof v === 'string' || typeof v === 'boolean' || v === null;
}

/**
 * Every market ever ingested, by venue. Upserts merge: a field the venue did not send keeps its
 * previous value, so a sparse update (a lifecycle frame) never erases what a full listing said.
 * There is no map keyed by `venue:marketId` (each key would be a string of its own per market):
 * records are found through the per-venue maps, keyed by the record's own id, and `all()` walks a
 * list in insertion order.
 */
export class MarketCatalog {
  /** Every record, in the order first inserted (never removed). */
  private readonly records: MarketRecord[] = [];
  private readonly shared = new Interner();
  private readonly perVenue = new Map<VenueLabel, Map<string, MarketRecord>>();
  readonly changes$ = new Subject<CatalogChange>();
  /** Bumped on every change; consumers cache serialized views per version. */
  version = 0;
  /** Bumped when a record object is added or replaced (not when one changes in place): lists of records built from the catalog are current while it stands. */
  inserts = 0;
  /** The keys of `extra` kept per venue (`keptExtra`); a venue not named keeps all of its `extra`. */
  private readonly keep = new Map<VenueLabel, ReadonlySet<string>>();
  private readonly venues = new Map<VenueLabel, VenueConfig>();

  /**
   * @param venues the venues whose `extra` is cut to what is read (`READ_EXTRA`) and whose records
   * hold no `url` that the venue's template gives again; without them every key and URL is kept.
   */
  constructor(venues: readonly VenueConfig[] = []) {
    for (const v of venues) {
      this.keep.set(v.label, keptExtra(v.web.marketUrl));
      this.venues.set(v.label, v);
    }
  }

  /**
   * The page URL every reader falls back to when a record has none (`m.url ?? marketUrl(…)`, views/market.ts
   * and signals/engine.ts): the venue's template filled from the record's id and `extra`.
   */
  private templateUrl(m: MarketRecord): string | undefined {
    const v = this.venues.get(m.venue);
    if (v === undefined) return undefined;
    return marketUrl(v, nativeId(v, m.marketId), m.extra);
  }

  /**
   * Leaves out a record's `url` when the template gives the same (Polymarket's and Polymarket US's: about
   * 4 MiB at 108k markets), so every reader, the store and a snapshot see the same URL without it.
   */
  private dropTemplateUrl(m: MarketRecord): void {
    if (m.url !== undefined && m.url === this.templateUrl(m)) m.url = undefined;
  }

  get size(): number {
    return this.records.length;
  }

  get(venue: VenueLabel, marketId: string): MarketRecord | undefined {
    return this.perVenue.get(venue)?.get(marketId);
  }

  /** The record of a `marketKey` (venue labels hold no ':', so the first one separates). */
  byKey(key: string): MarketRecord | undefined {
    const i = key.indexOf(':');
    return i < 0 ? undefined : this.perVenue.get(key.slice(0, i))?.get(key.slice(i + 1));
  }

  /** Markets of one venue (live view; do not mutate). */
  venue(venue: VenueLabel): ReadonlyMap<string, MarketRecord> {
    return this.perVenue.get(venue) ?? new Map();
  }

  all(): IterableIterator<MarketRecord> {
    return this.records.values();
  }

  /** Applies an upsert; returns the record, or undefined when nothing changed. */
  upsert(ev: MarketUpsert): MarketRecord | undefined {
    const cur = this.get(ev.venue, ev.marketId);
    const keep = this.keep.get(ev.venue);
    const x = ev.extra !== undefined && keep !== undefined ? splitExtra(ev.extra, keep) : undefined;
    if (!cur) {
      const t = ev.localTimestamp;
      const rec = new CatalogRecord(ev, t, t, t);
      if (x !== undefined) {
        rec.extra = x.kept;
        CatalogRecord.setDropped(rec, x.dropped);
      }
      this.shared.record(rec as unknown as Record<string, unknown>);
      this.dropTemplateUrl(rec);
      this.insert(rec);
      this.changes$.next({ kind: 'added', market: rec });
      return rec;
    }
    let changed = false;
    const prevStatus = cur.status;
    const prevExtra = cur.extra;
    // The URL the record shows, in place while the upsert merges (compared and kept as any field), left out again after.
    const filled = cur.url === undefined;
    if (filled) cur.url = this.templateUrl(cur);
    for (const f of FIELDS) {
      const v = f === 'extra' && x !== undefined ? x.kept : ev[f];
      if (v === undefined) continue;
      const old = (cur as unknown as Record<string, unknown>)[f];
      if (old === v || (typeof v === 'object' && JSON.stringify(old) === JSON.stringify(v))) continue;
      (cur as unknown as Record<string, unknown>)[f] = v;
      changed = true;
    }
    if (x !== undefined && cur instanceof CatalogRecord) {
      const had = CatalogRecord.dropped(cur);
      if (had !== x.dropped) {
        CatalogRecord.setDropped(cur, x.dropped);
        if (had !== undefined) changed = true;
      }
    }
    if (!changed) {
      // Nothing changed, so neither did the template's URL: the record holds no url again, as before. (A url a
      // record holds is never its template's: every insert, restore and change leaves that one out.)
      if (filled) cur.url = undefined;
      return undefined;
    }
    this.shared.record(cur as unknown as Record<string, unknown>, cur.extra !== prevExtra);
    this.dropTemplateUrl(cur);
    cur.updatedAt = ev.localTimestamp;
    this.version++;
    this.changes$.next(prevStatus !== cur.status ? { kind: 'status', market: cur, previous: prevStatus } : { kind: 'updated', market: cur });
    return cur;
  }

  /** Applies a status change of a known market; unknown markets are ignored (returns false). */
  setStatus(ev: MarketStatusChange): boolean {
    const cur = this.get(ev.venue, ev.marketId);
    if (!cur) return false;
    const prev = cur.status;
    let changed = prev !== ev.status;
    cur.status = ev.status;
    if (ev.result !== undefined && ev.result !== cur.result) {
      cur.result = ev.result;
      changed = true;
    }
    if (ev.settlementValue !== undefined && ev.settlementValue !== cur.settlementValue) {
      cur.settlementValue = ev.settlementValue;
      changed = true;
    }
    if (ev.closeTime !== undefined && ev.closeTime !== cur.closeTime) {
      cur.closeTime = ev.closeTime;
      changed = true;
    }
    if (!changed) return false;
    cur.updatedAt = ev.localTimestamp;
    this.version++;
    this.changes$.next({ kind: 'status', market: cur, previous: prev });
    return true;
  }

  /** Loads a persisted record at start-up (no change event); returns the catalog's record of it. */
  restore(stored: MarketRecord): MarketRecord {
    const rec = new CatalogRecord(stored, stored.firstSeenAt, stored.recordedAt, stored.updatedAt);
    const keep = this.keep.get(stored.venue);
    if (stored.extra !== undefined && keep !== undefined) {
      // A record stored with every key of its extra (before they were cut) gives the hash of the rest;
      // one stored with the kept keys only leaves it unknown.
      const x = splitExtra(stored.extra, keep);
      rec.extra = x.kept;
      CatalogRecord.setDropped(rec, x.kept === stored.extra ? undefined : x.dropped);
    }
    this.shared.record(rec as unknown as Record<string, unknown>);
    this.dropTemplateUrl(rec);
    this.insert(rec);
    return rec;
  }

  private insert(rec: MarketRecord): void {
    let m = this.perVenue.get(rec.venue);
    if (!m) this.perVenue.set(rec.venue, (m = new Map()));
    const had = m.get(rec.marketId);
    // A record replaced keeps the market's id in the store.
    if (had !== undefined && storeIdOf(rec) === 0) setStoreId(rec, storeIdOf(had));
    m.set(rec.marketId, rec);
    if (had === undefined) this.records.push(rec);
    else this.records[this.records.indexOf(had)] = rec;
    this.version++;
    this.inserts++;
  }
}

/** A market's id in the store (0: none yet, or a record the catalog did not make). */
export function storeIdOf(m: MarketRecord): number {
  return m instanceof CatalogRecord ? CatalogRecord.storeId(m) : 0;
}

/** Gives a catalog record its id in the store (src/persist/store.ts); false for a record the catalog did not make. */
export function setStoreId(m: MarketRecord, id: number): boolean {
  if (!(m instanceof CatalogRecord)) return false;
  CatalogRecord.setStoreId(m, id);
  return true;
}

/** A record as persistence stores it: its defined fields only (an absent field then takes no bytes). */
export function storedMarket(m: MarketRecord): MarketRecord {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) if (v !== undefined) out[k] = v;
  return out as unknown as MarketRecord;
}

/** A market counts as live when active and not past its close time (spec 2.13 live_markets). */
export function isLive(m: MarketRecord, now: number): boolean {
  return m.status === 'active' && (m.closeTime === undefined || m.closeTime > now);
}
