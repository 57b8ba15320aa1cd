import { z } from 'zod';
import { getJson, url } from '../common/http.js';
import { createVenueFeed, type FeedRuntime, type FeedSession, type Stream } from '../common/runtime.js';
import type { FeedContext, VenueFeed } from '../protocol.js';
import { ExchangeMapper } from './mappers.js';
import type { SubscribeCommand } from './raw.js';

/** Markets per subscribe command, so that one frame stays small. */
const SUBSCRIBE_CHUNK = 200;

/**
 * A live connection to a venue speaking the crossbook exchange protocol (raw.ts):
 *
 * - the catalog comes from `GET {rest}/events`, at once and then every `ingest.catalogRefreshMs`
 *   (sooner, with backoff, while it fails); market records and event state changes are emitted as
 *   `market` events;
 * - the WebSocket `{ws}` subscribes every market that is not finalized, on each (re)connect and
 *   as new markets appear in the catalog;
 * - frames go through the mapper; a sequence gap on a market (a `feed` `gap` event) resubscribes
 *   that market, and the server answers with fresh snapshots;
 * - a disconnect or stall (no frame and no pong for 2.5 heartbeats) resets every book: `feed`
 *   `disconnected`, then `connected` and new snapshots after the reconnect.
 *
 * A catalog that answers again after failures also emits `connected` ("catalog reachable again").
 */
export function createExchangeFeed(ctx: FeedContext): VenueFeed {
  return createVenueFeed(ctx, 'exchange', exchangeSession);
}

function exchangeSession(rt: FeedRuntime): FeedSession {
  const mapper = new ExchangeMapper(rt.venue, rt.stats);
  const subscribed = new Set<string>();
  let stream: Stream | undefined;
  /** Markets whose books had a sequence gap in the current frame. */
  let resync: Set<string> | undefined;

  const subscribe = (markets: readonly string[]): void => {
    if (!stream?.open || markets.length === 0) return;
    for (let i = 0; i < markets.length; i += SUBSCRIBE_CHUNK) {
      const cmd: SubscribeCommand = { op: 'subscribe', channel: 'book', markets: markets.slice(i, i + SUBSCRIBE_CHUNK) };
      stream.send(JSON.stringify(cmd));
    }
    for (const m of markets) subscribed.add(m);
  };

  return {
    mapper,
    // A gap resubscribes its market: the server answers with fresh snapshots.
    onEvent: (e) => {
      if (e.type === 'feed' && e.state === 'gap' && e.instrument !== undefined) (resync ??= new Set()).add(mapper.marketOf(e.instrument));
    },
    afterFrame: () => {
      if (resync === undefined) return;
      const markets = [...resync];
      resync = undefined;
      subscribe(markets);
    },
    start: () => {
      const wsUrl = rt.endpoints.ws;
      if (wsUrl === undefined) rt.feed('error', 'no stream URL configured; catalog only');
      else
        stream = rt.stream({
          url: wsUrl,
          onOpen: () => {
            mapper.reset();
            subscribed.clear();
            subscribe(mapper.subscribable());
          },
          onClose: () => subscribed.clear(),
        });
      rt.catalog(
        async () => {
          const doc = await getJson(url(rt.endpoints.rest, 'events'), z.unknown());
          if (rt.stopped) return undefined;
          rt.frame(doc, rt.now());
          subscribe(mapper.subscribable().filter((m) => !subscribed.has(m)));
          return undefined;
        },
        { announceRecovery: true },
      );
    },
  };
}
