import type { z } from 'zod';
import type { Reply } from '../server/http.js';
import type { StoredTrade } from '../state/trades.js';
import type { Trade } from '../views/schemas.js';
import { encodeCursor } from './context.js';
import type { TradesPage } from './trades.js';

/** A key of the trade time index: [timestamp ms, seq] (Persistence.appendTrade). */
export type TimeKey = readonly [number, number];

/** Index order of two keys: by time, then by arrival. */
export function compareKeys(a: TimeKey, b: TimeKey): number {
  return a[0] - b[0] || a[1] - b[1];
}

/** What a /trades page lists: the filters a trade must pass and the part of the time index it reads. */
export interface PageScope {
  /** Venue labels whose trades the page shows. */
  readonly labels: ReadonlySet<string>;
  readonly marketId?: string | undefined;
  readonly tokenId?: string | undefined;
  /** Lowercase maker or taker address. */
  readonly wallet?: string | undefined;
  readonly minTotal?: number | undefined;
  readonly desc: boolean;
  readonly limit: number;
  readonly startMs: number;
  readonly endMs: number;
  /** The pagination key the page resumes after (exclusive). */
  readonly after: TimeKey | undefined;
}

/** Whether a stored trade passes a page's filters other than notional (which needs its JSON). */
export function passesFilters(s: PageScope, t: StoredTrade): boolean {
  if (!s.labels.has(t.venue)) return false;
  if (s.marketId !== undefined && t.marketId !== s.marketId) return false;
  if (s.tokenId !== undefined && t.instrument !== s.tokenId) return false;
  return s.wallet === undefined || t.maker?.toLowerCase() === s.wallet || t.taker?.toLowerCase() === s.wallet;
}

/** A trade row of a page: its index key and its JSON as bytes (a page is written by copying its rows' bytes). */
export interface PageRow {
  readonly key: TimeKey;
  readonly json: Buffer;
}

/** A row of `record`, keyed `key`. */
function pageRow(key: TimeKey, record: z.output<typeof Trade>): PageRow {
  return { key, json: Buffer.from(JSON.stringify(record)) };
}

const OPEN = Buffer.from('{"trades":[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from('],');

/** A trade as pages list it: the stored trade (for the filters), its row and the row's notional. */
export interface KnownTrade {
  readonly trade: StoredTrade;
  readonly row: PageRow;
  /** The record's amount_usd, which min_total is compared with. */
  readonly amountUsd: number;
}

/**
 * The trades pages listed or were told of, by seq, with their row bytes: a page built again at a
 * new second (its "now" moved) copies them instead of reading each trade from the log, decoding it
 * and writing its JSON again, and a committed trade's row is written once for every page that
 * takes it. A trade's row is a function of the stored trade alone, which the log never rewrites
 * under its seq (appended once, then pruned). Kept for two seconds of pages: a row not listed by a
 * page built in the second before is let go.
 */
export class TradeRows {
  private current = new Map<number, KnownTrade>();
  private previous = new Map<number, KnownTrade>();
  /** Rows written from a stored trade (for tests and benches). */
  written = 0;

  /** The known trade of `seq`, kept for this second too. */
  get(seq: number): KnownTrade | undefined {
    let known = this.current.get(seq);
    if (known === undefined) {
      known = this.previous.get(seq);
      if (known !== undefined) this.current.set(seq, known);
    }
    return known;
  }

  /** Keeps the row of a trade read from the log (`record` is its JSON record). */
  add(key: TimeKey, trade: StoredTrade, record: z.output<typeof Trade>): KnownTrade {
    const known: KnownTrade = { trade, row: pageRow(key, record), amountUsd: record.amount_usd };
    this.written++;
    this.current.set(key[1], known);
    return known;
  }

  /** A new second: what no page listed in the second before goes. */
  age(): void {
    this.previous = this.current;
    this.current = new Map();
  }

  clear(): void {
    this.current.clear();
    this.previous.clear();
  }
}

type Meta = z.output<typeof TradesPage>['_meta'];

/**
 * One /trades page: its rows, whether more follow, and its reply. Its body is written from the
 * rows' JSON bytes, so a page that takes a newly committed trade is written again without reading
 * the log (the same bytes as JSON.stringify of the whole TradesPage object).
 */
export class TradePage {
  private written: Reply | undefined;

  constructor(
    readonly scope: PageScope,
    private readonly rows: PageRow[],
    private hasMore: boolean,
    private readonly meta: Meta,
  ) {}

