import { z } from 'zod';
import { getJson, url } from '../common/http.js';
import { createVenueFeed, type FeedRuntime } from '../common/runtime.js';
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
 * Manifold has no stream: `ingest.pollMs` after the previous poll ended the feed walks `GET {rest}/markets` (newest first,
 * `before` = last id of the previous page) and hands each page to the mapper, which turns it into
 * changes. BINARY prices are in the list itself; a multi-answer market's answers are only in its
 * FullMarket, so `GET {rest}/market/{id}` is fetched for each one whose `lastUpdatedTime`
 * (or volume, resolution, close time) moved since its last fetch.
 */
export function createManifoldFeed(ctx: FeedContext, opts: ManifoldFeedOptions = {}): VenueFeed {
  const limits = { pageLimit: opts.pageLimit ?? 1000, maxPages: opts.maxPages ?? 10, maxFull: opts.maxFullPerPoll ?? 50 };
  return createVenueFeed(ctx, 'manifold', (rt) => {
    const mapper = new ManifoldMapper(rt.venue, rt.stats);
    /** Contract id → version of the FullMarket last fetched. */
    const fetched = new Map<string, string>();
    return {
      mapper,
      start: () =>
        rt.repeat(
          rt.ingest.pollMs,
          async () => {
            const stale = await walkMarkets(rt, limits, fetched);
            if (stale === undefined) return;
            // The list walk succeeded: that is a catalog refresh.
            rt.feed('catalog');
            await fetchFull(rt, stale.slice(0, limits.maxFull), fetched);
          },
          'manifold poll',
        ),
    };
  });
}

/**
 * The `/markets` walk, newest first, each page through the frame path; returns the multi-answer
 * markets whose FullMarket is due, or undefined when a page failed (`rt.unreachable`).
 */
async function walkMarkets(
  rt: FeedRuntime,
  limits: { readonly pageLimit: number; readonly maxPages: number },
  fetched: ReadonlyMap<string, string>,
): Promise<[id: string, version: string][] | undefined> {
  const stale: [id: string, version: string][] = [];
  try {
    let before: string | undefined;
    for (let page = 0; page < limits.maxPages; page++) {
      const items = await getJson(url(rt.endpoints.rest, 'markets', { limit: limits.pageLimit, before }), list);
      rt.reachable();
      rt.frame(items, rt.now());
      for (const item of items) {
        const v = multiVersion(item);
        if (v !== undefined && fetched.get(v[0]) !== v[1]) stale.push(v);
      }
      if (items.length < limits.pageLimit) break;
      const last = items[items.length - 1];
      before = isRecord(last) && typeof last['id'] === 'string' ? last['id'] : undefined;
      if (before === undefined) break;
    }
  } catch (e) {
    rt.unreachable(e);
    return undefined;
  }
  return stale;
}

/** Fetches the FullMarket of each stale multi-answer market through the frame path. */
async function fetchFull(rt: FeedRuntime, stale: readonly [id: string, version: string][], fetched: Map<string, string>): Promise<void> {
  for (const [id, version] of stale) {
    try {
      const full = await getJson(url(rt.endpoints.rest, `market/${encodeURIComponent(id)}`), z.unknown());
      rt.frame(full, rt.now());
      fetched.set(id, version);
    } catch (e) {
      // One market that fails to load waits for the next poll; the others go on.
      rt.httpFailed(e);
      rt.log.debug({ id, err: (e as Error).message }, 'manifold full market fetch failed');
    }
  }
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
