import type { VenueConfig } from '../config/schema.js';
import type { OrderBook } from '../core/book.js';
import type { Clock } from '../core/clock.js';
import type { MatchingService } from '../matching/service.js';
import type { FeedEvent, FrameTimes } from '../core/types.js';
import { FADE_TYPES, type Alert } from '../signals/alerts.js';
import type { GroupSignals } from '../signals/engine.js';
import type { OpportunityRecord } from '../signals/lifecycle/record.js';
import { StateBook, type MarketRead } from '../state/books.js';
import type { EngineState } from '../state/engine.js';
import type { QuoteRecord } from '../state/quotes.js';
import type { StoredTrade } from '../state/trades.js';
import type { VenueDirectory } from '../venues/directory.js';
import { hostedFadeUpdate } from '../views/alert.js';
import { quotePrices } from '../views/market.js';
import { alertBody, bookBody, expiredBody, feedNotice, priceBody, ShownQuotes, signalBody, tickerBody, tradeBody } from './bodies.js';
import { priceBytes, readBytes, readJson } from './booktext.js';
import type { GameLookup } from './client-protocol.js';
import { alertTopic, type AlertChannel } from './protocol.js';
import type { Publisher } from './publish.js';
import type { Topics } from './topics.js';

/** What the fan-out flow (pipelines/fanout.ts) hands state and signal changes to: the live hub, or a WebSocket replay session's router. */
export interface FanoutTarget {
  onQuote(q: QuoteRecord, at?: FrameTimes, book?: OrderBook): void;
  onBook(label: string, marketId: string, at?: FrameTimes, held?: OrderBook): void;
  /** True while no quote or book change can reach a subscriber (`Topics.quiet`): the fan-out then marks nothing. */
  quiet?(): boolean;
  onTrade(t: StoredTrade): void;
  onSignals(g: GroupSignals): void;
  onExpired(r: OpportunityRecord): void;
  onAlert(a: Alert): void;
  onFeedEvent(ev: FeedEvent): void;
  publishHosted(topic: string, body: Readonly<Record<string, unknown>>, data: Readonly<Record<string, unknown>>): void;
}

/** What a router reads and publishes through. */
export interface RouterDeps {
  readonly state: EngineState;
  readonly venues: VenueDirectory;
  readonly games: GameLookup | undefined;
  readonly topics: Topics;
  readonly pub: Publisher;
  readonly bookDepth: number;
}

/**
 * State and signal changes → topics: which topics a change goes to, the message body of each
 * (bodies.ts, booktext.ts), published once per topic that has subscribers. The live hub routes
 * through one on its uWS topics; a WebSocket replay session (replay-session.ts) through one of its
 * own, on the replay's state and the replay client's topics, so a replay sends the very messages
 * live sent.
 */
export class HubRouter implements FanoutTarget {
  private shown = new ShownQuotes();
  /** `Topics.wakes` when `shown` was last valid (see `quiet`). */
  private wakes = 0;
  private readonly catalogVenue: VenueConfig | undefined;
  readonly tickerChannel: string | undefined;

  constructor(private readonly d: RouterDeps) {
    this.catalogVenue = d.venues.withCapability('catalog');
    this.tickerChannel = this.catalogVenue ? `${this.catalogVenue.slug}_prices` : undefined;
  }

  /**
   * A trade of a live game's market goes to `live_games:<event_id>` as a `trade` message (there is
   * no standalone trades channel: trades are scoped to live games).
   */
  onTrade(t: StoredTrade): void {
    const { games, topics, venues, pub } = this.d;
    if (!games) return;
    const eid = games.eventOf(t.venue, t.marketId);
    if (!eid) return;
    const topic = `live_games:${eid}`;
    if (topics.listeners(topic) === 0) return;
    const v = venues.byLabel.get(t.venue);
    pub.publish(topic, tradeBody(eid, v?.slug ?? t.venue, t), undefined, t);
  }

  /**
   * A change of a group's opportunities is published on `arb:<group_id>` / `ev:<group_id>` and on
   * `arb:*` / `ev:*` (all groups). With no such topic held anywhere, no topic name is built.
   */
  onSignals(g: GroupSignals): void {
    if (!this.d.topics.signalsListened) return;
    for (const ch of ['arb', 'ev'] as const) {
      const one = this.d.topics.subs(`${ch}:${g.groupId}`);
      const every = this.d.topics.subs(`${ch}:*`);
      if (!one && !every) continue;
      const body = signalBody(ch, g);
      if (one) this.d.pub.publish(`${ch}:${g.groupId}`, body, one);
      if (every) this.d.pub.publish(`${ch}:*`, body, every);
    }
  }

