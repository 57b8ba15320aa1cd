import type { VenueConfig } from '../config/schema.js';
import { PAYOUT, toCents, toDollarString } from '../core/price.js';
import type { FeedEvent } from '../core/types.js';
import type { Alert } from '../signals/alerts.js';
import type { GroupSignals } from '../signals/engine.js';
import { recordJson, type OpportunityRecord } from '../signals/lifecycle/record.js';
import type { EngineState } from '../state/engine.js';
import type { QuoteRecord } from '../state/quotes.js';
import type { StoredTrade } from '../state/trades.js';
import { alertJson } from '../views/alert.js';
import { quotePrices } from '../views/market.js';
import { CODES, type AlertChannel } from './protocol.js';

/**
 * The bodies of the hub's messages, without their envelope (seq, epoch, ts): pure functions of
 * what they show, so each can be read and tested without a socket. Order book and price updates
 * that go out as bytes are written by booktext.ts; these are their object forms (snapshots, the
 * hosted dialect, a cluster core's export).
 */

/** A price_update of `q` (with `snapshot: true` for a subscriber's first one). */
export function priceBody(v: VenueConfig, q: QuoteRecord, snapshot: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: 'price_update',
    channel: 'prices',
    market_id: q.marketId,
    source: v.slug,
    ...quotePrices(v, q),
    volume: q.volume ?? null,
  };
  if (snapshot) body['snapshot'] = true;
  return body;
}

/** The price snapshot of a market without a quote yet: every field null. */
export function emptyPriceBody(v: VenueConfig, marketId: string): Record<string, unknown> {
  return {
    type: 'price_update',
    channel: 'prices',
    market_id: marketId,
    source: v.slug,
    yes_bid: null,
    yes_ask: null,
    no_bid: null,
    no_ask: null,
    last_price: null,
    volume: null,
    snapshot: true,
  };
}

/** A ticker message of the catalog venue's `<slug>_prices` channel (decimal-dollar strings). */
export function tickerBody(channel: string | undefined, v: VenueConfig, q: QuoteRecord): Record<string, unknown> {
  return {
    type: 'ticker',
    channel,
    market_id: q.marketId,
    market_ticker: q.marketId,
    source: v.slug,
    yes_bid_dollars: q.yesBid === undefined ? null : toDollarString(q.yesBid),
    yes_ask_dollars: q.yesAsk === undefined ? null : toDollarString(q.yesAsk),
    price_dollars: q.lastPrice === undefined ? null : toDollarString(q.lastPrice),
    volume: q.volume ?? null,
    open_interest: q.openInterest ?? null,
  };
}

/** An orderbook_update of a market's YES view to `depth` levels (undefined: no book). */
export function bookBody(state: EngineState, v: VenueConfig, marketId: string, depth: number): Record<string, unknown> | undefined {
  const view = state.books.marketBook(v.label, marketId, depth);
  if (!view) return undefined;
  const lv = (ls: readonly (readonly [number, number])[], flip: boolean): [number, number][] => ls.map(([p, s]) => [toCents(flip ? PAYOUT - p : p), s]);
  return {
    type: 'orderbook_update',
    channel: 'orderbook',
    market_id: marketId,
    source: v.slug,
    ready: view.ready,
    yes: { bids: lv(view.bids, false), asks: lv(view.asks, false) },
    no: v.capabilities.yesOnlyBook ? { bids: [], asks: [] } : { bids: lv(view.asks, true), asks: lv(view.bids, true) },
  };
}

/**
 * What a subscriber of a market topic gets first (the live hub on subscribe, a replay when it
 * reaches its window): the price, book or ticker of the market as `state` holds it now, without
 * the `snapshot` flag and envelope the sender adds; undefined when there is nothing to show.
 */
export function snapshotBody(
  state: EngineState,
  t: { readonly ch: string; readonly v: VenueConfig; readonly id: string },
  tickerChannel: string | undefined,
  depth: number,
): Record<string, unknown> | undefined {
  const { ch, v, id } = t;
  if (ch === 'prices') {
    const q = state.quotes.get(v.label, id);
    return q ? priceBody(v, q, true) : emptyPriceBody(v, id);
  }
  if (ch === 'orderbook') return bookBody(state, v, id, depth);
  if (ch === tickerChannel) {
    const q = state.quotes.get(v.label, id);
    if (q) return tickerBody(tickerChannel, v, q);
  }
  return undefined;
}

/** A group's arb or ev opportunities. */
export function signalBody(ch: 'arb' | 'ev', g: GroupSignals): Record<string, unknown> {
  return {
    type: ch,
    channel: ch,
    group_id: g.groupId,
    title: g.title,
    opportunities: ch === 'arb' ? g.arbs : g.evs,
    computed_at: new Date(g.at).toISOString(),
  };
}

/** An opportunity that closed: `arb_expired` / `ev_expired` with its id, close reason and record. */
export function expiredBody(r: OpportunityRecord): Record<string, unknown> {
  return {
    type: `${r.kind}_expired`,
    channel: r.kind,
    group_id: r.group_id,
    opportunity_id: r.opportunity_id,
    close_reason: r.close_reason,
    record: recordJson(r),
  };
}

