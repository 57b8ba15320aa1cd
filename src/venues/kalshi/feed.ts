import { createPrivateKey, constants as cryptoConstants, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Observable, type Subscription } from 'rxjs';
import { z } from 'zod';
import type { FeedEvent, MarketStatus, MarketUpsert, NormalizedEvent } from '../../core/types.js';
import { signedHeaders } from '../common/auth.js';
import { getJson, url, VenueHttpError } from '../common/http.js';
import { reconnectingSocket, type SocketEvent } from '../common/socket.js';
import { FeedStats } from '../common/stats.js';
import { venueMarketId, type FeedContext, type VenueFeed } from '../protocol.js';
import { KalshiMapper, type ResyncRequest } from './mappers.js';
import { isWsError, isWsFrame, kalshiSeriesListSchema, type KalshiCommand } from './raw.js';

/**
 * The Kalshi feed: REST catalog discovery, then one WebSocket with every market's book, ticker and
 * trades, and the lifecycle channel.
 *
 * 1. Catalog: `GET /series` (categories, tags, fees), `GET /events?status=open|closed` (event
 *    titles; settled ones as below), then `GET /markets` walked by cursor once per status filter (`unopened`, `open`,
 *    `closed`, and `settled` limited to markets that closed within `settledLookbackMs`, because
 *    the full settled history is enormous). Every document goes through the mapper, which turns
 *    markets into `market` upserts; only upserts that changed since the last walk are emitted. A
 *    successful walk emits `feed` 'catalog'. It repeats every `ingest.catalogRefreshMs`, and new
 *    markets found by a walk (or announced by a lifecycle `created` frame) are subscribed.
 * 2. Stream: on every (re)connect the mapper is reset (`feed` 'connected'), `market_lifecycle_v2`
 *    is subscribed once (it takes no market filter) and `orderbook_delta` + `ticker` + `trade` are
 *    subscribed for every tradable market in chunks of `chunkSize` tickers. Combo (multivariate)
 *    markets are listed but not subscribed: the real venue has vast numbers of them.
 * 3. Resync: whenever the mapper reports markets waiting for a snapshot (sequence gap, integrity
 *    failure) the feed sends `update_subscription` `get_snapshot` for them on their sid; still
 *    waiting after `resyncRetryMs` → asked again. If the venue refuses get_snapshot (an `error`
 *    answering that command) the markets are moved to a fresh subscription instead
 *    (`delete_markets` on the old sid, `subscribe` anew). The mapper emits `feed` 'resynced' when
 *    the snapshot arrives.
 * 4. Disconnect: `feed` 'disconnected' once per outage, the mapper is reset, and the socket
 *    reconnects with backoff (stall detection by ping in reconnectingSocket).
 *
 * Live mode: the real WebSocket requires signed headers. When KALSHI_API_KEY_ID and
 * KALSHI_PRIVATE_KEY (PEM) or KALSHI_PRIVATE_KEY_PATH are set, the handshake carries
 * KALSHI-ACCESS-KEY / -TIMESTAMP / -SIGNATURE (RSA-PSS SHA-256 over timestamp + "GET" + path), see
 * `kalshiAuthHeaders`. The public REST market data needs no key.
 */

export interface KalshiFeedOptions {
  /** Tickers per subscribe command. */
  readonly chunkSize?: number;
  /** Ask again for a snapshot still missing after this long. */
  readonly resyncRetryMs?: number;
  /** How far back the catalog walk looks for settled markets (by close time). */
  readonly settledLookbackMs?: number;
  /** Environment for the auth headers (defaults to process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Parses one text frame; a frame that is not JSON (truncated, garbage) is counted and dropped. */
export function parseFrame(text: string, stats: FeedStats): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    stats.malformedFrame('json', 'frame is not valid JSON', text);
    return undefined;
  }
}

/**
 * Kalshi API-key headers for the WebSocket handshake (RSA-PSS SHA-256 over timestamp + GET +
 * path, signed afresh per connection attempt), or undefined when no key is configured.
 */