  /**
   * An opportunity closed: `arb_expired` / `ev_expired` with its id, close reason and record, on the
   * same topics as its group's opportunities, so a client drops it from its list.
   */
  onExpired(r: OpportunityRecord): void {
    const group = `${r.kind}:${r.group_id}`;
    const all = `${r.kind}:*`;
    const topics = this.d.topics;
    if (topics.listeners(group) === 0 && topics.listeners(all) === 0) return;
    const body = expiredBody(r);
    for (const topic of [group, all]) if (topics.listeners(topic) > 0) this.d.pub.publish(topic, body);
  }

  /**
   * An alert of the alert engine: on `smart_money:*` (smart_money, insider, captain_hook) or
   * `fade_finder:*` (fade), in the record form of the /alerts endpoints.
   */
  onAlert(a: Alert): void {
    const ch: AlertChannel = FADE_TYPES.includes(a.type) ? 'fade_finder' : 'smart_money';
    const topic = `${ch}:*`;
    if (this.d.topics.listeners(topic) === 0) return;
    const v = this.d.venues.byLabel.get(a.venue);
    this.d.pub.publish(topic, alertBody(ch, v?.slug ?? a.venue, a, this.d.state.catalog.get(a.venue, a.marketId)?.title ?? null));
  }

  /**
   * A message only connections in the hosted dialect read (fade_finder_update: a fade alert in the
   * hosted API's own shape), on `topic`'s hosted twin right after the topic's last publication and
   * with its seq (the same event again, not a new one).
   */
  publishHosted(topic: string, body: Readonly<Record<string, unknown>>, data: Readonly<Record<string, unknown>>): void {
    this.d.pub.publishHosted(topic, body, data);
  }

  /** Feed health events (from the ingest stream) become warnings to that venue's subscribers. */
  onFeedEvent(ev: FeedEvent): void {
    const v = this.d.venues.byLabel.get(ev.venue);
    if (!v) return;
    const topic = `status:${v.slug}`;
    const body = feedNotice(v, ev);
    if (body === undefined || this.d.topics.listeners(topic) === 0) return;
    this.d.pub.publish(topic, body);
  }

  /**
   * The only subscriber of a prices topic got `q` as its snapshot: a later change that leaves the
   * fields a price_update shows as they were sends nothing (with others subscribed, what they were
   * last shown stands: a change not yet flushed still goes to them).
   */
  snapshotted(q: QuoteRecord): void {
    this.awake().show(q);
  }

  /**
   * Whether no quote or book change can reach a subscriber now (`Topics.quiet`). While quiet the
   * fan-out hands this router no change, so what `shown` holds was not forgotten as quotes changed
   * (`onQuote` forgets a market nobody subscribes to): it is dropped whole when quiet ends.
   */
  quiet(): boolean {
    return this.d.topics.quiet;
  }

  /** `shown`, emptied when quiet ended since it was last read. */
  private awake(): ShownQuotes {
    if (this.wakes !== this.d.topics.wakes) {
      this.wakes = this.d.topics.wakes;
      this.shown = new ShownQuotes();
    }
    return this.shown;
  }