/** A trade of a live game's market (`source`: the venue slug). */
export function tradeBody(eventId: string, source: string, t: StoredTrade): Record<string, unknown> {
  return {
    type: 'trade',
    channel: 'live_games',
    event_id: eventId,
    market_id: t.marketId,
    source,
    price: toCents(t.yesPrice),
    size: t.size,
    taker_side: t.takerSide ?? null,
    trade_id: t.tradeId,
    executed_at: new Date(t.timestamp).toISOString(),
  };
}

/** An alert on its channel, in the record form of the /alerts endpoints. */
export function alertBody(ch: AlertChannel, source: string, a: Alert, title: string | null): Record<string, unknown> {
  return { type: ch, channel: ch, ...alertJson(source, a, title) };
}

/**
 * The warning (or `ready`) a feed-health event gives the venue's subscribers: FEED_INTERRUPTED on a
 * disconnect, gap or stall, FEED_DEGRADED on malformed frames, FEED_READY when it is back;
 * undefined for an event that tells a subscriber nothing.
 */
export function feedNotice(v: VenueConfig, ev: FeedEvent): Record<string, unknown> | undefined {
  let code: string | undefined;
  let message = '';
  if (ev.state === 'disconnected' || ev.state === 'gap' || ev.state === 'stalled') {
    code = CODES.FEED_INTERRUPTED;
    message = `${v.slug} feed interrupted (${ev.state}${ev.detail ? `: ${ev.detail}` : ''}); prices may be stale until FEED_READY, then reconcile over REST`;
  } else if (ev.state === 'degraded') {
    code = CODES.FEED_DEGRADED;
    message = `${v.slug} is sending malformed frames (${ev.detail ?? 'dropped'}); they are dropped and books stay consistent, but updates may be delayed until FEED_READY`;
  } else if (ev.state === 'resynced' || ev.state === 'connected' || ev.state === 'recovered') {
    code = CODES.FEED_READY;
    message = `${v.slug} feed ${ev.state}; reconcile current prices over REST (/prices/bulk) for anything you hold`;
  }
  if (!code) return undefined;
  return {
    type: code === CODES.FEED_READY ? 'ready' : 'warning',
    code,
    source: v.slug,
    message,
    ...(ev.instrument ? { market_id: ev.instrument } : {}),
  };
}

/**
 * The accepted ids of a subscribe or unsubscribe, one confirmation per venue: each carries the
 * native market_ids and its venue as a separate `source` field (spec 6 rule 1), and `sources` (one
 * per id) as before. No accepted id still gets one confirmation, with an empty list and no source.
 */
export function byVenue(accepted: readonly { id: string; v: VenueConfig }[]): { market_ids: string[]; source: string | null; sources: string[] }[] {
  if (accepted.length === 0) return [{ market_ids: [], source: null, sources: [] }];
  const out = new Map<string, { market_ids: string[]; source: string | null; sources: string[] }>();
  for (const a of accepted) {
    let part = out.get(a.v.slug);
    if (!part) out.set(a.v.slug, (part = { market_ids: [], source: a.v.slug, sources: [] }));
    part.market_ids.push(a.id);
    part.sources.push(a.v.slug);
  }
  return [...out.values()];
}

/** The fields of a quote a price_update shows, as last published on its prices topic. */
interface Shown {
  yesBid: number | undefined;
  yesAsk: number | undefined;
  lastPrice: number | undefined;
  volume: number | undefined;
}

/**
 * Per market with prices subscribers, what its last price_update showed: a quote change only of
 * fields the message does not carry (top-of-book sizes, open interest) sends nothing. Forgotten
 * when the topic has no subscribers; the snapshot of a topic's only subscriber sets it (`show`),
 * so a change that leaves the shown fields as the snapshot had them sends nothing either.
 */
export class ShownQuotes {
  private readonly shown = new WeakMap<QuoteRecord, Shown>();

  forget(q: QuoteRecord): void {
    this.shown.delete(q);
  }

  /** `q` as it stands was shown (a lone subscriber's snapshot): the next price_update is a change from it. */
  show(q: QuoteRecord): void {
    this.shown.set(q, { yesBid: q.yesBid, yesAsk: q.yesAsk, lastPrice: q.lastPrice, volume: q.volume });
  }

  /** Whether `q` differs from what its last price_update showed (and records it as shown). */
  changed(q: QuoteRecord): boolean {
    const s = this.shown.get(q);
    if (!s) {
      this.show(q);
      return true;
    }
    if (s.yesBid === q.yesBid && s.yesAsk === q.yesAsk && s.lastPrice === q.lastPrice && s.volume === q.volume) return false;
    s.yesBid = q.yesBid;
    s.yesAsk = q.yesAsk;
    s.lastPrice = q.lastPrice;
    s.volume = q.volume;
    return true;
  }
}
