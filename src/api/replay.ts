import { z } from 'zod';
import type { Api } from '../access/api.js';
import { p } from '../access/params.js';
import { readBatches, ReplayFeed, type Capture, type CaptureSettings, type ReplayItem } from '../capture/index.js';
import type { Logger } from '../core/log.js';
import type { NormalizedEvent, NormalizedType } from '../core/types.js';
import { errorReply, type Reply } from '../server/http.js';
import { apiMarketId } from '../venues/protocol.js';
import type { ApiContext } from './context.js';

/** The event groups `types` selects, and the normalized event types of each. */
const TYPE_GROUPS = {
  book: ['book_snapshot', 'book_delta'],
  trade: ['trade'],
  price: ['quote'],
  status: ['market_status', 'feed'],
  market: ['market'],
} as const satisfies Record<string, readonly NormalizedType[]>;
type TypeGroup = keyof typeof TYPE_GROUPS;
const GROUPS = Object.keys(TYPE_GROUPS) as TypeGroup[];

/** Bytes of NDJSON gathered before a chunk is handed to the socket. */
const CHUNK = 64 * 1024;

/** What the route reads: the capture (absent: off) and its retention. */
export interface ReplaySource {
  readonly capture: Capture | undefined;
  readonly settings: CaptureSettings;
  readonly now: () => number;
  readonly log: Logger;
}

/**
 * GET /api/v2/replay: the normalized events of a window of the capture log as NDJSON, in receive
 * order, produced again from the captured frames by the live frame path and mappers (so a mapper
 * fixed later serves its fix on old frames). Streams with backpressure (src/server/http.ts `pipe`):
 * the reader holds one decompressed block per venue and one 64 KiB chunk, however long the window.
 */
export function registerReplay(api: Api, ctx: ApiContext, src: ReplaySource): void {
  const slugs = ctx.venues.slugs();
  const query = z.object({
    from: p.msOrIso({ required: true, description: 'start of the window (receive time): ms since the epoch or ISO 8601' }),
    to: p.msOrIso({ required: true, description: 'end of the window, inclusive: ms since the epoch or ISO 8601' }),
    platform: p.enum(slugs, { description: 'one venue (default: all)' }),
    market_ids: p.list({ max: 1000, description: 'only events of these markets (ids as the API serves them); feed events have no market and are left out' }),
    types: p.list({
      values: GROUPS,
      description: 'book (snapshots, deltas), trade, price (venue tickers), status (market status, feed events), market (catalog upserts); default: all',
    }),
  });
  api.route({
    path: '/replay',
    summary: 'Replay the normalized events of a window (NDJSON)',
    description:
      'Streams the normalized events of [from, to] as NDJSON in receive order, built again from the captured venue frames by the live mappers: one JSON object per line with seq (capture order), recv_ts (receive time, ms), platform and market_id, then the event (type, venue timestamp, fields). The last line is {"type":"end","count":N}; a line {"type":"error",...} instead means the capture could not be read further. A window outside what capture retains is a 400 (capture.retention in days and bytes). The last second of capture may not be written yet. A window that starts mid-session starts with fresh mappers, as a new connection would: a book appears with its next snapshot.',
    tags: ['replay'],
    endpoint: 'replay',
    query,
    contentType: 'application/x-ndjson',
    responseDescription: 'NDJSON: one event per line, then {"type":"end","count":N}',
    handler: ({ query: q }): Reply => {
      const from = q.from!;
      const to = q.to!;
      if (from > to) return errorReply(400, 'validation.invalid', `from (${iso(from)}) is after to (${iso(to)})`);
      const refusal = outsideRetention(src, from, to);
      if (refusal) return refusal;
      const venues = q.platform === undefined ? undefined : ctx.config.venues.filter((v) => v.slug === q.platform).map((v) => v.label);
      const groups: readonly TypeGroup[] = Array.isArray(q.types) ? q.types : GROUPS;
      const types = new Set<NormalizedType>(groups.flatMap((g) => TYPE_GROUPS[g]));
      const markets = Array.isArray(q.market_ids) ? new Set(q.market_ids) : undefined;
      const feed = new ReplayFeed(ctx.config.venues, src.log);
      const items = feed.items(readBatches(src.capture!.store, { from, to, venues, flushes: false }));
      return { status: 200, body: '', contentType: 'application/x-ndjson', stream: ndjson(items, lineWriter(ctx, types, markets)) };
    },
  });
}

/** The 400 of a window the capture does not hold, or undefined. */
function outsideRetention(src: ReplaySource, from: number, to: number): Reply | undefined {
  if (src.capture === undefined)
    return errorReply(400, 'replay.capture_off', 'capture is turned off on this server (capture.enabled false): nothing to replay');
  const now = src.now();
  const oldest = src.capture.store.oldest();
  if (oldest === undefined) return errorReply(400, 'replay.outside_retention', 'nothing has been captured yet');
  const start = Math.max(oldest, now - src.settings.retentionMs);
  if (to < start || from > now)
    return errorReply(
      400,
      'replay.outside_retention',
      `the window ${iso(from)} .. ${iso(to)} is outside what capture retains: ${iso(start)} .. now (${iso(now)})`,
      {
        retained_from: start,
        retained_to: now,
      },
    );
  return undefined;
}

/** An event → its NDJSON line (without the newline), or undefined when the filters leave it out. */
function lineWriter(
  ctx: ApiContext,
  types: ReadonlySet<NormalizedType>,
  markets: ReadonlySet<string> | undefined,
): (seq: number, e: NormalizedEvent) => string | undefined {
  const prefixes = new Map<string, { slug: string; idOf: (id: string) => string }>();
  for (const v of ctx.config.venues) prefixes.set(v.label, { slug: JSON.stringify(v.slug), idOf: (id) => apiMarketId(v, id) });
  return (seq, e) => {
    if (!types.has(e.type)) return undefined;
    const v = prefixes.get(e.venue);
    if (v === undefined) return undefined;
    const id = 'marketId' in e ? v.idOf(e.marketId) : undefined;
    if (markets !== undefined && (id === undefined || !markets.has(id))) return undefined;
    const head = `{"seq":${seq},"recv_ts":${e.localTimestamp},"platform":${v.slug},`;
    return id === undefined ? head + JSON.stringify(e).slice(1) : `${head}"market_id":${JSON.stringify(id)},${JSON.stringify(e).slice(1)}`;
  };
}

/** Items → NDJSON chunks of about CHUNK bytes, then the end line (or an error line). */
async function* ndjson(items: AsyncIterable<ReplayItem[]>, line: (seq: number, e: NormalizedEvent) => string | undefined): AsyncGenerator<string> {
  let chunk = '';
  let count = 0;
  try {
    for await (const batch of items) {
      for (let i = 0; i < batch.length; i++) {
        const it = batch[i]!;
        if (it.type !== 'event') continue;
        const l = line(it.seq, it.event);
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
  yield `${chunk}${JSON.stringify({ type: 'end', count })}\n`;
}

function iso(t: number): string {
  return Number.isFinite(t) && Math.abs(t) < 8.64e15 ? new Date(t).toISOString() : String(t);
}
