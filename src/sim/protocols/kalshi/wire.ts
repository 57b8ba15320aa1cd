import { PAYOUT, toDollarString } from '../../../core/price.js';
import type { BookSideName, MarketStatus } from '../../../core/types.js';
import type { SimListing, SimTrade } from '../../types.js';

/** The documents the simulated Kalshi serves, built from a listing (field names and formats as the venue's capture). */

/** REST base path and WebSocket path. */
export const BASE = '/trade-api/v2';
export const WS_PATH = '/trade-api/ws/v2';

/** ms → ISO 8601. */
export const iso = (ms: number): string => new Date(ms).toISOString();
/** A count as the venue's fixed-point string. */
export const fp = (n: number): string => n.toFixed(2);
/** Units as a dollar string, `none` when absent. */
export const dollars = (u: number | undefined, none: string): string => (u === undefined ? none : toDollarString(u));

/** Listing status → the venue's REST status word. */
function restStatus(s: MarketStatus): string {
  return s;
}

/** Whether the listing's YES won, once known. */
export function outcomeOf(l: SimListing): 'yes' | 'no' | undefined {
  if (l.prop.resolved === undefined) return undefined;
  return (l.prop.resolved === 'yes') !== l.inverted ? 'yes' : 'no';
}

const settled = (s: MarketStatus): boolean => s === 'determined' || s === 'finalized';

/** The REST market object of a listing (field names and formats as the venue's capture). */
export function marketObject(l: SimListing): Record<string, unknown> {
  const bid = l.book.bids.best();
  const ask = l.book.asks.best();
  const result = settled(l.status) ? (outcomeOf(l) ?? '') : '';
  const m: Record<string, unknown> = {
    can_close_early: true,
    close_time: iso(l.closeTime),
    created_time: iso(l.createdAt),
    early_close_condition: 'This market will close and expire early if the event occurs.',
    event_ticker: l.ids['event_ticker'] ?? l.id,
    exchange_index: 0,
    expected_expiration_time: iso(l.closeTime + 3 * 3_600_000),
    expiration_time: iso(l.closeTime + 7 * 86_400_000),
    expiration_value: '',
    last_price_dollars: dollars(l.last, '0.0000'),
    latest_expiration_time: iso(l.closeTime + 7 * 86_400_000),
    liquidity_dollars: '0.0000',
    market_type: 'binary',
    no_ask_dollars: dollars(bid === undefined ? undefined : PAYOUT - bid, '1.0000'),
    no_bid_dollars: dollars(ask === undefined ? undefined : PAYOUT - ask, '0.0000'),
    no_sub_title: l.outcome ?? '',
    notional_value_dollars: '1.0000',
    open_interest_fp: fp(l.openInterest),
    open_time: iso(l.openTime),
    previous_price_dollars: dollars(l.last, '0.0000'),
    previous_yes_ask_dollars: dollars(ask, '0.0000'),
    previous_yes_bid_dollars: dollars(bid, '0.0000'),
    price_level_structure: 'linear_cent',
    price_ranges: [{ end: '1.0000', start: '0.0000', step: '0.0100' }],
    result,
    rules_primary: l.ids['rules_primary'] ?? '',
    rules_secondary: '',
    settlement_timer_seconds: 1800,
    status: restStatus(l.status),
    ticker: l.id,
    title: l.title,
    // Stable between requests, as the venue's is until the record changes.
    updated_time: iso(Math.max(l.createdAt, settled(l.status) ? l.closeTime : 0)),
    volume_24h_fp: fp(l.volume),
    volume_fp: fp(l.volume),
    yes_ask_dollars: dollars(ask, '1.0000'),
    yes_ask_size_fp: fp(l.book.asks.bestSize() ?? 0),
    yes_bid_dollars: dollars(bid, '0.0000'),
    yes_bid_size_fp: fp(l.book.bids.bestSize() ?? 0),
    yes_sub_title: l.outcome ?? '',
  };
  if (result === 'yes' || result === 'no') m['settlement_value_dollars'] = result === 'yes' ? '1.0000' : '0.0000';
  if (l.status === 'finalized') m['settlement_ts'] = iso(l.closeTime + 2 * 3_600_000);
  if (l.ids['combo'] === 'true') m['mve_collection_ticker'] = `KXMVE${l.ids['series_ticker'] ?? ''}`;
  return m;
}

