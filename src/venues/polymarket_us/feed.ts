import { createPrivateKey, sign } from 'node:crypto';
import { Observable, type Subscription } from 'rxjs';
import type { z } from 'zod';
import type { MarketUpsert, NormalizedEvent } from '../../core/types.js';
import { getJson, url } from '../common/http.js';
import { signedHeaders } from '../common/auth.js';
import { reconnectingSocket } from '../common/socket.js';
import { FeedStats } from '../common/stats.js';
import { venueMarketId, type FeedContext, type VenueFeed } from '../protocol.js';
import { PolymarketUsMapper, usMarketToUpsert } from './mappers.js';
import {
  SUBSCRIPTION_MARKET_DATA,
  usEventsResponseSchema,
  usMarketsResponseSchema,
  WS_MAX_SLUGS_PER_SUBSCRIPTION,
  type UsEvent,
  type UsMarket,
  type WsSubscribe,
} from './raw.js';

/**
 * The Polymarket US feed. `endpoints.rest` = the public gateway origin (paths `/v1/…` are appended),
 * `endpoints.ws` = the markets WebSocket URL (`…/v1/ws/markets`).
 *
 * - Catalog: `GET /v1/events` and `GET /v1/markets` pages (`active=true&closed=false`), joined by
 *   `eventSlug`; an upsert per market, again only when it changed; markets that leave the open list
 *   are fetched by `slug` to see how they ended. Refreshed every `catalogRefreshMs`.
 * - Books: one connection; slugs subscribed in requests of at most 100 (`md-<n>` request ids);
 *   every message is a full book, so there is no gap to detect: a lost message is repaired by the
 *   next one, and a reconnect resubscribes everything and gets fresh books.
 * - Auth: the real stream requires an Ed25519-signed handshake. With POLYMARKET_US_KEY_ID and
 *   POLYMARKET_US_SECRET_KEY (base64 Ed25519 key: 32-byte seed, or 64 bytes seed + public key) set,
 *   the upgrade carries X-PM-Access-Key, X-PM-Timestamp (ms) and X-PM-Signature (base64 Ed25519
 *   over timestamp + GET + path), signed afresh per attempt; the simulator does not ask for it.
 */
