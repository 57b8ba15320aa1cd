import type { WebSocket } from 'ws';
import type { VenueConfig } from '../../config/schema.js';
import { PAYOUT } from '../../core/price.js';
import type { MarketStatus } from '../../core/types.js';
import { SUBSCRIPTION_MARKET_DATA, type MarketState } from '../../venues/polymarket_us/raw.js';
import { createSimHttp, HttpError, type SimHttp } from '../server-kit.js';
import type { SimChange, SimFault, SimListing, SimServer, SimServerFactory, SimWorldApi } from '../types.js';
import { groupsOf } from './groups.js';
import { polyPrice, polySize } from './polymarket.js';

/**
 * Simulated Polymarket US (SYNTHETIC DATA), in the formats described in
 * src/venues/polymarket_us/raw.ts (the official clients' shapes; no recorded payloads exist):
 * - `GET /v1/markets` (`limit`, `offset`, `active`, `closed`, repeated `slug`, `eventSlug`),
 *   `GET /v1/events`, `GET /v1/market/slug/:slug`, `GET /v1/markets/:slug/book`,
 *   `GET /v1/markets/:slug/settlement`.
 * - `ws://…/v1/ws/markets`: `{"subscribe":{"requestId","subscriptionType":
 *   "SUBSCRIPTION_TYPE_MARKET_DATA","marketSlugs":[…]}}` answers one `marketData` (full book) per
 *   slug, then one after every book change, trade (new stats) or status change of the listing;
 *   `{"unsubscribe":{"requestId"}}` drops that request's slugs; `{"heartbeat":{}}` every 5 s; an
 *   `{"requestId","error"}` for a request it cannot serve. No auth is asked for (the real venue signs
 *   the handshake with Ed25519).
 *
 * The book is the listing's YES book: bids and offers best first.
 * States: active → OPEN, initialized → PREOPEN, closed and determined → EXPIRED, finalized →
 * TERMINATED.
 *
 * Faults: `disconnect` drops every socket; `gap` makes every connection skip its next `marketData`
 * (harmless by design: every message is a full book); `malformed` sends `count` invalid messages
 * (truncated JSON, wrong types, an unknown message, a price of 1.5, a negative quantity); `stall`
 * holds frames and REST answers for `ms`; `duplicate_snapshot` resends every subscribed book.
 */

interface Conn {
  readonly ws: WebSocket;
  /** requestId → slugs. */
  readonly requests: Map<string, string[]>;
  skipNext: boolean;
  readonly queue: string[];
}

const STATE: Record<MarketStatus, MarketState> = {
  active: 'MARKET_STATE_OPEN',
  initialized: 'MARKET_STATE_PREOPEN',
  closed: 'MARKET_STATE_EXPIRED',
  determined: 'MARKET_STATE_EXPIRED',
  finalized: 'MARKET_STATE_TERMINATED',
};
const CLOSED: readonly MarketStatus[] = ['closed', 'determined', 'finalized'];
const usd = (units: number): { value: string; currency: 'USD' } => ({ value: polyPrice(units), currency: 'USD' });
const iso = (ms: number): string => new Date(ms).toISOString();
/** A stable small integer id for a slug (the venue's numeric market/event ids). */
function numericId(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) >>> 0;
  return h % 10_000_000;
}

/** Serves the Polymarket US protocol for `venue` from `world`. */
export const serve: SimServerFactory = async (world: SimWorldApi, venue: VenueConfig, opts): Promise<SimServer> => {
  const http = createSimHttp();
  const label = venue.label;
  const v: UsVenue = { world, listings: () => world.listings(label), bySlug: (slug) => world.listing(label, slug) };
  listRoutes(http, v);
  marketRoutes(http, v);
  const stream = new UsStream(v, label, http);
  http.ws('/v1/ws/markets', (ws) => stream.connect(ws));
  const unsubscribe = world.onChange((ch) => stream.onChange(ch));

  const { host, port } = await http.listen(opts.host, opts.port);
  return {
    venue,
    endpoints: { rest: `http://${host}:${port}`, ws: `ws://${host}:${port}/v1/ws/markets` },
    fault: (f) => stream.fault(f),
    close: async () => {
      unsubscribe();
      stream.close();
      await http.close();
    },
  };
};

function marketBook(world: SimWorldApi, l: SimListing): Record<string, unknown> {
  const b = l.book;
  const bids = b.bids.levels().map(([p, s]) => ({ px: usd(p), qty: polySize(s) }));
  const offers = b.asks.levels().map(([p, s]) => ({ px: usd(p), qty: polySize(s) }));
  const stats: Record<string, unknown> = { sharesTraded: polySize(l.volume), openInterest: polySize(l.openInterest) };
  if (l.last !== undefined) stats['lastTradePx'] = usd(l.last);
  return { marketSlug: l.id, bids, offers, state: STATE[l.status], stats, transactTime: iso(b.timestamp || world.now()) };
}

