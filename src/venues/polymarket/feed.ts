import { Observable, type Subscription } from 'rxjs';
import type { MarketUpsert, NormalizedEvent } from '../../core/types.js';
import { getJson, url } from '../common/http.js';
import { reconnectingSocket, type SocketEvent } from '../common/socket.js';
import { FeedStats } from '../common/stats.js';
import type { z } from 'zod';
import { venueMarketId, type FeedContext, type VenueFeed } from '../protocol.js';
import { dataTradeToTrade, dataTradeId, gammaMarketToUpsert, PolymarketMapper } from './mappers.js';
import {
  dataTradesResponseSchema,
  gammaEventsResponseSchema,
  gammaMarketsResponseSchema,
  WS_MAX_ASSETS_PER_CONNECTION,
  WS_PING,
  WS_PONG,
  type GammaEvent,
  type GammaEventRef,
  type GammaMarket,
  type WsSubscribe,
  type WsSubscriptionUpdate,
} from './raw.js';

/**
 * The Polymarket feed: Gamma for the catalog, the CLOB market channel for books, the data-api for
 * trades (with wallets).
 *
 * Endpoints: `rest` = CLOB base (unused by the stream itself: the socket sends fresh books), `ws` =
 * market channel URL, `extra.gamma` = Gamma base, `extra.data` = data-api base (optional: without
 * it no trades are polled and `last_trade_price` frames become trades instead).
 *
 * - Catalog: `GET /events?active=true&closed=false` pages (event titles, tags, series) and
 *   `GET /markets?active=true&closed=false` pages; every market becomes an upsert (emitted again
 *   only when it changed). Markets that drop out of the open list are fetched by
 *   `condition_ids` so their closing status is seen. Refreshed every `catalogRefreshMs`.
 * - Books: the documented limit is 500 assets per connection, so assets are sharded over
 *   connections of at most 500; each sends `{"assets_ids":[…],"type":"market",
 *   "custom_feature_enabled":true}` on open (the custom features bring `new_market` and
 *   `market_resolved`), adds later assets with `{"operation":"subscribe"}`, and sends the text
 *   `PING` every ≤10 s (the server answers `PONG`, ignored). A reconnect resubscribes the shard and
 *   the server's fresh `book` frames resync it.
 * - Disconnect: `feed` disconnected/connected events. With one shard they are venue-wide; with
 *   several, `disconnected` is emitted per asset of the shard that dropped (the other shards' books
 *   are still good).
 * - Gaps: the channel has no sequence numbers. The mapper compares its copy of each book's top with
 *   the `best_bid`/`best_ask` every `price_change` entry carries and emits a `gap` for the asset when
 *   they differ; the feed then cycles that asset (unsubscribe + subscribe), which makes the server
 *   send a fresh `book`, and emits `resynced` when it arrives. A lost update below the top of the
 *   book cannot be detected this way; it is repaired by the next `book` the server sends (after
 *   every trade on that asset) or by a reconnect.
 * - Trades: `GET /trades?limit=500&offset=0&takerOnly=true` every `pollMs`, newest first; unseen ones
 *   (by trade id: transaction hash + fill digest) are emitted oldest first; a page that is entirely
 *   new is followed by the next, up to 5 pages.
 */