/** The WebSocket snapshot message of a listing's book: YES bids and NO bids, ascending; empty sides omitted. */
export function snapshotMsg(l: SimListing | undefined, ticker: string): Record<string, unknown> {
  if (!l) return { market_ticker: ticker, market_id: '' };
  const msg: Record<string, unknown> = { market_ticker: l.id, market_id: l.ids['market_uuid'] ?? '' };
  const yes = l.book.bids
    .levels()
    .reverse()
    .map(([p, s]) => [toDollarString(p), fp(s)]);
  // asks ascending → NO bids descending; reversed to ascending.
  const no = l.book.asks
    .levels()
    .map(([p, s]) => [toDollarString(PAYOUT - p), fp(s)])
    .reverse();
  if (yes.length > 0) msg['yes_dollars_fp'] = yes;
  if (no.length > 0) msg['no_dollars_fp'] = no;
  return msg;
}

/** The REST orderbook of a listing (`orderbook_fp`), bids ascending with the best last. */
export function restBook(l: SimListing, depth = Infinity): Record<string, unknown> {
  const yes = l.book.bids
    .levels(depth)
    .reverse()
    .map(([p, s]) => [toDollarString(p), fp(s)]);
  const no = l.book.asks
    .levels(depth)
    .map(([p, s]) => [toDollarString(PAYOUT - p), fp(s)])
    .reverse();
  return { yes_dollars: yes, no_dollars: no };
}

/** The lifecycle frame announcing a new market. */
export function createdMsg(l: SimListing): Record<string, unknown> {
  return {
    market_ticker: l.id,
    exchange_index: 0,
    open_ts: Math.floor(l.openTime / 1000),
    close_ts: Math.floor(l.closeTime / 1000),
    additional_metadata: {
      name: l.eventTitle,
      title: l.title,
      yes_sub_title: l.outcome ?? '',
      no_sub_title: l.outcome ?? '',
      rules_primary: l.ids['rules_primary'] ?? '',
      rules_secondary: '',
      can_close_early: true,
      event_ticker: l.ids['event_ticker'] ?? l.id,
      expected_expiration_ts: Math.floor(l.closeTime / 1000) + 3 * 3600,
    },
    event_type: 'created',
    price_level_structure: 'linear_cent',
    price_ranges: [{ start: '0.0000', end: '1.0000', step: '0.0100' }],
  };
}

/** An `orderbook_delta` message: a YES-perspective change as the venue's relative delta. */
export function deltaMsg(l: SimListing, side: BookSideName, price: number, d: number, ts: number): Record<string, unknown> {
  return {
    market_ticker: l.id,
    market_id: l.ids['market_uuid'] ?? '',
    price_dollars: toDollarString(side === 'bid' ? price : PAYOUT - price),
    delta_fp: fp(d),
    side: side === 'bid' ? 'yes' : 'no',
    ts: iso(Math.floor(ts / 1000) * 1000).replace('.000Z', 'Z'),
    ts_ms: ts,
  };
}

/** A `trade` message. */
export function tradeMsg(t: SimTrade): Record<string, unknown> {
  return {
    trade_id: t.id,
    market_ticker: t.listing.id,
    yes_price_dollars: toDollarString(t.price),
    no_price_dollars: toDollarString(PAYOUT - t.price),
    count_fp: fp(t.size),
    taker_side: t.takerSide,
    taker_outcome_side: t.takerSide,
    taker_book_side: t.takerSide === 'yes' ? 'bid' : 'ask',
    is_block_trade: false,
    ts: Math.floor(t.timestamp / 1000),
    ts_ms: t.timestamp,
  };
}

/** A `ticker` message: top of book, last price, volume and open interest at `now`. */
export function tickerMsg(l: SimListing, now: number, lastTradeSize: number): Record<string, unknown> {
  return {
    market_id: l.ids['market_uuid'] ?? '',
    market_ticker: l.id,
    price_dollars: dollars(l.last, '0.0000'),
    yes_bid_dollars: dollars(l.book.bids.best(), '0.0000'),
    yes_ask_dollars: dollars(l.book.asks.best(), '1.0000'),
    volume_fp: fp(l.volume),
    open_interest_fp: fp(l.openInterest),
    dollar_volume: Math.round(l.volume / 2),
    dollar_open_interest: Math.round(l.openInterest / 2),
    yes_bid_size_fp: fp(l.book.bids.bestSize() ?? 0),
    yes_ask_size_fp: fp(l.book.asks.bestSize() ?? 0),
    last_trade_size_fp: fp(lastTradeSize),
    ts: Math.floor(now / 1000),
    ts_ms: now,
    time: iso(Math.floor(now / 1000) * 1000),
  };
}