function market(l: SimListing): Record<string, unknown> {
  return {
    id: numericId(l.id),
    slug: l.id,
    title: l.title,
    outcome: l.outcome ?? 'Yes',
    description: '',
    active: l.status !== 'initialized',
    closed: CLOSED.includes(l.status),
    liquidity: l.book.bids.levels().reduce((s, [p, q]) => s + (p * q) / PAYOUT, 0),
    volume: l.volume,
    eventSlug: l.ids['event_slug'],
    endDate: iso(l.closeTime),
    category: l.category,
  };
}

const bool = (q: URLSearchParams, k: string): boolean | undefined => (q.get(k) === null ? undefined : q.get(k) === 'true');
function page<T>(rows: T[], q: URLSearchParams): T[] {
  const limit = Math.min(500, Math.max(0, Number(q.get('limit') ?? 20) || 20));
  const offset = Math.max(0, Number(q.get('offset') ?? 0) || 0);
  return rows.slice(offset, offset + limit);
}

/** What the REST routes read. */
interface UsVenue {
  readonly world: SimWorldApi;
  listings(): readonly SimListing[];
  bySlug(slug: string): SimListing | undefined;
}

/**
 * `GET /v1/markets` and `GET /v1/events`: filtered, paged lists. Filters read the listings; the
 * documents are built for the page only (building every one per page made a catalog walk quadratic).
 */
function listRoutes(http: SimHttp, v: UsVenue): void {
  const eventsOf = groupsOf(
    () => v.listings(),
    (l) => l.ids['event_slug'] ?? l.id,
  );
  http.get('/v1/markets', (q) => {
    const active = bool(q, 'active');
    const closed = bool(q, 'closed');
    const slugs = new Set(q.getAll('slug'));
    const events = new Set(q.getAll('eventSlug'));
    const rows = v
      .listings()
      .filter(
        (l) =>
          (active === undefined || (l.status !== 'initialized') === active) &&
          (closed === undefined || CLOSED.includes(l.status) === closed) &&
          (slugs.size === 0 || slugs.has(l.id)) &&
          (events.size === 0 || events.has(String(l.ids['event_slug']))),
      );
    return { markets: page(rows, q).map(market) };
  });

  http.get('/v1/events', (q) => {
    const active = bool(q, 'active');
    const closed = bool(q, 'closed');
    const rows: [string, readonly SimListing[]][] = [];
    for (const [slug, g] of eventsOf()) {
      if (active !== undefined && g.some((l) => l.status !== 'initialized') !== active) continue;
      if (closed !== undefined && g.every((l) => CLOSED.includes(l.status)) !== closed) continue;
      rows.push([slug, g]);
    }
    return { events: page(rows, q).map(([slug, g]) => eventDoc(slug, g)) };
  });
}

/** One Polymarket US event with its markets. */
function eventDoc(slug: string, g: readonly SimListing[]): Record<string, unknown> {
  const ms = g.map(market);
  return {
    id: numericId(slug),
    slug,
    title: g[0]!.eventTitle,
    description: '',
    startTime: iso(g[0]!.event.startTime),
    endTime: iso(Math.max(...g.map((l) => l.closeTime))),
    active: ms.some((m) => m['active'] === true),
    closed: ms.every((m) => m['closed'] === true),
    archived: false,
    featured: false,
    volume: g.reduce((s, l) => s + l.volume, 0),
    markets: ms.map(({ eventSlug: _e, endDate: _d, category: _c, ...m }) => m),
    tags: g[0]!.tags.map((t) => ({ id: numericId(t), slug: t.toLowerCase(), label: t })),
  };
}

/** One market by slug: the market, its book, its settlement. */
function marketRoutes(http: SimHttp, v: UsVenue): void {
  http.get('/v1/market/slug/:slug', (_q, p) => {
    const l = v.bySlug(p['slug'] ?? '');
    if (!l) throw new HttpError(404, { code: 5, message: 'market not found' });
    return { market: market(l) };
  });

  http.get('/v1/markets/:slug/book', (_q, p) => {
    const l = v.bySlug(p['slug'] ?? '');
    if (!l) throw new HttpError(404, { code: 5, message: 'market not found' });
    return marketBook(v.world, l);
  });

  http.get('/v1/markets/:slug/settlement', (_q, p) => {
    const l = v.bySlug(p['slug'] ?? '');
    if (!l) throw new HttpError(404, { code: 5, message: 'market not found' });
    if (l.status !== 'finalized' && l.status !== 'determined') throw new HttpError(404, { code: 5, message: 'market not settled' });
    return { marketSlug: l.id, settlementPrice: usd(l.last ?? 0), settledAt: iso(l.closeTime) };
  });
}

/**
 * The market-data WebSocket: requests by id, a full book per subscribed slug after every change,
 * heartbeats, stall holding and the stream faults.
 */
