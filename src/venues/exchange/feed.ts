import { Observable, type Subscription } from 'rxjs';
import { z } from 'zod';
import type { FeedEvent, NormalizedEvent } from '../../core/types.js';
import { getJson, url, VenueHttpError } from '../common/http.js';
import { reconnectingSocket } from '../common/socket.js';
import { FeedStats } from '../common/stats.js';
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
 */
export function createExchangeFeed(ctx: FeedContext): VenueFeed {
  const logger = ctx.log.child({ venue: ctx.venue.label, protocol: 'exchange' });
  const stats = new FeedStats(logger);
  const wsUrl = ctx.endpoints.ws;

  const events$ = new Observable<NormalizedEvent>((sub) => {
    const mapper = new ExchangeMapper(ctx.venue, stats);
    const subscribed = new Set<string>();
    let send: ((data: string) => void) | undefined;
    let refreshTimer: NodeJS.Timeout | undefined;
    let closed = false;
    let catalogFailures = 0;

    const feed = (state: FeedEvent['state'], detail?: string): FeedEvent => {
      const now = Date.now();
      const e: FeedEvent = { type: 'feed', venue: ctx.venue.label, timestamp: now, localTimestamp: now, state };
      return detail === undefined ? e : { ...e, detail };
    };

    const subscribe = (markets: readonly string[]): void => {
      if (!send || markets.length === 0) return;
      for (let i = 0; i < markets.length; i += SUBSCRIBE_CHUNK) {
        const cmd: SubscribeCommand = { op: 'subscribe', channel: 'book', markets: markets.slice(i, i + SUBSCRIBE_CHUNK) };
        send(JSON.stringify(cmd));
      }
      for (const m of markets) subscribed.add(m);
    };

    const emit = (events: readonly NormalizedEvent[]): void => {
      let resync: Set<string> | undefined;
      for (const e of events) {
        sub.next(e);
        if (e.type === 'feed' && e.state === 'gap' && e.instrument !== undefined) (resync ??= new Set()).add(mapper.marketOf(e.instrument));
      }
      if (resync) subscribe([...resync]);
    };

    const refresh = async (): Promise<void> => {
      let delay = ctx.ingest.catalogRefreshMs;
      try {
        const doc = await getJson(url(ctx.endpoints.rest, 'events'), z.unknown());
        if (closed) return;
        if (catalogFailures > 0) sub.next(feed('connected', 'catalog reachable again'));
        catalogFailures = 0;
        emit(mapper.map(doc, Date.now()));
        sub.next(feed('catalog'));
        subscribe(mapper.subscribable().filter((m) => !subscribed.has(m)));
      } catch (e) {
        if (closed) return;
        const kind = e instanceof VenueHttpError ? e.kind : 'network';
        if (kind === 'json' || kind === 'schema') stats.malformedFrame(`http_${kind}`, (e as Error).message);
        if (catalogFailures++ === 0) sub.next(feed('error', `catalog: ${(e as Error).message}`));
        delay = Math.min(delay, ctx.ingest.reconnectMinMs * 2 ** Math.min(catalogFailures, 10), ctx.ingest.reconnectMaxMs);
      }
      if (!closed) {
        refreshTimer = setTimeout(() => void refresh(), delay);
        refreshTimer.unref?.();
      }
    };

    let socket: Subscription | undefined;
    if (wsUrl === undefined) sub.next(feed('error', 'no stream URL configured; catalog only'));
    else {
      socket = reconnectingSocket({
        url: wsUrl,
        log: logger,
        minBackoffMs: ctx.ingest.reconnectMinMs,
        maxBackoffMs: ctx.ingest.reconnectMaxMs,
        heartbeatMs: ctx.ingest.heartbeatMs,
      }).subscribe((ev) => {
        switch (ev.kind) {
          case 'open':
            mapper.reset();
            subscribed.clear();
            send = ev.send;
            sub.next(feed('connected'));
            subscribe(mapper.subscribable());
            break;
          case 'message': {
            let frame: unknown;
            try {
              frame = JSON.parse(ev.data);
            } catch {
              stats.frames++;
              stats.malformedFrame('json', 'frame is not JSON', ev.data);
              break;
            }
            emit(mapper.map(frame, ev.localTimestamp));
            break;
          }
          case 'close':
            send = undefined;
            subscribed.clear();
            mapper.reset();
            stats.reconnects++;
            sub.next(feed(ev.stalled ? 'stalled' : 'disconnected', `${ev.code} ${ev.reason}; retry in ${ev.retryInMs} ms`));
            break;
        }
      });
    }
    void refresh();

    return () => {
      closed = true;
      if (refreshTimer) clearTimeout(refreshTimer);
      socket?.unsubscribe();
    };
  });

  return { venue: ctx.venue, stats, events$ };
}