export function createPolymarketFeed(ctx: FeedContext): VenueFeed {
  const { venue, endpoints, ingest } = ctx;
  const log = ctx.log.child({ venue: venue.label, protocol: 'polymarket' });
  const gamma = endpoints.extra?.['gamma'];
  const data = endpoints.extra?.['data'];
  const wsUrl = endpoints.ws;
  if (!gamma) throw new Error(`${venue.label}: polymarket feed needs endpoints.extra.gamma`);
  if (!wsUrl) throw new Error(`${venue.label}: polymarket feed needs endpoints.ws`);
  const stats = new FeedStats(log);

  const events$ = new Observable<NormalizedEvent>((sub) => {
    const mapper = new PolymarketMapper(venue, log, { stats, lastTradeAs: data ? 'quote' : 'trade' });
    let stopped = false;
    const timers = new Set<NodeJS.Timeout>();
    const shards: Shard[] = [];
    const shardOf = new Map<string, Shard>();
    /** conditionId → signature of the last upsert emitted, and whether it was still open. */
    const catalog = new Map<string, { sig: string; open: boolean }>();
    const resyncing = new Set<string>();
    const seenTrades = new Map<string, true>();

    const emit = (e: NormalizedEvent): void => {
      if (!stopped) sub.next(e);
    };
    const later = (ms: number, fn: () => void): void => {
      const t = setTimeout(() => {
        timers.delete(t);
        if (!stopped) fn();
      }, ms);
      timers.add(t);
    };
    const feedEvent = (state: 'connected' | 'disconnected' | 'stalled' | 'error' | 'resynced' | 'catalog', detail?: string, instrument?: string): void => {
      const now = Date.now();
      emit({ type: 'feed', venue: venue.label, timestamp: now, localTimestamp: now, state, detail, instrument });
    };

    // ---- catalog ------------------------------------------------------------------------

    async function pages<T>(path: string, schema: z.ZodType<T[]>, limit: number): Promise<T[]> {
      const out: T[] = [];
      for (let page = 0; page < 200 && !stopped; page++) {
        const rows = await getJson(url(gamma!, path, { active: true, closed: false, limit, offset: page * limit }), schema);
        out.push(...rows);
        if (rows.length < limit) break;
      }
      return out;
    }

    async function discover(): Promise<MarketUpsert[]> {
      const now = Date.now();
      const events: GammaEvent[] = await pages('/events', gammaEventsResponseSchema, 100);
      const markets: GammaMarket[] = await pages('/markets', gammaMarketsResponseSchema, 500);
      const eventById = new Map<string, GammaEvent>(events.map((e) => [e.id, e]));
      const out: MarketUpsert[] = [];
      const seen = new Set<string>();
      const add = (m: GammaMarket, parent: GammaEventRef | undefined): void => {
        if (seen.has(m.conditionId)) return;
        seen.add(m.conditionId);
        const u = gammaMarketToUpsert(venue, m, parent, now);
        if (u) out.push(u);
        else stats.malformedFrame('gamma_market', 'not a two-outcome market', m.conditionId);
      };
      for (const m of markets) {
        const ref = m.events?.[0] ?? undefined;
        add(m, (ref && eventById.get(ref.id)) ?? ref);
      }
      for (const e of events) for (const m of e.markets ?? []) add(m, e);
      return out;
    }

    /** Markets that left the open list: fetch them by condition id to learn how they ended. */
    async function vanished(ids: string[]): Promise<MarketUpsert[]> {
      const now = Date.now();
      const out: MarketUpsert[] = [];
      for (let i = 0; i < ids.length && !stopped; i += 50) {
        const u = new URL(url(gamma!, '/markets', { limit: 50 }));
        for (const id of ids.slice(i, i + 50)) u.searchParams.append('condition_ids', id);
        for (const m of await getJson(u.toString(), gammaMarketsResponseSchema)) {
          const up = gammaMarketToUpsert(venue, m, m.events?.[0] ?? undefined, now);
          if (up) out.push(up);
        }
      }
      return out;
    }

    function publish(u: MarketUpsert, conditionId: string): void {
      mapper.learn(u);
      const { timestamp: _t, localTimestamp: _l, ...rest } = u;
      const sig = JSON.stringify(rest);
      const open = u.status === 'active' || u.status === 'initialized';
      const prev = catalog.get(conditionId);
      catalog.set(conditionId, { sig, open });
      if (prev?.sig !== sig) emit(u);
    }

    async function refresh(): Promise<void> {
      const ups = await discover();
      const current = new Set<string>();
      const fresh: string[] = [];
      for (const u of ups) {
        const cid = conditionIdOf(u);
        current.add(cid);
        publish(u, cid);
        if ((u.status === 'active' || u.status === 'initialized') && u.yesInstrument && u.noInstrument)
          for (const a of [u.yesInstrument, u.noInstrument]) if (!shardOf.has(a)) fresh.push(a);
      }
      const gone = [...catalog].filter(([cid, c]) => c.open && !current.has(cid)).map(([cid]) => cid);
      if (gone.length) for (const u of await vanished(gone)) publish(u, conditionIdOf(u));
      if (fresh.length) assign(fresh);
    }

    const conditionIdOf = (u: MarketUpsert): string => venueMarketId(venue, u.marketId) ?? u.marketId;

    function scheduleRefresh(delay: number, attempt = 0): void {
      later(delay, () => {
        refresh().then(
          () => {
            // A completed catalog walk: /status measures catalog freshness from these.
            feedEvent('catalog');
            scheduleRefresh(ingest.catalogRefreshMs);
          },
          (e: Error) => {
            log.warn({ err: e.message }, 'polymarket catalog refresh failed');
            feedEvent('error', `catalog: ${e.message}`);
            const backoff = Math.min(ingest.reconnectMaxMs, ingest.reconnectMinMs * 2 ** Math.min(attempt, 16));
            // Before the first success there is nothing to stream, so retry on the backoff.
            scheduleRefresh(shards.length === 0 ? backoff : ingest.catalogRefreshMs, attempt + 1);
          },
        );
      });
    }

    // ---- market channel -------------------------------------------------------------------

    function send(shard: Shard, msg: WsSubscribe | WsSubscriptionUpdate | string): void {
      shard.send?.(typeof msg === 'string' ? msg : JSON.stringify(msg));
    }

    function assign(assets: string[]): void {
      const todo = [...assets];
      const last = shards[shards.length - 1];
      if (last && last.assets.length < WS_MAX_ASSETS_PER_CONNECTION) {
        const add = todo.splice(0, WS_MAX_ASSETS_PER_CONNECTION - last.assets.length);
        for (const a of add) shardOf.set(a, last);
        last.assets.push(...add);
        // Not yet open: the subscribe sent on open carries them.
        if (last.open && add.length) send(last, { assets_ids: add, operation: 'subscribe', custom_feature_enabled: true });
      }
      while (todo.length) openShard(todo.splice(0, WS_MAX_ASSETS_PER_CONNECTION));
    }

    function openShard(assets: string[]): void {
      const shard: Shard = { id: shards.length, assets, open: false, wasOpen: false };
      shards.push(shard);
      for (const a of assets) shardOf.set(a, shard);
      shard.sub = reconnectingSocket({
        url: wsUrl!,
        log,
        minBackoffMs: ingest.reconnectMinMs,
        maxBackoffMs: ingest.reconnectMaxMs,
        heartbeatMs: ingest.heartbeatMs,
      }).subscribe({
        next: (ev) => onSocket(shard, ev),
        error: (e: Error) => feedEvent('error', `shard ${shard.id}: ${e.message}`),
      });
    }

    function onSocket(shard: Shard, ev: SocketEvent): void {
      if (ev.kind === 'open') {
        shard.open = true;
        shard.send = ev.send;
        if (shard.wasOpen) stats.reconnects++;
        shard.wasOpen = true;
        send(shard, { assets_ids: shard.assets, type: 'market', custom_feature_enabled: true });
        // Polymarket drops connections that stay silent; it wants the text PING about every 10 s.
        shard.ping = setInterval(() => send(shard, WS_PING), Math.min(10_000, ingest.heartbeatMs));
        shard.ping.unref?.();
        feedEvent('connected', shards.length > 1 ? `shard ${shard.id}` : undefined);
        return;
      }
      if (ev.kind === 'close') {
        if (shard.ping) clearInterval(shard.ping);
        shard.ping = undefined;
        shard.send = undefined;
        if (!shard.open) return; // a failed connect attempt: nothing was lost
        shard.open = false;
        const detail = `${ev.code} ${ev.reason}; retry in ${ev.retryInMs} ms`;
        for (const a of shard.assets) resyncing.delete(a);
        if (shards.length === 1) {
          mapper.reset();
          feedEvent(ev.stalled ? 'stalled' : 'disconnected', detail);
        } else {
          mapper.resetInstruments(shard.assets);
          for (const a of shard.assets) feedEvent(ev.stalled ? 'stalled' : 'disconnected', detail, a);
        }
        return;
      }
      if (ev.data === WS_PONG) {
        stats.ignored++;
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(ev.data);
      } catch (e) {
        stats.frames++;
        stats.malformedFrame('json', (e as Error).message, ev.data);
        return;
      }
      for (const e of mapper.map(parsed, ev.localTimestamp)) {
        if (e.type === 'feed' && e.state === 'gap' && e.instrument) resync(e.instrument);
        emit(e);
        if (e.type === 'book_snapshot' && resyncing.delete(e.instrument)) feedEvent('resynced', 'fresh book after gap', e.instrument);
        else if (e.type === 'market' && e.yesInstrument && e.noInstrument && e.status === 'active') {
          const add = [e.yesInstrument, e.noInstrument].filter((a) => !shardOf.has(a));
          if (add.length) assign(add);
        }
      }
    }

    /** Cycles one asset on its connection: the server answers a new subscription with a `book`. */
    function resync(asset: string): void {
      const shard = shardOf.get(asset);
      if (!shard?.open || resyncing.has(asset)) return;
      resyncing.add(asset);
      send(shard, { assets_ids: [asset], operation: 'unsubscribe' });
      send(shard, { assets_ids: [asset], operation: 'subscribe', custom_feature_enabled: true });
    }

    // ---- trades -------------------------------------------------------------------------

    async function pollTrades(first: boolean): Promise<void> {
      const limit = 500;
      const fresh = [];
      for (let page = 0; page < (first ? 1 : 5) && !stopped; page++) {
        const rows = await getJson(url(data!, '/trades', { limit, offset: page * limit, takerOnly: true }), dataTradesResponseSchema);
        let seenOne = false;
        for (const t of rows) {
          const id = dataTradeId(t);
          if (seenTrades.has(id)) {
            seenOne = true;
            continue;
          }
          seenTrades.set(id, true);
          fresh.push(t);
        }
        if (seenOne || rows.length < limit) break;
      }
      while (seenTrades.size > 20_000) seenTrades.delete(seenTrades.keys().next().value!);
      const now = Date.now();
      // Newest first on the wire; emitted oldest first (stable for equal timestamps).
      for (let i = fresh.length - 1; i >= 0; i--) {
        const t = fresh[i]!;
        emit(dataTradeToTrade(venue, t, now, mapper.token(t.asset)));
      }
    }

    function schedulePoll(delay: number, first: boolean): void {
      later(delay, () => {
        pollTrades(first).then(
          () => schedulePoll(ingest.pollMs, false),
          (e: Error) => {
            log.warn({ err: e.message }, 'polymarket trades poll failed');
            schedulePoll(ingest.pollMs, first);
          },
        );
      });
    }

    // ---- start --------------------------------------------------------------------------

    scheduleRefresh(0);
    if (data) schedulePoll(0, true);

    return () => {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of shards) {
        if (s.ping) clearInterval(s.ping);
        s.sub?.unsubscribe();
      }
    };
  });

  return { venue, stats, events$ };
}

interface Shard {
  readonly id: number;
  readonly assets: string[];
  open: boolean;
  wasOpen: boolean;
  send?: ((data: string) => void) | undefined;
  sub?: Subscription | undefined;
  ping?: NodeJS.Timeout | undefined;
}
