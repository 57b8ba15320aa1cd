import type { FileHandle } from 'node:fs/promises';
import { ByteWriter, ParquetWriter, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import { unpack } from 'msgpackr';
import type { VenueConfig } from '../config/schema.js';
import { toCents } from '../core/price.js';
import type { NormalizedEvent } from '../core/types.js';
import { apiMarketId } from '../venues/protocol.js';
import type { CaptureRecord } from './record.js';
import type { ReplayItem } from './replay.js';

/**
 * `crossbook capture export --format parquet`: a window of the capture as one Parquet file, written
 * a row group at a time to a file handle (hyparquet-writer's `ParquetWriter`, Snappy), so memory
 * holds one row group however long the window. Two tables, one flat row shape each, so pandas and
 * DuckDB read them without unnesting:
 *
 * - **frames**: one row per capture record (`seq, recv_ts, venue, connection, kind, text`).
 * - **events**: one row per book level change. A `book_snapshot` gives a row per level (`side`
 *   bid/ask, `level` 0 = best, `price`, `size`), a `book_delta` a row per change (size 0 deletes),
 *   a trade one row (`side` buy/sell, `price`, `size`, `trade_id`, …), a quote one row
 *   (`yes_bid`, `yes_ask`, `last_price`); catalog, status and feed events one row with `status` and
 *   the event as JSON in `data`. The rows of one event share `event`, its number in the export
 *   (the line number of the same event in the NDJSON export), so `COUNT(DISTINCT event)` is the
 *   NDJSON count and `GROUP BY event` rebuilds an event. A book event without levels (an empty
 *   snapshot clears the book) is one row with null side, price and size.
 *
 * Prices are cents (0..100) as doubles, as the API shows them; times are TIMESTAMP(ms, UTC).
 */

/** Rows per row group: DuckDB's own default is 122,880; a row group is what one write holds in memory. */
export const ROW_GROUP_ROWS = 100_000;

type Kind = 'i64' | 'i32' | 'f64' | 'ts' | 'str' | 'json';

/** One column: its name, physical type and whether it may be null. */
interface Spec {
  readonly name: string;
  readonly kind: Kind;
  readonly optional?: boolean;
}

const FRAME_COLUMNS: readonly Spec[] = [
  { name: 'seq', kind: 'i64' },
  { name: 'recv_ts', kind: 'ts' },
  { name: 'venue', kind: 'str' },
  { name: 'connection', kind: 'i32' },
  { name: 'kind', kind: 'str' },
  { name: 'text', kind: 'str' },
];

/** What every event row has, in this order. */
const EVENT_HEAD: readonly Spec[] = [
  { name: 'event', kind: 'i64' },
  { name: 'seq', kind: 'i64' },
  { name: 'recv_ts', kind: 'ts' },
  { name: 'venue_ts', kind: 'ts' },
  { name: 'platform', kind: 'str' },
  { name: 'venue', kind: 'str' },
  { name: 'market_id', kind: 'str', optional: true },
  { name: 'instrument', kind: 'str', optional: true },
  { name: 'type', kind: 'str' },
];

/** What each kind of event fills after the head (null elsewhere). */
const TAIL = ['side', 'level', 'price', 'size', 'yes_bid', 'yes_ask', 'last_price', 'trade_id', 'taker_side', 'yes_price', 'status', 'data'] as const;
const TAIL_KINDS: Record<(typeof TAIL)[number], Kind> = {
  side: 'str',
  level: 'i32',
  price: 'f64',
  size: 'f64',
  yes_bid: 'f64',
  yes_ask: 'f64',
  last_price: 'f64',
  trade_id: 'str',
  taker_side: 'str',
  yes_price: 'f64',
  status: 'str',
  data: 'json',
};
const EVENT_COLUMNS: readonly Spec[] = [...EVENT_HEAD, ...TAIL.map((name) => ({ name, kind: TAIL_KINDS[name], optional: true }))];

/** The column names of each table, in file order. */
export const PARQUET_COLUMNS = { frames: FRAME_COLUMNS.map((c) => c.name), events: EVENT_COLUMNS.map((c) => c.name) } as const;

function element(s: Spec): SchemaElement {
  const repetition_type = s.optional ? 'OPTIONAL' : 'REQUIRED';
  switch (s.kind) {
    case 'i64':
      return { name: s.name, type: 'INT64', repetition_type };
    case 'i32':
      return { name: s.name, type: 'INT32', repetition_type };
    case 'f64':
      return { name: s.name, type: 'DOUBLE', repetition_type };
    case 'ts':
      return {
        name: s.name,
        type: 'INT64',
        repetition_type,
        converted_type: 'TIMESTAMP_MILLIS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
      };
    case 'str':
      return { name: s.name, type: 'BYTE_ARRAY', repetition_type, converted_type: 'UTF8', logical_type: { type: 'STRING' } };
    case 'json':
      return { name: s.name, type: 'BYTE_ARRAY', repetition_type, converted_type: 'JSON', logical_type: { type: 'JSON' } };
  }
}

/** A cell value as the writer takes it: bigint for INT64, number, string, an event for the JSON column; null when absent. */
type Cell = bigint | number | string | NormalizedEvent | null;

/** The sink hyparquet-writer writes through: its byte buffer, emptied into the file after each row group. */
class FileSink extends ByteWriter {
  constructor(private readonly fh: FileHandle) {
    super(1 << 20);
  }

  /** Called by the writer after each row group; it waits for the promise before the next one. */
  flush(): Promise<void> {
    // A copy: the writer reuses its buffer for the next row group as soon as this resolves.
    const bytes = Buffer.from(new Uint8Array(this.buffer, 0, this.index));
    this.index = 0;
    return this.fh.write(bytes).then(() => undefined);
  }

  // The library's Writer interface allows a promise here (ParquetWriter.finish returns it); only
  // ByteWriter's own declaration says void.
  // eslint-disable-next-line @typescript-eslint/no-misused-promises
  override finish(): Promise<void> {
    return this.flush();
  }
}

/** Rows gathered column by column until a row group is full, then written. */
class Table {
  private cols: Cell[][];
  private readonly writer: ParquetWriter;
  rows = 0;

  constructor(
    private readonly specs: readonly Spec[],
    fh: FileHandle,
    private readonly groupRows: number,
  ) {
    this.cols = specs.map(() => []);
    const schema: SchemaElement[] = [{ name: 'root', num_children: specs.length }, ...specs.map(element)];
    this.writer = new ParquetWriter({ writer: new FileSink(fh), schema, createdBy: 'crossbook capture export (hyparquet-writer)' });
  }

  /** One row, its cells in column order; true when the row group is full (then `await writeGroup()`). */
  push(cells: readonly Cell[]): boolean {
    for (let c = 0; c < cells.length; c++) this.cols[c]!.push(cells[c]!);
    this.rows++;
    return this.cols[0]!.length >= this.groupRows;
  }

  /** Writes the last row group and the footer. */
  async finish(): Promise<void> {
    if (this.cols[0]!.length > 0 || this.rows === 0) await this.writeGroup();
    await this.writer.finish();
  }

  /** Writes the rows gathered as one row group (the file handle's write awaited before the next rows). */
  async writeGroup(): Promise<void> {
    const n = this.cols[0]!.length;
    // Frame texts and event JSON are mostly distinct: a dictionary or min/max statistics of them cost
    // time and buy nothing.
    const columnData: ColumnSource[] = this.specs.map((s, c) =>
      s.kind === 'json' || s.name === 'text'
        ? { name: s.name, data: this.cols[c]!, encoding: 'PLAIN', statistics: false }
        : { name: s.name, data: this.cols[c]! },
    );
    this.cols = this.specs.map(() => []);
    await this.writer.write({ columnData, rowGroupSize: Math.max(n, 1) });
  }
}

const BIG = (n: number): bigint => BigInt(n);
const cents = (units: number | undefined): number | null => (units === undefined || !Number.isFinite(units) ? null : toCents(units));
const str = (s: string | undefined): string | null => (s === undefined ? null : s);

/** Options of a Parquet export. */
export interface ParquetExportOptions {
  /** Rows per row group (default ROW_GROUP_ROWS). */
  readonly rowGroupRows?: number | undefined;
}

/** The capture records of a window as the frames table; returns the number of rows. */
export async function writeFramesParquet(batches: AsyncIterable<readonly CaptureRecord[]>, fh: FileHandle, opts: ParquetExportOptions = {}): Promise<number> {
  const t = new Table(FRAME_COLUMNS, fh, opts.rowGroupRows ?? ROW_GROUP_ROWS);
  for await (const batch of batches) for (const r of batch) if (t.push([BIG(r.seq), r.t, r.venue, r.conn, r.kind, frameText(r)])) await t.writeGroup();
  await t.finish();
  return t.rows;
}

/** A record's text: the frame, REST document or reset as captured; an event the protocol built as its JSON. */
export function frameText(r: CaptureRecord): string {
  return typeof r.payload === 'string' ? r.payload : JSON.stringify(unpack(r.payload) as unknown);
}

/**
 * The normalized events of replay items as the events table (flush markers left out); returns the
 * number of events written (rows may be more: one per book level).
 */
export async function writeEventsParquet(
  items: AsyncIterable<readonly ReplayItem[]>,
  venues: readonly VenueConfig[],
  fh: FileHandle,
  opts: ParquetExportOptions = {},
): Promise<number> {
  const t = new Table(EVENT_COLUMNS, fh, opts.rowGroupRows ?? ROW_GROUP_ROWS);
  const byLabel = new Map(venues.map((v) => [v.label, v]));
  let n = 0;
  for await (const batch of items)
    for (const it of batch) {
      if (it.type !== 'event') continue;
      const v = byLabel.get(it.event.venue);
      if (v === undefined) continue;
      for (const row of eventRows(n, it.seq, v, it.event)) if (t.push(row)) await t.writeGroup();
      n++;
    }
  await t.finish();
  return n;
}

/** The columns after the head that an event fills; the others are null. */
type Tail = Partial<Record<(typeof TAIL)[number], Cell>>;

function row(head: readonly Cell[], tail: Tail): Cell[] {
  const out = head.slice();
  for (const name of TAIL) out.push(tail[name] ?? null);
  return out;
}

/** The rows of one event (see the module comment for the shape). */
function* eventRows(n: number, seq: number, v: VenueConfig, e: NormalizedEvent): Generator<Cell[]> {
  const id = 'marketId' in e ? apiMarketId(v, e.marketId) : null;
  const instrument = 'instrument' in e ? str(e.instrument) : null;
  const head: Cell[] = [BIG(n), BIG(seq), e.localTimestamp, e.timestamp, v.slug, e.venue, id, instrument, e.type];
  switch (e.type) {
    case 'book_snapshot':
      if (e.bids.length === 0 && e.asks.length === 0) yield row(head, {});
      for (let i = 0; i < e.bids.length; i++) yield row(head, { side: 'bid', level: i, price: cents(e.bids[i]![0]), size: e.bids[i]![1] });
      for (let i = 0; i < e.asks.length; i++) yield row(head, { side: 'ask', level: i, price: cents(e.asks[i]![0]), size: e.asks[i]![1] });
      return;
    case 'book_delta':
      if (e.changes.length === 0) yield row(head, {});
      for (const [side, price, size] of e.changes) yield row(head, { side, price: cents(price), size });
      return;
    case 'trade':
      yield row(head, {
        side: str(e.side),
        price: cents(e.price),
        size: e.size,
        trade_id: e.tradeId,
        taker_side: str(e.takerSide),
        yes_price: cents(e.yesPrice),
      });
      return;
    case 'quote':
      yield row(head, { yes_bid: cents(e.yesBid), yes_ask: cents(e.yesAsk), last_price: cents(e.lastPrice) });
      return;
    case 'feed':
      yield row(head, { status: e.state, data: e });
      return;
    case 'market':
    case 'market_status':
      yield row(head, { status: e.status, data: e });
      return;
  }
}
