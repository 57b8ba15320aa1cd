import { z } from 'zod';
import type { Api } from '../access/api.js';
import { p } from '../access/params.js';
import { eventLineWriter, itemLine, ndjsonChunks, TYPE_GROUP_NAMES, type EventFilter } from '../capture/ndjson.js';
import { readBatches, ReplayFeed, type Capture, type CaptureSettings } from '../capture/index.js';
import type { NormCache } from '../capture/normcache.js';
import { iso } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { errorReply, type Reply } from '../server/http.js';
import type { ApiContext } from './context.js';

/** What the route reads: the capture (absent: off) and its retention. */
export interface ReplaySource {
  readonly capture: Capture | undefined;
  readonly settings: CaptureSettings;
  readonly now: () => number;
  readonly log: Logger;
  /** The normalized cache of this process's capture (absent: every window is mapped from the frames). */
  readonly norm?: NormCache | undefined;
}

/**
 * GET /api/v2/replay: the normalized events of a window of the capture log as NDJSON, in receive
 * order, as the live frame path and mappers make them of the captured frames (so a mapper fixed later
 * serves its fix on old frames). Served from the normalized cache (src/capture/normcache.ts) when the
 * window lies in this process's capture run (the run's lines from `from` on), keyed by the normalizer
 * version, else mapped from the frames (fresh mappers at `from`). Streams with backpressure (src/server/http.ts `pipe`): the
 * reader holds one decompressed block per venue (two from the cache: one read ahead) and one chunk,
 * however long the window.
 */
export function registerReplay(api: Api, ctx: ApiContext, src: ReplaySource): void {
  const slugs = ctx.venues.slugs();
  const query = z.object({
    from: p.msOrIso({ required: true, description: 'start of the window (receive time): ms since the epoch or ISO 8601' }),
    to: p.msOrIso({ required: true, description: 'end of the window, inclusive: ms since the epoch or ISO 8601' }),
    platform: p.enum(slugs, { description: 'one venue (default: all)' }),
    market_ids: p.list({ max: 1000, description: 'only events of these markets (ids as the API serves them); feed events have no market and are left out' }),
    types: p.list({
      values: TYPE_GROUP_NAMES,
      description: 'book (snapshots, deltas), trade, price (venue tickers), status (market status, feed events), market (catalog upserts); default: all',
    }),
  });
  api.route({
    path: '/replay',
    summary: 'Replay the normalized events of a window (NDJSON)',
    description:
      'Streams the normalized events of [from, to] as NDJSON in receive order, built again from the captured venue frames by the live mappers: one JSON object per line with seq (capture order), recv_ts (receive time, ms), platform and market_id, then the event (type, venue timestamp, fields). The last line is {"type":"end","count":N}; a line {"type":"error",...} instead means the capture could not be read further. A window outside what capture retains is a 400 (capture.retention in days and bytes). The last second of capture may not be written yet. A window inside the server\'s current capture run is served from a normalized cache the server keeps of what the mappers made of its frames as the run went (capture.replayCache, on by default): the run\'s events from `from` on, as live made them (a window that starts mid-run gets the book deltas from `from` on, the same lines a window from the run\'s start has there), keyed by the version of the mapper code: a mapper fixed later has another version, so the old cache is not used and the fix is served. Other windows (before the run, or with the cache off) are mapped from the frames with fresh mappers at `from`, as a new connection would: a book appears with its next snapshot.',
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
      const filter: EventFilter = {
        types: Array.isArray(q.types) ? q.types : undefined,
        markets: Array.isArray(q.market_ids) ? new Set(q.market_ids) : undefined,
      };
      const line = itemLine(eventLineWriter(ctx.config.venues, filter));
      // The frames path: the records of the window through fresh mappers, lines of records after `after` counted from `count`.
      const frames = (after: number, count: number): AsyncGenerator<string> =>
        ndjsonChunks(
          new ReplayFeed(ctx.config.venues, src.log).items(readBatches(src.capture!.store, { from, to, venues, flushes: false })),
          after === -Infinity ? line : (it) => (it.seq > after ? line(it) : undefined),
          count,
        );
      const labels = venues ?? ctx.config.venues.map((v) => v.label);
      return { status: 200, body: '', contentType: 'application/x-ndjson', stream: replayChunks(src, labels, { from, to, filter }, frames) };
    },
  });
}

/**
 * The answer's chunks: from the normalized cache when the window lies in its run (brought up to the
 * capture first), else from the frames.
 */
async function* replayChunks(
  src: ReplaySource,
  labels: readonly string[],
  w: { readonly from: number; readonly to: number; readonly filter: EventFilter },
  frames: (after: number, count: number) => AsyncGenerator<string>,
): AsyncGenerator<string | Uint8Array> {
  const norm = src.norm;
  if (norm !== undefined) {
    const synced = await norm.sync().then(
      () => true,
      () => false,
    );
    if (synced && norm.serves(labels, w.from)) {
      norm.counts.served++;
      yield* norm.lines(labels, {
        from: w.from,
        to: w.to,
        filter: w.filter,
        fallback: frames,
        log: src.log,
        onFallback: () => norm.counts.fellBack++,
      });
      return;
    }
  }
  yield* frames(-Infinity, 0);
}

/** Why a window cannot be replayed (its code, in words, and what the capture holds), or undefined. */
export interface WindowRefusal {
  readonly code: 'replay.capture_off' | 'replay.outside_retention';
  readonly message: string;
  readonly retained?: { readonly retained_from: number; readonly retained_to: number } | undefined;
}

/**
 * Whether the capture holds [from, to]: the one check of a replay window, for GET /replay and the
 * WebSocket replay (src/ws/replay-session.ts).
 */
export function windowRefusal(src: Pick<ReplaySource, 'capture' | 'settings' | 'now'>, from: number, to: number): WindowRefusal | undefined {
  if (src.capture === undefined)
    return { code: 'replay.capture_off', message: 'capture is turned off on this server (capture.enabled false): nothing to replay' };
  const now = src.now();
  const oldest = src.capture.store.oldest();
  if (oldest === undefined) return { code: 'replay.outside_retention', message: 'nothing has been captured yet' };
  const start = Math.max(oldest, now - src.settings.retentionMs);
  if (to < start || from > now)
    return {
      code: 'replay.outside_retention',
      message: `the window ${iso(from)} .. ${iso(to)} is outside what capture retains: ${iso(start)} .. now (${iso(now)})`,
      retained: { retained_from: start, retained_to: now },
    };
  return undefined;
}

/** The 400 of a window the capture does not hold, or undefined. */
export function outsideRetention(src: ReplaySource, from: number, to: number): Reply | undefined {
  const r = windowRefusal(src, from, to);
  return r && errorReply(400, r.code, r.message, r.retained);
}
