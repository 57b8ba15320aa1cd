import { z } from 'zod';
import { getJson, url } from '../common/http.js';
import { createVenueFeed } from '../common/runtime.js';
import type { FeedContext, VenueFeed } from '../protocol.js';
import { PredictItMapper } from './mappers.js';

/**
 * PredictIt has no stream: the feed polls `GET {rest}/all` `ingest.pollMs` after the previous poll
 * ended (one request in flight at a time) and lets the mapper turn each document into the changes
 * since the previous one. The whole document goes to the mapper unvalidated so that one bad
 * market or contract is counted and dropped on its own instead of failing the poll. `feed` events
 * follow reachability: `connected` after the first good poll and after a recovery, `error` once
 * when polls start failing; each good poll is also a `catalog` refresh.
 */
export function createPredictItFeed(ctx: FeedContext): VenueFeed {
  return createVenueFeed(ctx, 'predictit', (rt) => ({
    mapper: new PredictItMapper(rt.venue, rt.stats),
    start: () =>
      rt.repeat(
        rt.ingest.pollMs,
        async () => {
          try {
            const doc = await getJson(url(rt.endpoints.rest, 'all'), z.unknown());
            rt.reachable();
            rt.frame(doc, rt.now());
            // PredictIt serves everything in one document: each good poll is a full catalog refresh.
            rt.feed('catalog');
          } catch (e) {
            rt.unreachable(e);
          }
        },
        'predictit poll',
      ),
  }));
}
