import type { z } from 'zod';
import type { VenueConfig } from '../../config/schema.js';
import type { MarketUpsert, NormalizedEvent } from '../../core/types.js';
import { getJson, url } from '../common/http.js';
import { createVenueFeed, type FeedRuntime, type FeedSession, type Stream } from '../common/runtime.js';
import { venueMarketId, type FeedContext, type VenueFeed } from '../protocol.js';
import { dataTradeToTrade, dataTradeId, gammaMarketToUpsert, PolymarketMapper } from './mappers.js';
import {
  dataTradesResponseSchema,
  gammaEventsResponseSchema,
  gammaMarketsResponseSchema,
  WS_MAX_ASSETS_PER_CONNECTION,
  WS_PING,
  type DataTrade,
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
 *   `GET /markets?active=true&closed=false` pages; every market becomes an upsert (the runtime
 *   emits it again only when it changed). Markets that drop out of the open list are fetched by
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
 *   the `best_bid`/`best_ask` every `price_change` entry carries. Around a trade the venue's best can
 *   lead its level updates, so a disagreement is first a warning (changes still applied); only one
 *   that persists through later frames of the asset becomes a `gap` (mappers.ts, SUSPECT_FRAMES and
 *   SUSPECT_MS). The feed then cycles that asset (unsubscribe + subscribe), which makes the server
 *   send a fresh `book`, and emits `resynced` when it arrives. A lost update below the top of the
 *   book cannot be detected this way; it is repaired by the next `book` the server sends (after
 *   every trade on that asset) or by a reconnect.
 * - Trades: `GET /trades?limit=500&offset=0&takerOnly=true` every `pollMs`, newest first; unseen ones
 *   (by trade id: transaction hash + fill digest) are emitted oldest first; a page that is entirely
 *   new is followed by the next, up to 5 pages.
 */
export function createPolymarketFeed(ctx: FeedContext): VenueFeed {
  const { venue, endpoints } = ctx;
  const gamma = endpoints.extra?.['gamma'];
  const data = endpoints.extra?.['data'];
  const wsUrl = endpoints.ws;
  if (!gamma) throw new Error(`${venue.label}: polymarket feed needs endpoints.extra.gamma`);
  if (!wsUrl) throw new Error(`${venue.label}: polymarket feed needs endpoints.ws`);
  return createVenueFeed(ctx, 'polymarket', (rt) => {
    const mapper = new PolymarketMapper(venue, rt.log, { stats: rt.stats, lastTradeAs: data ? 'quote' : 'trade' });
    const channel = new MarketChannel(rt, mapper, wsUrl);
    const catalog = new GammaCatalog(rt, gamma);
    const session: FeedSession = {
      mapper,
      onEvent: (e) => channel.see(e),
      start: () => {
        rt.catalog(async () => {
          channel.assign(await catalog.refresh());
          return undefined;
        });
        if (data) pollTrades(rt, mapper, data);
      },
    };
    return session;
  });
}

const isOpen = (u: MarketUpsert): boolean => u.status === 'active' || u.status === 'initialized';
/** The condition id an upsert is for (its market id without the venue's prefix). */
const conditionIdOf = (venue: VenueConfig, u: MarketUpsert): string => venueMarketId(venue, u.marketId) ?? u.marketId;

/**
 * The Gamma catalog walk, and which markets were open at the last one (to follow them to their end).
 *
 * Page by page: a walk of 100k markets is hundreds of pages, and holding them all (events with
 * their markets, then the market list, then an upsert for each) before publishing anything made
 * the walk the largest thing in the heap while catalogs arrive. Each `/markets` page is published
 * as it arrives and let go. What the walk must still know at its end is kept small: each event's
 * fields without its markets (the parent of the list's markets), the condition ids seen, and the
 * events' own markets that the list has not shown yet, as JSON text (published after the list,
 * as before, when the list never shows them: closed markets of an open event).
 */
class GammaCatalog {
  /** conditionId → whether it was still open when last seen. */
  private readonly open = new Map<string, boolean>();

  constructor(
    private readonly rt: FeedRuntime,
    private readonly gamma: string,
  ) {}

  /** One walk: every market published; returns the tokens of the open two-outcome markets. */
  async refresh(): Promise<string[]> {
    const walk = new GammaWalk(this.rt, (u, cid) => this.publish(u, cid));
    await this.pages('/events', gammaEventsResponseSchema, 100, (events) => walk.events(events));
    await this.pages('/markets', gammaMarketsResponseSchema, 500, (markets) => walk.markets(markets, this.rt.now()));
    if (this.rt.stopped) return walk.assets;
    // Stamped when the answers are in, right before the upserts go out (a replay applies them at this time).
    walk.rest(this.rt.now());
    const gone = [...this.open].filter(([cid, open]) => open && !walk.current.has(cid)).map(([cid]) => cid);
    if (gone.length) {
      const ended = await this.vanished(gone);
      const now = this.rt.now();
      for (const m of ended) {
        const u = gammaMarketToUpsert(this.rt.venue, m, m.events?.[0] ?? undefined, now);
        if (u) this.publish(u);
      }
    }
    return walk.assets;
  }

  /** One upsert out (the frame path shows it to the mapper, which learns its tokens). */
  private publish(u: MarketUpsert, conditionId = conditionIdOf(this.rt.venue, u)): void {
    this.open.set(conditionId, isOpen(u));
    this.rt.emit(u);
  }

  /** Walks `path` a page at a time, handing each page to `page` before the next is asked for. */
  private async pages<T>(path: string, schema: z.ZodType<T[]>, limit: number, page: (rows: T[]) => void): Promise<void> {
    for (let n = 0; n < 200 && !this.rt.stopped; n++) {
      const rows = await getJson(url(this.gamma, path, { active: true, closed: false, limit, offset: n * limit }), schema);
      if (this.rt.stopped) return;
      page(rows);
      if (rows.length < limit) break;
    }
  }

  /** Markets that left the open list: fetch them by condition id to learn how they ended. */
  private async vanished(ids: string[]): Promise<GammaMarket[]> {
    const out: GammaMarket[] = [];
    for (let i = 0; i < ids.length && !this.rt.stopped; i += 50) {
      const u = new URL(url(this.gamma, '/markets', { limit: 50 }));
      for (const id of ids.slice(i, i + 50)) u.searchParams.append('condition_ids', id);
      out.push(...(await getJson(u.toString(), gammaMarketsResponseSchema)));
    }
    return out;
  }
}

/** An event's market waiting for the list: its record as JSON text and the event it came in. */
interface Nested {
  readonly json: string;
  readonly parent: GammaEventRef;
}

/**
 * One Gamma walk's state: events first (kept without their markets), then the market list
 * published a page at a time, then the events' markets the list did not have. A market is
 * published once per walk, from the list when the list has it (with the list's event looked up
 * among the events), else from its first event.
 */
class GammaWalk {
  /** Condition ids published by this walk (markets that left the catalog are the open ones not in it). */
  readonly current = new Set<string>();
  /** Tokens of the open two-outcome markets. */
  readonly assets: string[] = [];
  /** Event id → the event without its markets (the last page that had it wins, as a Map of every event did). */
  private readonly eventById = new Map<string, GammaEventRef>();
  /** Condition ids already mapped (published or counted malformed). */
  private readonly seen = new Set<string>();
  /** The events' markets not yet seen in the list, in the order the events gave them. */
  private readonly nested = new Map<string, Nested>();

  constructor(
    private readonly rt: FeedRuntime,
    private readonly publish: (u: MarketUpsert, conditionId: string) => void,
  ) {}

  /** One `/events` page: the events kept without their markets, their markets held until the list is walked. */
  events(page: readonly GammaEvent[]): void {
    for (const e of page) {
      const { markets, ...parent } = e;
      this.eventById.set(e.id, parent);
      for (const m of markets ?? []) if (!this.nested.has(m.conditionId)) this.nested.set(m.conditionId, { json: JSON.stringify(m), parent });
    }
  }

  /** One `/markets` page, published now; its markets are no longer waited for from the events. */
  markets(page: readonly GammaMarket[], now: number): void {
    for (const m of page) {
      const ref = m.events?.[0] ?? undefined;
      this.add(m, (ref && this.eventById.get(ref.id)) ?? ref, now);
      this.nested.delete(m.conditionId);
    }
  }

  /** After the list: the events' markets it did not have. */
  rest(now: number): void {
    for (const { json, parent } of this.nested.values()) this.add(JSON.parse(json) as GammaMarket, parent, now);
    this.nested.clear();
  }

  private add(m: GammaMarket, parent: GammaEventRef | undefined, now: number): void {
    if (this.seen.has(m.conditionId)) return;
    this.seen.add(m.conditionId);
    const u = gammaMarketToUpsert(this.rt.venue, m, parent, now);
    if (!u) {
      this.rt.stats.malformedFrame('gamma_market', 'not a two-outcome market', m.conditionId);
      return;
    }
    const cid = conditionIdOf(this.rt.venue, u);
    this.current.add(cid);
    this.publish(u, cid);
    if (isOpen(u) && u.yesInstrument && u.noInstrument) this.assets.push(u.yesInstrument, u.noInstrument);
  }
}

interface Shard {
  readonly id: number;
  readonly assets: string[];
  stream?: Stream | undefined;
}

/** The market channel: assets sharded over connections of at most 500, and the gap resync. */
class MarketChannel {
  private readonly shards: Shard[] = [];
  private readonly shardOf = new Map<string, Shard>();
  private readonly resyncing = new Set<string>();

  constructor(
    private readonly rt: FeedRuntime,
    private readonly mapper: PolymarketMapper,
    private readonly wsUrl: string,
  ) {}

  /** Subscribes the assets not yet on a connection: the last shard first, then new shards. */
  assign(assets: readonly string[]): void {
    const todo = [...new Set(assets)].filter((a) => !this.shardOf.has(a));
    const last = this.shards[this.shards.length - 1];
    if (last && last.assets.length < WS_MAX_ASSETS_PER_CONNECTION) {
      const add = todo.splice(0, WS_MAX_ASSETS_PER_CONNECTION - last.assets.length);
      for (const a of add) this.shardOf.set(a, last);
      last.assets.push(...add);
      // Not yet open: the subscribe sent on open carries them.
      if (add.length) send(last, { assets_ids: add, operation: 'subscribe', custom_feature_enabled: true });
    }
    while (todo.length) this.openShard(todo.splice(0, WS_MAX_ASSETS_PER_CONNECTION));
  }

  /** Follows the stream: a gap cycles its asset, the fresh book after it is `resynced`, new markets are subscribed. */
  see(e: NormalizedEvent): void {
    if (e.type === 'feed' && e.state === 'gap' && e.instrument) this.resync(e.instrument);
    else if (e.type === 'book_snapshot' && this.resyncing.delete(e.instrument)) this.rt.feed('resynced', 'fresh book after gap', e.instrument);
    else if (e.type === 'market' && e.yesInstrument && e.noInstrument && e.status === 'active') this.assign([e.yesInstrument, e.noInstrument]);
  }

  private openShard(assets: string[]): void {
    const shard: Shard = { id: this.shards.length, assets };
    this.shards.push(shard);
    for (const a of assets) this.shardOf.set(a, shard);
    const several = (): boolean => this.shards.length > 1;
    shard.stream = this.rt.stream({
      url: this.wsUrl,
      onOpen: () => send(shard, { assets_ids: shard.assets, type: 'market', custom_feature_enabled: true }),
      // Polymarket drops connections that stay silent; it wants the text PING about every 10 s.
      keepalive: { text: WS_PING, everyMs: Math.min(10_000, this.rt.ingest.heartbeatMs) },
      label: () => (several() ? `shard ${shard.id}` : undefined),
      onClose: () => {
        for (const a of shard.assets) this.resyncing.delete(a);
      },
      // With several connections the other shards' books are still good.
      scope: () => (several() ? { instruments: shard.assets, reset: () => this.mapper.resetInstruments(shard.assets) } : undefined),
    });
  }

  /** Cycles one asset on its connection: the server answers a new subscription with a `book`. */
  private resync(asset: string): void {
    const shard = this.shardOf.get(asset);
    if (!shard?.stream?.open || this.resyncing.has(asset)) return;
    this.resyncing.add(asset);
    send(shard, { assets_ids: [asset], operation: 'unsubscribe' });
    send(shard, { assets_ids: [asset], operation: 'subscribe', custom_feature_enabled: true });
  }
}

function send(shard: Shard, msg: WsSubscribe | WsSubscriptionUpdate): void {
  shard.stream?.send(JSON.stringify(msg));
}

/**
 * Rows of a trades page looked up, or trades emitted, per turn of the event loop. A page is 500
 * rows: its ids (a sha1 each) and the emission of its new trades through every consumer took 5–25
 * ms of the main thread in one piece every `pollMs`, and the WebSocket frames read meanwhile waited
 * behind it (the live fan-out bench's profiles, issue 34).
 */
export const TRADE_ROWS_PER_TURN = 100;

/** Polls the data-api for trades every `pollMs`; the first poll reads one page. */
function pollTrades(rt: FeedRuntime, mapper: PolymarketMapper, data: string): void {
  const seen = new Map<string, true>();
  let first = true;
  rt.repeat(
    rt.ingest.pollMs,
    async () => {
      const fresh = await newTrades(rt, data, seen, first);
      first = false;
      for (let i = 0; i < fresh.length; i += TRADE_ROWS_PER_TURN) {
        await rt.nextTurn();
        if (rt.stopped) return;
        const end = Math.min(fresh.length, i + TRADE_ROWS_PER_TURN);
        for (let k = i; k < end; k++) {
          const t = fresh[k]!;
          rt.emit(dataTradeToTrade(rt.venue, t, rt.now(), mapper.token(t.asset)));
        }
      }
    },
    'polymarket trades poll',
  );
}

/**
 * Trades not seen before, oldest first: `GET /trades?limit=500&offset=0&takerOnly=true` (newest
 * first), and the next page while a page is entirely new, up to 5 pages (1 on the first poll).
 * A page's rows are looked up TRADE_ROWS_PER_TURN at a time, a turn of the event loop apart.
 */
async function newTrades(rt: FeedRuntime, data: string, seen: Map<string, true>, first: boolean): Promise<DataTrade[]> {
  const limit = 500;
  const fresh: DataTrade[] = [];
  for (let page = 0; page < (first ? 1 : 5) && !rt.stopped; page++) {
    const rows = await getJson(url(data, '/trades', { limit, offset: page * limit, takerOnly: true }), dataTradesResponseSchema);
    let seenOne = false;
    for (let i = 0; i < rows.length && !rt.stopped; i += TRADE_ROWS_PER_TURN) {
      // The page's read and parse ran in this task: its rows wait for the next turn.
      await rt.nextTurn();
      const end = Math.min(rows.length, i + TRADE_ROWS_PER_TURN);
      for (let k = i; k < end; k++) {
        const t = rows[k]!;
        const id = dataTradeId(t);
        if (seen.has(id)) {
          seenOne = true;
          continue;
        }
        seen.set(id, true);
        fresh.push(t);
      }
    }
    if (seenOne || rows.length < limit) break;
  }
  while (seen.size > 20_000) seen.delete(seen.keys().next().value!);
  // Newest first on the wire; emitted oldest first (stable for equal timestamps).
  return fresh.reverse();
}