class UsStream {
  private readonly conns = new Set<Conn>();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly v: UsVenue,
    private readonly label: string,
    private readonly http: SimHttp,
  ) {
    this.heartbeat = setInterval(() => {
      for (const c of this.conns) this.out(c, '{"heartbeat":{}}');
    }, 5_000);
    this.heartbeat.unref?.();
  }

  /** Takes a new client. */
  connect(ws: WebSocket): void {
    const c: Conn = { ws, requests: new Map(), skipNext: false, queue: [] };
    this.conns.add(c);
    ws.on('close', () => this.conns.delete(c));
    ws.on('message', (data) => this.onMessage(c, data.toString()));
  }

  private onMessage(c: Conn, text: string): void {
    let m: unknown;
    try {
      m = JSON.parse(text);
    } catch {
      this.out(c, JSON.stringify({ error: 'invalid request' }));
      return;
    }
    const msg = (typeof m === 'object' && m !== null ? m : {}) as {
      subscribe?: { requestId?: unknown; subscriptionType?: unknown; marketSlugs?: unknown };
      unsubscribe?: { requestId?: unknown };
    };
    if (msg.unsubscribe && typeof msg.unsubscribe.requestId === 'string') {
      c.requests.delete(msg.unsubscribe.requestId);
      return;
    }
    const s = msg.subscribe;
    if (!s || typeof s.requestId !== 'string') {
      this.out(c, JSON.stringify({ error: 'invalid request' }));
      return;
    }
    if (s.subscriptionType !== SUBSCRIPTION_MARKET_DATA || !Array.isArray(s.marketSlugs) || s.marketSlugs.length > 100) {
      this.out(c, JSON.stringify({ requestId: s.requestId, error: 'unsupported subscription' }));
      return;
    }
    const slugs = s.marketSlugs.filter((x): x is string => typeof x === 'string');
    c.requests.set(s.requestId, slugs);
    for (const slug of slugs) {
      const l = this.v.bySlug(slug);
      if (l) this.sendBook(c, s.requestId, l);
    }
  }

  private flush(c: Conn): void {
    while (c.queue.length && c.ws.readyState === c.ws.OPEN) c.ws.send(c.queue.shift()!);
  }

  /** Sends now, or holds until the stall is over. */
  private out(c: Conn, text: string): void {
    if (c.ws.readyState !== c.ws.OPEN) return;
    const wait = this.http.stallUntil - Date.now();
    if (wait > 0) {
      c.queue.push(text);
      this.flushTimer ??= setTimeout(() => {
        this.flushTimer = undefined;
        for (const x of this.conns) this.flush(x);
      }, wait);
      return;
    }
    this.flush(c);
    c.ws.send(text);
  }

  private sendBook(c: Conn, requestId: string, l: SimListing): void {
    this.out(c, JSON.stringify({ requestId, subscriptionType: SUBSCRIPTION_MARKET_DATA, marketData: marketBook(this.v.world, l) }));
  }

  /** Any change of a listing but its appearance: a fresh book to every request holding it. */
  onChange(ch: SimChange): void {
    if (this.conns.size === 0) return;
    const l = ch.type === 'trade' ? ch.trade.listing : ch.listing;
    if (l.venue !== this.label || ch.type === 'listing') return;
    for (const c of this.conns) {
      const req = subscribedTo(c, l.id);
      if (req === undefined) continue;
      if (c.skipNext) {
        c.skipNext = false;
        continue;
      }
      this.sendBook(c, req, l);
    }
  }

  fault(f: SimFault): void {
    switch (f.kind) {
      case 'disconnect':
        this.http.dropAll();
        return;
      case 'gap':
        for (const c of this.conns) c.skipNext = true;
        return;
      case 'malformed':
        for (const c of this.conns) for (let i = 0; i < (f.count ?? 1); i++) this.out(c, this.malformed(c, i));
        return;
      case 'stall':
        this.http.stallUntil = Date.now() + f.ms;
        return;
      case 'duplicate_snapshot':
        for (const c of this.conns)
          for (const [req, slugs] of c.requests)
            for (const s of slugs) {
              const l = this.v.bySlug(s);
              if (l) this.sendBook(c, req, l);
            }
    }
  }

  private malformed(c: Conn, i: number): string {
    const [req, slugs] = c.requests.entries().next().value ?? ['md-0', ['none']];
    const slug = slugs[0] ?? 'none';
    const l = this.v.bySlug(slug);
    const good = l ? marketBook(this.v.world, l) : { marketSlug: slug, bids: [], offers: [], state: 'MARKET_STATE_OPEN' };
    switch (i % 5) {
      case 0:
        return '{"requestId":"md-1","marketData":{"marketSlug":'; // truncated JSON
      case 1:
        return JSON.stringify({ requestId: req, marketData: { ...good, bids: 'none' } }); // wrong types
      case 2:
        return JSON.stringify({ requestId: req, marketDepthV2: { marketSlug: slug } }); // unknown message
      case 3:
        return JSON.stringify({ requestId: req, marketData: { ...good, bids: [{ px: { value: '1.5', currency: 'USD' }, qty: '10' }] } });
      default:
        return JSON.stringify({ requestId: req, marketData: { ...good, offers: [{ px: { value: '0.5', currency: 'USD' }, qty: '-10' }] } });
    }
  }

  close(): void {
    clearInterval(this.heartbeat);
    if (this.flushTimer) clearTimeout(this.flushTimer);
  }
}

/** The request of `c` that holds `slug`, if any. */
function subscribedTo(c: Conn, slug: string): string | undefined {
  for (const [id, slugs] of c.requests) if (slugs.includes(slug)) return id;
  return undefined;
}
