import { defer, exhaustMap, from, mergeMap, timer, type Observable } from 'rxjs';
import { z } from 'zod';
import type { FeedEvent, NormalizedEvent } from '../../core/types.js';
import { getJson, url, VenueHttpError } from '../common/http.js';
import { FeedStats } from '../common/stats.js';
import type { FeedContext, VenueFeed } from '../protocol.js';
import { ManifoldMapper } from './mappers.js';
import { MULTI_ANSWER_TYPES } from './raw.js';

/** Limits of one poll, so that the real Manifold (hundreds of thousands of markets) stays polite. */
export interface ManifoldFeedOptions {
  /** `limit` of each `/markets` page (Manifold's maximum is 1000). */
  readonly pageLimit?: number;
  /** Pages walked per poll, newest markets first; older markets are not followed beyond this. */
  readonly maxPages?: number;
  /** FullMarket fetches per poll for multi-answer markets that changed; the rest wait a poll. */
  readonly maxFullPerPoll?: number;
}

const list = z.array(z.unknown());

/**
 * Manifold has no stream: every `ingest.pollMs` the feed walks `GET {rest}/markets` (newest first,
 * `before` = last id of the previous page) and hands each page to the mapper, which turns it into
 * changes. BINARY prices are in the list itself; a multi-answer market's answers are only in its
 * FullMarket, so `GET {rest}/market/{id}` is fetched for each one whose `lastUpdatedTime`
 * (or volume, resolution, close time) moved since its last fetch.
 */
export function createManifoldFeed(ctx: FeedContext, opts: ManifoldFeedOptions = {}): VenueFeed {
  const logger = ctx.log.child({ venue: ctx.venue.label, protocol: 'manifold' });
  const stats = new FeedStats(logger);
  const pageLimit = opts.pageLimit ?? 1000;
  const maxPages = opts.maxPages ?? 10;
  const maxFull = opts.maxFullPerPoll ?? 50;

  const events$ = defer((): Observable<NormalizedEvent> => {
    const mapper = new ManifoldMapper(ctx.venue, stats);
    /** Contract id → version of the FullMarket last fetched. */
    const fetched = new Map<string, string>();
    let healthy: boolean | undefined;
    const feed = (state: FeedEvent['state'], detail?: string): FeedEvent => {
      const now = Date.now();
      const e: FeedEvent = { type: 'feed', venue: ctx.venue.label, timestamp: now, localTimestamp: now, state };
      return detail === undefined ? e : { ...e, detail };
    };
    const failed = (e: unknown): void => {
      const kind = e instanceof VenueHttpError ? e.kind : 'network';
      if (kind === 'json' || kind === 'schema') stats.malformedFrame(`http_${kind}`, (e as Error).message);
    };

    const poll = async (): Promise<NormalizedEvent[]> => {
      const out: NormalizedEvent[] = [];
      const stale: [id: string, version: string][] = [];
      try {
        let before: string | undefined;
        for (let page = 0; page < maxPages; page++) {
          const items = await getJson(url(ctx.endpoints.rest, 'markets', { limit: pageLimit, before }), list);
          if (healthy !== true) {
            if (healthy === false) stats.reconnects++;
            healthy = true;
            out.push(feed('connected'));
          }
          for (const e of mapper.map(items, Date.now())) out.push(e);
          for (const item of items) {
            const v = multiVersion(item);
            if (v !== undefined && fetched.get(v[0]) !== v[1]) stale.push(v);
          }
          if (items.length < pageLimit) break;
          const last = items[items.length - 1];
          before = isRecord(last) && typeof last['id'] === 'string' ? last['id'] : undefined;
          if (before === undefined) break;
        }
      } catch (e) {
        failed(e);
        if (healthy !== false) {
          healthy = false;
          out.push(feed('error', (e as Error).message));
        }
        return out;
      }
      // The list walk succeeded: that is a catalog refresh.
      out.push(feed('catalog'));
      for (const [id, version] of stale.slice(0, maxFull)) {
        try {
          const full = await getJson(url(ctx.endpoints.rest, `market/${encodeURIComponent(id)}`), z.unknown());
          for (const e of mapper.map(full, Date.now())) out.push(e);
          fetched.set(id, version);
        } catch (e) {
          // One market that fails to load waits for the next poll; the others go on.
          failed(e);
          logger.debug({ id, err: (e as Error).message }, 'manifold full market fetch failed');
        }
      }
      return out;
    };

    return timer(0, ctx.ingest.pollMs).pipe(
      exhaustMap(() => from(poll())),
      mergeMap((events) => from(events)),
    );
  });
  return { venue: ctx.venue, stats, events$ };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** [id, version] of a multi-answer LiteMarket whose answers must be fetched; undefined otherwise. */
function multiVersion(item: unknown): [string, string] | undefined {
  if (!isRecord(item) || typeof item['id'] !== 'string' || typeof item['outcomeType'] !== 'string') return undefined;
  if (!MULTI_ANSWER_TYPES.has(item['outcomeType']) || item['answers'] !== undefined) return undefined;
  return [item['id'], `${String(item['lastUpdatedTime'])}|${String(item['volume'])}|${String(item['isResolved'])}|${String(item['closeTime'])}`];
}