export function createPolymarketUsFeed(ctx: FeedContext): VenueFeed {
  const { venue, endpoints, ingest } = ctx;
  const log = ctx.log.child({ venue: venue.label, protocol: 'polymarket_us' });
  const wsUrl = endpoints.ws;
  if (!wsUrl) throw new Error(`${venue.label}: polymarket_us feed needs endpoints.ws`);
  const stats = new FeedStats(log);
  const auth = polymarketUsAuthHeaders(wsUrl);

  const events$ = new Observable<NormalizedEvent>((sub) => {
    const mapper = new PolymarketUsMapper(venue, log, stats);
    let stopped = false;
    const timers = new Set<NodeJS.Timeout>();
    const catalog = new Map<string, { sig: string; open: boolean }>();
    const slugs: string[] = [];
    const subscribed = new Set<string>();
    let send: ((s: string) => void) | undefined;
    let wasOpen = false;
    let requestSeq = 0;
    let socket: Subscription | undefined;

    const emit = (e: NormalizedEvent): void => {
      if (!stopped) sub.next(e);
    };
    const feedEvent = (state: 'connected' | 'disconnected' | 'stalled' | 'error' | 'catalog', detail?: string): void => {
      const now = Date.now();
      emit({ type: 'feed', venue: venue.label, timestamp: now, localTimestamp: now, state, detail });
    };
    const later = (ms: number, fn: () => void): void => {
      const t = setTimeout(() => {
        timers.delete(t);
        if (!stopped) fn();
      }, ms);
      timers.add(t);
    };

    async function pages<B, T>(path: string, schema: z.ZodType<B>, pick: (b: B) => T[]): Promise<T[]> {
      const limit = 100;
      const out: T[] = [];
      for (let page = 0; page < 500 && !stopped; page++) {
        const rows = pick(await getJson(url(endpoints.rest, path, { active: true, closed: false, limit, offset: page * limit }), schema));
        out.push(...rows);
        if (rows.length < limit) break;
      }
      return out;
    }

    function publish(u: MarketUpsert): void {
      mapper.learn(u);
      const slug = venueMarketId(venue, u.marketId) ?? u.marketId;
      const { timestamp: _t, localTimestamp: _l, ...rest } = u;
      const sig = JSON.stringify(rest);
      const prev = catalog.get(slug);
      catalog.set(slug, { sig, open: u.status === 'active' || u.status === 'initialized' });
      if (prev?.sig !== sig) emit(u);
    }

    async function refresh(): Promise<void> {
      const now = Date.now();
      const evs: UsEvent[] = await pages('/v1/events', usEventsResponseSchema, (b) => b.events);
      const mks: UsMarket[] = await pages('/v1/markets', usMarketsResponseSchema, (b) => b.markets);
      const bySlug = new Map<string, UsEvent>(evs.map((e) => [e.slug, e]));
      const current = new Set<string>();
      const fresh: string[] = [];
      for (const m of mks) {
        current.add(m.slug);
        const u = usMarketToUpsert(venue, m, m.eventSlug ? bySlug.get(m.eventSlug) : undefined, now);
        publish(u);
        if (!subscribed.has(m.slug) && (u.status === 'active' || u.status === 'initialized')) fresh.push(m.slug);
      }
      const gone = [...catalog].filter(([s, c]) => c.open && !current.has(s)).map(([s]) => s);
      for (let i = 0; i < gone.length && !stopped; i += 50) {
        const u = new URL(url(endpoints.rest, '/v1/markets', { limit: 50 }));
        for (const s of gone.slice(i, i + 50)) u.searchParams.append('slug', s);
        const body = await getJson(u.toString(), usMarketsResponseSchema);
        for (const m of body.markets) publish(usMarketToUpsert(venue, m, m.eventSlug ? bySlug.get(m.eventSlug) : undefined, now));
      }
      if (fresh.length) {
        for (const s of fresh) subscribed.add(s);
        slugs.push(...fresh);
        if (send) subscribe(fresh);
        if (!socket) connect();
      }
    }

    function subscribe(list: readonly string[]): void {
      for (let i = 0; i < list.length; i += WS_MAX_SLUGS_PER_SUBSCRIPTION) {
        const msg: WsSubscribe = {
          subscribe: {
            requestId: `md-${++requestSeq}`,
            subscriptionType: SUBSCRIPTION_MARKET_DATA,
            marketSlugs: list.slice(i, i + WS_MAX_SLUGS_PER_SUBSCRIPTION),
          },
        };
        send?.(JSON.stringify(msg));
      }
    }

    function connect(): void {
      socket = reconnectingSocket({
        url: wsUrl!,
        headers: auth,
        log,
        minBackoffMs: ingest.reconnectMinMs,
        maxBackoffMs: ingest.reconnectMaxMs,
        heartbeatMs: ingest.heartbeatMs,
      }).subscribe({
        next: (ev) => {
          if (ev.kind === 'open') {
            send = ev.send;
            if (wasOpen) stats.reconnects++;
            wasOpen = true;
            subscribe(slugs);
            feedEvent('connected');
          } else if (ev.kind === 'close') {
            const was = send !== undefined;
            send = undefined;
            if (!was) return;
            mapper.reset();
            feedEvent(ev.stalled ? 'stalled' : 'disconnected', `${ev.code} ${ev.reason}; retry in ${ev.retryInMs} ms`);
          } else {
            let parsed: unknown;
            try {
              parsed = JSON.parse(ev.data);
            } catch (e) {
              stats.frames++;
              stats.malformedFrame('json', (e as Error).message, ev.data);
              return;
            }
            for (const e of mapper.map(parsed, ev.localTimestamp)) emit(e);
          }
        },
        error: (e: Error) => feedEvent('error', e.message),
      });
    }

    function scheduleRefresh(delay: number, attempt = 0): void {
      later(delay, () => {
        refresh().then(
          () => {
            // A completed catalog walk: /status measures catalog freshness from these.
            feedEvent('catalog');
            scheduleRefresh(ingest.catalogRefreshMs);
          },
          (e: Error) => {
            log.warn({ err: e.message }, 'polymarket_us catalog refresh failed');
            feedEvent('error', `catalog: ${e.message}`);
            const backoff = Math.min(ingest.reconnectMaxMs, ingest.reconnectMinMs * 2 ** Math.min(attempt, 16));
            scheduleRefresh(socket ? ingest.catalogRefreshMs : backoff, attempt + 1);
          },
        );
      });
    }

    scheduleRefresh(0);
    return () => {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      socket?.unsubscribe();
    };
  });

  return { venue, stats, events$ };
}

/** PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * Polymarket US API-key headers for the WebSocket handshake, or undefined when no key is
 * configured. Throws a clear error for a secret that is not a base64 Ed25519 key.
 */
export function polymarketUsAuthHeaders(wsUrl: string, env: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> | undefined {
  const keyId = env['POLYMARKET_US_KEY_ID'];
  const secret = env['POLYMARKET_US_SECRET_KEY'];
  if (!keyId || !secret) return undefined;
  const raw = /^[A-Za-z0-9+/]+={0,2}$/.test(secret.trim()) ? Buffer.from(secret.trim(), 'base64') : Buffer.alloc(0);
  if (raw.length !== 32 && raw.length !== 64)
    throw new Error(
      `POLYMARKET_US_SECRET_KEY: expected a base64 Ed25519 key of 32 or 64 bytes, got ${raw.length ? `${raw.length} bytes` : 'something that is not base64'}`,
    );
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, raw.subarray(0, 32)]), format: 'der', type: 'pkcs8' });
  return signedHeaders({ key: 'X-PM-Access-Key', timestamp: 'X-PM-Timestamp', signature: 'X-PM-Signature' }, keyId, new URL(wsUrl).pathname, (m) =>
    sign(null, m, key),
  );
}
