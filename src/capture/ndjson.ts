import { unpack } from 'msgpackr';
import type { VenueConfig } from '../config/schema.js';
import type { NormalizedEvent, NormalizedType } from '../core/types.js';
import { apiMarketId } from '../venues/protocol.js';
import type { CaptureRecord } from './record.js';
import type { ReplayItem } from './replay.js';

/** The event groups a replay selects by (`types`), and the normalized event types of each. */
export const TYPE_GROUPS = {
  book: ['book_snapshot', 'book_delta'],
  trade: ['trade'],
  price: ['quote'],
  status: ['market_status', 'feed'],
  market: ['market'],
} as const satisfies Record<string, readonly NormalizedType[]>;
export type TypeGroup = keyof typeof TYPE_GROUPS;
export const TYPE_GROUP_NAMES = Object.keys(TYPE_GROUPS) as TypeGroup[];

/** Which events a line writer keeps: types (default all) and market ids as the API serves them (default all). */
export interface EventFilter {
  readonly types?: readonly TypeGroup[] | undefined;
  readonly markets?: ReadonlySet<string> | undefined;
}

/**
 * A replayed event → its NDJSON line (no newline): `{"seq","recv_ts","platform","market_id",…the
 * event}`, or undefined when the filter leaves it out. Shared by GET /replay and `crossbook capture
 * export --events`, so both write the same lines.
 */
export function eventLineWriter(venues: readonly VenueConfig[], filter: EventFilter = {}): (seq: number, e: NormalizedEvent) => string | undefined {
  const types = new Set<NormalizedType>((filter.types ?? TYPE_GROUP_NAMES).flatMap((g) => TYPE_GROUPS[g]));
  const markets = filter.markets;
  const byLabel = new Map<string, { slug: string; idOf: (id: string) => string }>();
  for (const v of venues) byLabel.set(v.label, { slug: JSON.stringify(v.slug), idOf: (id) => apiMarketId(v, id) });
  return (seq, e) => {
    if (!types.has(e.type)) return undefined;
    const v = byLabel.get(e.venue);
    if (v === undefined) return undefined;
    const id = 'marketId' in e ? v.idOf(e.marketId) : undefined;
    if (markets !== undefined && (id === undefined || !markets.has(id))) return undefined;
    const head = `{"seq":${seq},"recv_ts":${e.localTimestamp},"platform":${v.slug},`;
    return id === undefined ? head + JSON.stringify(e).slice(1) : `${head}"market_id":${JSON.stringify(id)},${JSON.stringify(e).slice(1)}`;
  };
}

/** A capture record → its NDJSON line: seq, venue, recv_ts, kind, conn and the payload (an event as its object). */
export function recordLine(r: CaptureRecord): string {
  const payload = r.kind === 'event' ? (unpack(r.payload as Uint8Array) as unknown) : r.payload;
  return JSON.stringify({ seq: r.seq, venue: r.venue, recv_ts: r.t, kind: r.kind, conn: r.conn, payload });
}

/** Bytes of NDJSON gathered before a chunk is handed on. */
const CHUNK = 64 * 1024;

/**
 * Batches → NDJSON chunks of about 64 KiB, then `{"type":"end","count":N}` (N counted from `count0`: lines
 * served before, by the normalized cache; or, when reading fails,
 * `{"type":"error","error":…,"count":N}` so a reader can tell a cut-off answer from a whole one).
 */
export async function* ndjsonChunks<T>(batches: AsyncIterable<readonly T[]>, line: (item: T) => string | undefined, count0 = 0): AsyncGenerator<string> {
  let chunk = '';
  let count = count0;
  try {
    for await (const batch of batches) {
      for (let i = 0; i < batch.length; i++) {
        const l = line(batch[i]!);
        if (l === undefined) continue;
        chunk += `${l}\n`;
        count++;
      }
      if (chunk.length >= CHUNK) {
        yield chunk;
        chunk = '';
      }
    }
  } catch (e) {
    yield `${chunk}${JSON.stringify({ type: 'error', error: e instanceof Error ? e.message : String(e), count })}\n`;
    return;
  }
  yield chunk + endLine(count);
}

/** The last line of a whole answer. */
export function endLine(count: number): string {
  return `${JSON.stringify({ type: 'end', count })}\n`;
}

/** The line of a replay item with `write`, flush markers left out. */
export function itemLine(write: (seq: number, e: NormalizedEvent) => string | undefined): (item: ReplayItem) => string | undefined {
  return (it) => (it.type === 'event' ? write(it.seq, it.event) : undefined);
}
