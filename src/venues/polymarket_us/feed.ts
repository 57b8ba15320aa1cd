import { createPrivateKey, sign } from 'node:crypto';
import type { z } from 'zod';
import type { MarketUpsert } from '../../core/types.js';
import { getJson, url } from '../common/http.js';
import { signedHeaders } from '../common/auth.js';
import { createVenueFeed, type FeedRuntime, type Stream } from '../common/runtime.js';
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
 *   `eventSlug`; an upsert per market (the runtime emits it again only when it changed); markets that leave the open list
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
  const wsUrl = ctx.endpoints.ws;
  if (!wsUrl) throw new Error(`${ctx.venue.label}: polymarket_us feed needs endpoints.ws`);
  const auth = polymarketUsAuthHeaders(wsUrl);
  return createVenueFeed(ctx, 'polymarket_us', (rt) => {
    const mapper = new PolymarketUsMapper(rt.venue, rt.log, rt.stats);
    const channel = new SlugChannel(rt, wsUrl, auth);
    const catalog = new UsCatalog(rt);
    return {
      mapper,
      start: () =>
        rt.catalog(async () => {
          channel.add(await catalog.refresh((slug) => !channel.has(slug)));
          return undefined;
        }),
    };
  });
}

const isOpen = (u: MarketUpsert): boolean => u.status === 'active' || u.status === 'initialized';

/**
 * The REST catalog walk, and which markets were open at the last one (to follow them to their end).
 * Page by page: the events are kept without their markets (the parents of the list's markets),
 * each `/v1/markets` page is published as it arrives and let go; only the slugs seen stay to the
 * end of the walk.
 */
class UsCatalog {
  /** slug → whether it was still open when last seen. */
  private readonly open = new Map<string, boolean>();

  constructor(private readonly rt: FeedRuntime) {}

  /** One walk: every market published; returns the open slugs that `wanted` accepts. */
  async refresh(wanted: (slug: string) => boolean): Promise<string[]> {
    const bySlug = new Map<string, UsEvent>();
    await this.pages('/v1/events', usEventsResponseSchema, (b) => {
      for (const e of b.events) {
        const { markets: _markets, ...parent } = e;
        bySlug.set(e.slug, parent);
      }
      return b.events.length;
    });
    // Stamped as each upsert goes out, after the answer it comes from (a replay applies it at this time).
    const upsert = (m: UsMarket): MarketUpsert => usMarketToUpsert(this.rt.venue, m, m.eventSlug ? bySlug.get(m.eventSlug) : undefined, this.rt.now());
    const current = new Set<string>();
    const fresh: string[] = [];
    await this.pages('/v1/markets', usMarketsResponseSchema, (b) => {
      for (const m of b.markets) {
        current.add(m.slug);
        const u = upsert(m);
        this.publish(u);
        if (wanted(m.slug) && isOpen(u)) fresh.push(m.slug);
      }
      return b.markets.length;
    });
    if (this.rt.stopped) return fresh;
    const gone = [...this.open].filter(([s, open]) => open && !current.has(s)).map(([s]) => s);
    for (let i = 0; i < gone.length && !this.rt.stopped; i += 50) {
      const u = new URL(url(this.rt.endpoints.rest, '/v1/markets', { limit: 50 }));
      for (const s of gone.slice(i, i + 50)) u.searchParams.append('slug', s);
      const body = await getJson(u.toString(), usMarketsResponseSchema);
      for (const m of body.markets) this.publish(upsert(m));
    }
    return fresh;
  }

  /** One upsert out (the frame path shows it to the mapper, which learns it). */
  private publish(u: MarketUpsert): void {
    this.open.set(venueMarketId(this.rt.venue, u.marketId) ?? u.marketId, isOpen(u));
    this.rt.emit(u);
  }

  /** Walks `path` a page at a time; `page` takes each body before the next is asked for and says how many rows it had. */
  private async pages<B>(path: string, schema: z.ZodType<B>, page: (b: B) => number): Promise<void> {
    const limit = 100;
    for (let n = 0; n < 500 && !this.rt.stopped; n++) {
      const body = await getJson(url(this.rt.endpoints.rest, path, { active: true, closed: false, limit, offset: n * limit }), schema);
      if (this.rt.stopped || page(body) < limit) return;
    }
  }
}

/** The one markets connection: opened with the first slugs, every slug subscribed on each (re)connect. */
class SlugChannel {
  private readonly slugs: string[] = [];
  private readonly subscribed = new Set<string>();
  private stream: Stream | undefined;
  private requestSeq = 0;

  constructor(
    private readonly rt: FeedRuntime,
    private readonly wsUrl: string,
    private readonly headers: Record<string, string> | undefined,
  ) {}

  has(slug: string): boolean {
    return this.subscribed.has(slug);
  }

  add(fresh: readonly string[]): void {
    if (!fresh.length) return;
    for (const s of fresh) this.subscribed.add(s);
    this.slugs.push(...fresh);
    // Not open: the subscribe sent on open carries them.
    if (this.stream) {
      if (this.stream.open) this.subscribe(fresh);
    } else this.stream = this.rt.stream({ url: this.wsUrl, headers: this.headers, onOpen: () => this.subscribe(this.slugs) });
  }

  /** Requests of at most 100 slugs, `md-<n>` request ids; dropped while the connection is down. */
  private subscribe(list: readonly string[]): void {
    for (let i = 0; i < list.length; i += WS_MAX_SLUGS_PER_SUBSCRIPTION) {
      const msg: WsSubscribe = {
        subscribe: {
          requestId: `md-${++this.requestSeq}`,
          subscriptionType: SUBSCRIPTION_MARKET_DATA,
          marketSlugs: list.slice(i, i + WS_MAX_SLUGS_PER_SUBSCRIPTION),
        },
      };
      this.stream?.send(JSON.stringify(msg));
    }
  }
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