  /**
   * A quote change: prices, the catalog venue's ticker channel, and live games. `at`: the venue
   * frame behind the change, whose times the messages carry; `book`: a book of the market that
   * changed with it, when the caller has it (its slot spares looking the market's topics up).
   */
  onQuote(q: QuoteRecord, at?: FrameTimes, book?: OrderBook): void {
    const { venues, topics, pub, games } = this.d;
    const v = venues.byLabel.get(q.venue);
    if (!v) return;
    // The market's held topics, looked up once for its prices and ticker topics.
    const held = book instanceof StateBook ? topics.heldVia(q.marketId, book) : topics.heldOf(q.marketId);
    const subs = topics.marketSubsIn(held, 'prices', v.slug, q.marketId);
    const shown = this.awake();
    if (!subs) shown.forget(q);
    else if (shown.changed(q)) {
      const topic = subs.topic || `prices:${v.slug}:${q.marketId}`;
      if (subs.ascii && pub.plainOnly(topic, subs)) {
        pub.bytes.reset();
        priceBytes(pub.bytes, q.marketId, v.slug, quotePrices(v, q), q.volume);
        pub.sendBytes(topic, subs, at);
      } else pub.publish(topic, priceBody(v, q, false), subs, at);
    }
    if (games && topics.gamesListened) {
      const eid = games.eventOf(q.venue, q.marketId);
      const subs = eid ? topics.subs(`live_games:${eid}`) : undefined;
      if (subs) pub.publish(`live_games:${eid}`, { ...priceBody(v, q, false), type: 'live_game', channel: 'live_games', event_id: eid }, subs, at);
    }
    const ticker = this.tickerChannel;
    if (ticker && v === this.catalogVenue && topics.mayHoldIn(held)) {
      const one = topics.marketSubsIn(held, ticker, v.slug, q.marketId);
      const every = topics.marketSubs(ticker, v.slug, '*');
      if (one || every) {
        const body = tickerBody(ticker, v, q);
        if (one) pub.publish(one.topic || `${ticker}:${v.slug}:${q.marketId}`, body, one, at);
        if (every) pub.publish(every.topic || `${ticker}:${v.slug}:*`, body, every, at);
      }
    }
  }

  /**
   * A book change: orderbook subscribers of the market; `at` as for onQuote; `held`: the changed
   * book, when the caller has it (saves looking the market's book up).
   */
  onBook(label: string, marketId: string, at?: FrameTimes, held?: OrderBook): void {
    const { venues, topics, pub, state } = this.d;
    const v = venues.byLabel.get(label);
    if (!v) return;
    const subs = held instanceof StateBook ? topics.marketSubsVia('orderbook', v.slug, marketId, held) : topics.marketSubs('orderbook', v.slug, marketId);
    if (!subs) return;
    const topic = subs.topic || `orderbook:${v.slug}:${marketId}`;
    const read = this.read;
    const depth = this.d.bookDepth;
    if (state.books.readMarket(read, label, marketId, held) === undefined) {
      const body = bookBody(state, v, marketId, depth);
      if (body) pub.publish(topic, body, subs, at);
    } else if (subs.ascii && pub.plainOnly(topic, subs)) {
      pub.bytes.reset();
      readBytes(pub.bytes, marketId, v.slug, read, depth, v.capabilities.yesOnlyBook);
      pub.sendBytes(topic, subs, at);
    } else pub.publish(topic, readJson(marketId, v.slug, read, depth, v.capabilities.yesOnlyBook), subs, at);
    read.book = undefined;
  }

  /** `onBook`'s record of the book it reads (BookStore.readMarket), reused. */
  private readonly read: MarketRead = { book: undefined, complement: false };
}

/**
 * An alert to its channel as live sends it: its smart_money or fade_finder message
 * (`HubRouter.onAlert`), and after a fade alert the same alert as the hosted API's
 * fade_finder_update (on the topic's hosted twin, with its seq). The fan-out flow calls it for each
 * alert the engine raises, a WebSocket replay (replay-alerts.ts) for each stored alert of its window.
 */
export function routeAlert(target: Pick<FanoutTarget, 'onAlert' | 'publishHosted'>, state: EngineState, a: Alert): void {
  target.onAlert(a);
  if (!FADE_TYPES.includes(a.type)) return;
  const u = hostedFadeUpdate(state, a);
  target.publishHosted(alertTopic('fade_finder'), u.body, u.data);
}

/**
 * live_games' view of the matching service: a market's game event (a game's cross-venue group),
 * whether an event is known and live now. The live hub and a replay's router each ask their own.
 */
export function gameLookup(
  matching: Pick<MatchingService, 'groupIdOf' | 'servedGroup' | 'hasGameEvent' | 'isGameLive'>,
  clock: Pick<Clock, 'now'>,
): GameLookup {
  return {
    eventOf: (venue, marketId) => {
      const id = matching.groupIdOf(venue, marketId);
      const g = id === undefined ? undefined : matching.servedGroup(id);
      return g?.market_class ? (g.event_id ?? undefined) : undefined;
    },
    hasEvent: (id) => matching.hasGameEvent(id),
    isLive: (id) => matching.isGameLive(id, clock.now()),
  };
}