export function kalshiAuthHeaders(wsUrl: string, env: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> | undefined {
  const keyId = env['KALSHI_API_KEY_ID'];
  const pem = env['KALSHI_PRIVATE_KEY'] ?? (env['KALSHI_PRIVATE_KEY_PATH'] ? readFileSync(env['KALSHI_PRIVATE_KEY_PATH'], 'utf8') : undefined);
  if (!keyId || !pem) return undefined;
  const key: KeyObject = createPrivateKey(pem);
  const sig = (m: Buffer): Buffer =>
    sign('sha256', m, { key, padding: cryptoConstants.RSA_PKCS1_PSS_PADDING, saltLength: cryptoConstants.RSA_PSS_SALTLEN_DIGEST });
  return signedHeaders(
    { key: 'KALSHI-ACCESS-KEY', timestamp: 'KALSHI-ACCESS-TIMESTAMP', signature: 'KALSHI-ACCESS-SIGNATURE' },
    keyId,
    new URL(wsUrl).pathname,
    sig,
  );
}

const eventsPageShell = z.object({ cursor: z.string().nullable().optional(), events: z.array(z.unknown()).nullable() });
const marketsPageShell = z.object({ cursor: z.string().nullable().optional(), markets: z.array(z.unknown()).nullable() });

/** Most pages one cursor walk may take (a guard against a cursor that never ends). */
const MAX_PAGES = 5_000;
const BOOK_CHANNELS = ['orderbook_delta', 'ticker', 'trade'];

/** Creates the Kalshi feed of `ctx.venue` (see the module comment). */
export function createKalshiFeed(ctx: FeedContext, opts: KalshiFeedOptions = {}): VenueFeed {
  const logger = ctx.log.child({ venue: ctx.venue.label, protocol: 'kalshi' });
  const stats = new FeedStats(logger);
  const chunkSize = opts.chunkSize ?? 200;
  const resyncRetryMs = opts.resyncRetryMs ?? 3_000;
  const settledLookbackMs = opts.settledLookbackMs ?? 7 * 86_400_000;
  const rest = ctx.endpoints.rest;
  const wsUrl = ctx.endpoints.ws;

  const events$ = new Observable<NormalizedEvent>((sub) => {
    const mapper = new KalshiMapper(ctx.venue, logger, { stats });
    const wanted = new Set<string>();
    const combos = new Set<string>();
    const subscribed = new Set<string>();
    const upserts = new Map<string, string>();
    const pendingSnapshots = new Map<number, ResyncRequest>();
    const asked = new Map<string, number>();
    let send: ((data: string) => void) | undefined;
    let connected = false;
    let everConnected = false;
    let closed = false;
    let refreshing = false;
    let nextId = 1;
    let socketSub: Subscription | undefined;
    const timers: NodeJS.Timeout[] = [];

    const feed = (state: FeedEvent['state'], detail?: string): FeedEvent => {
      const now = Date.now();
      return detail === undefined
        ? { type: 'feed', venue: ctx.venue.label, timestamp: now, localTimestamp: now, state }
        : { type: 'feed', venue: ctx.venue.label, timestamp: now, localTimestamp: now, state, detail };
    };

    const command = (c: KalshiCommand): void => send?.(JSON.stringify(c));

    /** Markets announced since the last subscribeWanted(). */
    let added = false;
    /** Keeps `wanted` to the tradable markets, so a reconnect does not resubscribe dead ones. */
    const want = (ticker: string, status: MarketStatus, combo: boolean): void => {
      if ((status === 'active' || status === 'initialized') && !combo) {
        if (!wanted.has(ticker)) {
          wanted.add(ticker);
          added = true;
        }
      } else wanted.delete(ticker);
    };

    /** Remembers tradable markets; returns whether the upsert changed since last emitted. */
    const track = (m: MarketUpsert): boolean => {
      const ticker = m.yesInstrument ?? m.marketId;
      if (m.extra?.['combo'] === true) combos.add(ticker);
      want(ticker, m.status, combos.has(ticker));
      const { timestamp: _t, localTimestamp: _l, ...rest } = m;
      const key = JSON.stringify(rest);
      if (upserts.get(m.marketId) === key) return false;
      upserts.set(m.marketId, key);
      return true;
    };

    const subscribeWanted = (): void => {
      added = false;
      if (!send) return;
      const todo = [...wanted].filter((t) => !subscribed.has(t));
      for (let i = 0; i < todo.length; i += chunkSize) {
        const chunk = todo.slice(i, i + chunkSize);
        command({ id: nextId++, cmd: 'subscribe', params: { channels: BOOK_CHANNELS, market_tickers: chunk } });
        for (const t of chunk) subscribed.add(t);
      }
    };

    const requestSnapshots = (reqs: readonly ResyncRequest[]): void => {
      if (!send) return;
      const now = Date.now();
      for (const r of reqs) {
        for (let i = 0; i < r.tickers.length; i += chunkSize) {
          const tickers = r.tickers.slice(i, i + chunkSize);
          const id = nextId++;
          pendingSnapshots.set(id, { sid: r.sid, tickers });
          for (const t of tickers) asked.set(t, now);
          command({ id, cmd: 'update_subscription', params: { sids: [r.sid], market_tickers: tickers, action: 'get_snapshot' } });
        }
      }
      // Answers to get_snapshot are snapshots, not acks: forget old command ids rather than wait.
      for (const id of pendingSnapshots.keys()) if (id < nextId - 1_000) pendingSnapshots.delete(id);
    };

    /** The venue refused get_snapshot: move the markets to a fresh subscription (which starts with snapshots). */
    const resubscribe = (r: ResyncRequest): void => {
      command({ id: nextId++, cmd: 'update_subscription', params: { sids: [r.sid], market_tickers: [...r.tickers], action: 'delete_markets' } });
      command({ id: nextId++, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: [...r.tickers] } });
    };

    const emit = (events: Iterable<NormalizedEvent>): void => {
      for (const e of events) {
        if (e.type === 'market' && track(e) === false) continue;
        if (e.type === 'market_status') {
          const ticker = venueMarketId(ctx.venue, e.marketId) ?? e.marketId;
          want(ticker, e.status, combos.has(ticker));
        }
        sub.next(e);
      }
    };

    const onMessage = (data: string, localTimestamp: number): void => {
      const raw = parseFrame(data, stats);
      if (raw === undefined) return;
      if (isWsFrame(raw) && isWsError(raw) && typeof raw.id === 'number') {
        const r = pendingSnapshots.get(raw.id);
        if (r) {
          pendingSnapshots.delete(raw.id);
          logger.warn({ code: raw.msg.code, msg: raw.msg.msg }, 'get_snapshot refused; resubscribing those markets');
          resubscribe(r);
        }
      }
      emit(mapper.map(raw, localTimestamp));
      // A lifecycle `created` frame announced a market: subscribe it now rather than at the next walk.
      if (added) subscribeWanted();
      const resync = mapper.takeResync();
      if (resync.length > 0) requestSnapshots(resync);
    };

    const onSocket = (ev: SocketEvent): void => {
      switch (ev.kind) {
        case 'open':
          send = ev.send;
          mapper.reset();
          subscribed.clear();
          pendingSnapshots.clear();
          asked.clear();
          if (everConnected) stats.reconnects++;
          everConnected = true;
          connected = true;
          sub.next(feed('connected', ev.attempt > 1 ? `after ${ev.attempt} attempts` : undefined));
          command({ id: nextId++, cmd: 'subscribe', params: { channels: ['market_lifecycle_v2'] } });
          subscribeWanted();
          return;
        case 'message':
          onMessage(ev.data, ev.localTimestamp);
          return;
        case 'close':
          send = undefined;
          mapper.reset();
          subscribed.clear();
          if (connected) {
            connected = false;
            sub.next(feed(ev.stalled ? 'stalled' : 'disconnected', `${ev.code} ${ev.reason}; retry in ${ev.retryInMs} ms`));
          }
          return;
      }
    };

    /** Walks one cursor-paginated listing, handing every page to `page`. */
    const walk = async <T extends { cursor?: string | null | undefined }>(
      path: string,
      query: Record<string, string | number | undefined>,
      schema: z.ZodType<T>,
      page: (doc: T) => void,
    ): Promise<void> => {
      let cursor: string | undefined;
      const seen = new Set<string>();
      for (let n = 0; n < MAX_PAGES && !closed; n++) {
        const doc = await getJson(url(rest, path, { ...query, cursor }), schema);
        page(doc);
        const next = doc.cursor ?? '';
        if (next === '' || seen.has(next)) return;
        seen.add(next);
        cursor = next;
      }
    };

    /** One catalog walk; returns whether it succeeded. Never rejects. */
    const refresh = async (): Promise<boolean> => {
      if (refreshing) return false;
      refreshing = true;
      try {
        const series = await getJson(url(rest, 'series'), kalshiSeriesListSchema);
        mapper.learnSeries(series.series ?? []);
        const now = Date.now();
        const minClose = Math.floor((now - settledLookbackMs) / 1000);
        for (const f of [{ status: 'open' }, { status: 'closed' }, { status: 'settled', min_close_ts: minClose }]) {
          await walk('events', { ...f, limit: 200 }, eventsPageShell, (doc) => emit(mapper.map({ events: doc.events ?? [] }, Date.now())));
        }
        const filters: Record<string, string | number | undefined>[] = [
          { status: 'unopened' },
          { status: 'open' },
          { status: 'closed' },
          { status: 'settled', min_close_ts: minClose },
        ];
        for (const f of filters) {
          await walk('markets', { ...f, limit: 1000 }, marketsPageShell, (doc) => emit(mapper.map({ markets: doc.markets ?? [] }, Date.now())));
        }
        if (closed) return false;
        sub.next(feed('catalog', `${upserts.size} markets, ${wanted.size} subscribed`));
        subscribeWanted();
        return true;
      } catch (e) {
        const kind = e instanceof VenueHttpError ? e.kind : 'network';
        if (kind === 'json' || kind === 'schema') stats.malformedFrame(`http_${kind}`, (e as Error).message);
        if (!closed) sub.next(feed('error', `catalog: ${(e as Error).message}`));
        return false;
      } finally {
        refreshing = false;
      }
    };

    const retryResync = (): void => {
      if (!send) return;
      const now = Date.now();
      const again: ResyncRequest[] = [];
      for (const r of mapper.awaiting()) {
        const tickers = r.tickers.filter((t) => now - (asked.get(t) ?? 0) >= resyncRetryMs);
        if (tickers.length > 0) again.push({ sid: r.sid, tickers });
      }
      if (again.length > 0) requestSnapshots(again);
    };

    const start = async (): Promise<void> => {
      let delay = ctx.ingest.reconnectMinMs;
      while (!closed && !(await refresh())) {
        await new Promise((r) => timers.push(setTimeout(r, delay)));
        delay = Math.min(ctx.ingest.reconnectMaxMs, delay * 2);
      }
      if (closed) return;
      if (!wsUrl) {
        sub.next(feed('error', 'no WebSocket endpoint configured; catalog only'));
      } else {
        socketSub = reconnectingSocket({
          url: wsUrl,
          log: logger,
          minBackoffMs: ctx.ingest.reconnectMinMs,
          maxBackoffMs: ctx.ingest.reconnectMaxMs,
          heartbeatMs: ctx.ingest.heartbeatMs,
          headers: kalshiAuthHeaders(wsUrl, opts.env),
        }).subscribe({ next: onSocket, error: (e: unknown) => sub.next(feed('error', (e as Error).message)) });
      }
      const refreshTimer = setInterval(() => void refresh(), ctx.ingest.catalogRefreshMs);
      const resyncTimer = setInterval(retryResync, Math.max(50, Math.floor(resyncRetryMs / 2)));
      refreshTimer.unref?.();
      resyncTimer.unref?.();
      timers.push(refreshTimer, resyncTimer);
    };

    void start();
    return () => {
      closed = true;
      socketSub?.unsubscribe();
      for (const t of timers) {
        clearTimeout(t);
        clearInterval(t);
      }
    };
  });

  return { venue: ctx.venue, stats, events$ };
}
