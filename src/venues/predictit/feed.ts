import { defer, exhaustMap, from, mergeMap, timer, type Observable } from 'rxjs';
import { z } from 'zod';
import type { FeedEvent, NormalizedEvent } from '../../core/types.js';
import { getJson, url, VenueHttpError } from '../common/http.js';
import { FeedStats } from '../common/stats.js';
import type { FeedContext, VenueFeed } from '../protocol.js';
import { PredictItMapper } from './mappers.js';

/**
 * PredictIt has no stream: the feed polls `GET {rest}/all` every `ingest.pollMs` (one request in
 * flight at a time; a tick that finds the previous poll still running is skipped) and lets the
 * mapper turn each document into the changes since the previous one. The whole document goes to
 * the mapper unvalidated so that one bad market or contract is counted and dropped on its own
 * instead of failing the poll.
 */
export function createPredictItFeed(ctx: FeedContext): VenueFeed {
  const logger = ctx.log.child({ venue: ctx.venue.label, protocol: 'predictit' });
  const stats = new FeedStats(logger);
  const events$ = defer((): Observable<NormalizedEvent> => {
    const mapper = new PredictItMapper(ctx.venue, stats);
    const poll = pollWith(ctx, stats, (doc, at) => mapper.map(doc, at));
    return timer(0, ctx.ingest.pollMs).pipe(
      exhaustMap(() => from(poll())),
      mergeMap((events) => from(events)),
    );
  });
  return { venue: ctx.venue, stats, events$ };
}

/**
 * One GET of `{rest}/all` per call, turned into events, with `feed` events on the transitions
 * between reachable and not: `connected` after the first good poll and after a recovery, `error`
 * once when polls start failing. Never rejects.
 */
function pollWith(ctx: FeedContext, stats: FeedStats, map: (doc: unknown, localTimestamp: number) => NormalizedEvent[]): () => Promise<NormalizedEvent[]> {
  let healthy: boolean | undefined;
  const feed = (state: FeedEvent['state'], detail?: string): FeedEvent => {
    const now = Date.now();
    return detail === undefined
      ? { type: 'feed', venue: ctx.venue.label, timestamp: now, localTimestamp: now, state }
      : { type: 'feed', venue: ctx.venue.label, timestamp: now, localTimestamp: now, state, detail };
  };
  return async () => {
    try {
      const doc = await getJson(url(ctx.endpoints.rest, 'all'), z.unknown());
      const out: NormalizedEvent[] = [];
      if (healthy !== true) {
        if (healthy === false) stats.reconnects++;
        healthy = true;
        out.push(feed('connected'));
      }
      for (const e of map(doc, Date.now())) out.push(e);
      // Each successful poll is a full catalog refresh (PredictIt serves everything in one document).
      out.push(feed('catalog'));
      return out;
    } catch (e) {
      const kind = e instanceof VenueHttpError ? e.kind : 'network';
      if (kind === 'json' || kind === 'schema') stats.malformedFrame(`http_${kind}`, (e as Error).message);
      if (healthy === false) return [];
      healthy = false;
      return [feed('error', (e as Error).message)];
    }
  };
}