  /** The page's reply, written from its rows when it is first asked for after a change (commits between two reads cost one write). */
  get reply(): Reply {
    return (this.written ??= this.render());
  }

  /**
   * Takes a trade that passed the page's filters when it falls within what the page covers: the
   * window, past its pagination key, and (when more follow) no further than its last row, beyond
   * which a trade belongs to a later page. Returns whether the page changed.
   */
  take(t: KnownTrade): boolean {
    const s = this.scope;
    const k = t.row.key;
    if (k[0] < s.startMs || k[0] > s.endMs) return false;
    if (s.minTotal !== undefined && t.amountUsd < s.minTotal) return false;
    // In the page's reading order: negative when k comes before the other key.
    const order = (o: TimeKey): number => (s.desc ? compareKeys(o, k) : compareKeys(k, o));
    if (s.after && order(s.after) <= 0) return false;
    if (this.hasMore && order(this.rows[this.rows.length - 1]!.key) > 0) return false;
    let i = this.rows.length;
    while (i > 0 && order(this.rows[i - 1]!.key) < 0) i--;
    this.rows.splice(i, 0, t.row);
    if (this.rows.length > s.limit) {
      this.rows.pop();
      this.hasMore = true;
    }
    return true;
  }

  /** Drops the written reply (after `take`): the next read writes it again. */
  refresh(): void {
    this.written = undefined;
  }

  private render(): Reply {
    const s = this.scope;
    const last = this.hasMore ? this.rows[this.rows.length - 1]?.key : undefined;
    const key = last ? encodeCursor({ t: last[0], s: last[1], a: s.startMs, b: s.endMs, o: s.desc ? 'desc' : 'asc' }) : null;
    // The page but its trades, in TradesPage's key order (its JSON is spliced in after "trades").
    const rest: Omit<z.output<typeof TradesPage>, 'trades'> = {
      pagination: { limit: s.limit, count: this.rows.length, pagination_key: key, has_more: this.hasMore },
      next_cursor: key,
      _meta: this.meta,
    };
    // Bytes, so a cached page is not encoded again on every send; copied from the rows' bytes, which
    // costs a tenth of joining their texts and encoding the result.
    const parts: Buffer[] = [OPEN];
    let size = OPEN.length;
    for (let i = 0; i < this.rows.length; i++) {
      if (i > 0) parts.push(COMMA);
      parts.push(this.rows[i]!.json);
      size += this.rows[i]!.json.length + (i > 0 ? 1 : 0);
    }
    const tail = Buffer.from(JSON.stringify(rest).slice(1));
    parts.push(CLOSE, tail);
    return { status: 200, body: Buffer.concat(parts, size + CLOSE.length + tail.length) };
  }
}

/**
 * The /trades pages of the current second, by parsed query (the access layer hands out one object
 * per distinct query string). A committed trade changes only the pages it belongs to, and those
 * take it in place (`commit`); the rest stay as they were. A new second (every page's "now"), a
 * prune or a trade older than the whole log (the retention boundary moves) empties it. Their
 * trades' rows are kept beside them (`rows`) for the pages of the next second.
 */
export class TradePages {
  private readonly pages = new Map<object, TradePage>();
  private second = -1;
  readonly rows = new TradeRows();
  /** Pages built from the log, and pages written again with committed trades (for tests and benches). */
  built = 0;
  patched = 0;

  constructor(private readonly max = 1000) {}

  /** The cached page of `query` at `now` (the end of the current second), if any. */
  get(query: object, now: number): TradePage | undefined {
    if (now !== this.second) {
      this.pages.clear();
      this.rows.age();
      this.second = now;
    }
    return this.pages.get(query);
  }

  /** Keeps a page built for `query` at the current second. */
  put(query: object, page: TradePage): void {
    this.built++;
    if (this.pages.size < this.max) this.pages.set(query, page);
  }

  /** Committed trades (in arrival order): each page they belong to takes them and is written again once. */
  commit(trades: readonly KnownTrade[]): void {
    for (const page of this.pages.values()) {
      let changed = false;
      for (const t of trades) if (passesFilters(page.scope, t.trade) && page.take(t)) changed = true;
      if (changed) {
        page.refresh();
        this.patched++;
      }
    }
  }

  /** The log moved other than by appends (a prune, a trade older than all): pages and rows go. */
  clear(): void {
    this.pages.clear();
    this.rows.clear();
  }
}
