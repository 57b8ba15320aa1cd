import type { WebSocket } from 'ws';
import type { VenueConfig } from '../../config/schema.js';
import { PAYOUT, toDollarString } from '../../core/price.js';
import type { BookSideName, MarketStatus } from '../../core/types.js';
import { KALSHI_STATUS_FILTERS, type KalshiStatusFilter } from '../../venues/kalshi/raw.js';
import { createSimHttp, HttpError, Reorder } from '../server-kit.js';
import type { SimChange, SimFault, SimListing, SimServer, SimServerFactory, SimTrade, SimWorldApi } from '../types.js';

/**
 * Simulated Kalshi Trade API v2 (SYNTHETIC DATA) for one venue, built from the world's listings.
 *
 * REST under `/trade-api/v2`: `GET /markets` (cursor pages; filters status — unopened, open,
 * closed, settled —, event_ticker, series_ticker, tickers, min_close_ts, max_close_ts, mve_filter,
 * limit), `GET /markets/{ticker}`, `GET /markets/{ticker}/orderbook`, `GET /markets/orderbooks?tickers=`
 * (bids only, ascending, best last, as the venue serves them), `GET /events` (cursor pages; status, series_ticker, min_close_ts),
 * `GET /events/{ticker}?with_nested_markets=`, `GET /series`, `GET /series/{ticker}`,
 * `GET /exchange/status`.
 *
 * WebSocket at `/trade-api/ws/v2`: commands subscribe / unsubscribe / update_subscription
 * (add_markets, delete_markets, get_snapshot; `sid` or a one-element `sids`) / list_subscriptions,
 * answered with subscribed / ok / unsubscribed / error (AsyncAPI error codes). One sid per channel
 * per subscribe; every frame of a sid except `subscribed` and `ticker` carries the next `seq`,
 * acks included. `orderbook_delta` starts with an `orderbook_snapshot` per market and then sends
 * RELATIVE deltas: a YES-perspective change [side, price, size, prevSize] becomes `delta_fp` =
 * size − prevSize on `yes` at price (bids) or on `no` at 10_000 − price (asks are NO bids).
 * `ticker` frames follow any change of the top of book, last price, volume or open interest;
 * `trade` frames follow trades; `market_lifecycle_v2` (all markets) follows listings and status
 * changes (created, activated, close_date_updated when a market closes, determined, settled).
 *
 * Faults: disconnect drops every socket; gap skips one seq on every sid of every connection;
 * malformed sends `count` bad frames to every connection (not JSON, truncated JSON, wrong field
 * types — none of them carries a usable sid/seq, so the real stream stays intact); stall queues
 * everything (and withholds pongs, REST answers) for `ms`, then flushes; duplicate_snapshot sends
 * every subscribed market's snapshot again, in sequence; reorder swaps the next two frames of one
 * sid on every connection (the later seq arrives first).
 */

interface Sub {
  readonly sid: number;
  readonly channel: string;
  /** null = every market (lifecycle, or ticker/trade subscribed without a filter). */
  readonly tickers: Set<string> | null;
  seq: number;
}

interface Conn {
  readonly ws: WebSocket;
  readonly subs: Map<number, Sub>;
  readonly queue: string[];
  nextSid: number;
  readonly reorder: Reorder;
}

const BASE = '/trade-api/v2';
const WS_PATH = '/trade-api/ws/v2';
const PUBLIC_CHANNELS = new Set(['orderbook_delta', 'ticker', 'trade', 'market_lifecycle_v2', 'multivariate_market_lifecycle']);
const PRIVATE_CHANNELS = new Set(['fill', 'market_positions', 'user_orders', 'order_group_updates', 'communications']);
const STATUS_FILTER: Readonly<Record<KalshiStatusFilter, readonly MarketStatus[]>> = {
  unopened: ['initialized'],
  open: ['active'],
  closed: ['closed', 'determined'],
  settled: ['finalized'],
};
/** Most frames queued for one connection during a stall before it is dropped instead. */
const MAX_QUEUE = 200_000;

const iso = (ms: number): string => new Date(ms).toISOString();
const fp = (n: number): string => n.toFixed(2);
const dollars = (u: number | undefined, none: string): string => (u === undefined ? none : toDollarString(u));

function badRequest(message: string): HttpError {
  return new HttpError(400, { error: { code: 'bad_request', message, service: 'exchange' } });
}

function notFound(message: string): HttpError {
  return new HttpError(404, { error: { code: 'not_found', message, service: 'exchange' } });
}

/** Listing status → the venue's REST status word. */
function restStatus(s: MarketStatus): string {
  return s;
}

/** Whether the listing's YES won, once known. */
function outcomeOf(l: SimListing): 'yes' | 'no' | undefined {
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
function restBook(l: SimListing, depth = Infinity): Record<string, unknown> {
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

function cursorOf(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

function offsetOf(cursor: string | null): number {
  if (!cursor) return 0;
  const m = /^o:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw badRequest('invalid cursor');
  return Number(m[1]);
}

function limitOf(q: URLSearchParams, def: number, max: number): number {
  const s = q.get('limit');
  if (s === null || s === '') return def;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1 || n > max) throw badRequest(`limit must be an integer between 1 and ${max}`);
  return n;
}

function listOf(q: URLSearchParams, key: string): string[] | undefined {
  const s = q.get(key);
  if (s === null || s === '') return undefined;
  return s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

function statusesOf(q: URLSearchParams): Set<MarketStatus> | undefined {
  const list = listOf(q, 'status');
  if (!list) return undefined;
  const out = new Set<MarketStatus>();
  for (const s of list) {
    if (!(KALSHI_STATUS_FILTERS as readonly string[]).includes(s))
      throw badRequest(`invalid status filter ${s}: use one of ${KALSHI_STATUS_FILTERS.join(', ')}`);
    for (const st of STATUS_FILTER[s as KalshiStatusFilter]) out.add(st);
  }
  return out;
}

function page<T>(items: readonly T[], q: URLSearchParams, def: number, max: number): { items: T[]; cursor: string } {
  const limit = limitOf(q, def, max);
  const offset = offsetOf(q.get('cursor'));
  const slice = items.slice(offset, offset + limit);
  return { items: slice, cursor: offset + limit < items.length ? cursorOf(offset + limit) : '' };
}

/** Serves the Kalshi protocol for `venue` from `world`. */
export const serve: SimServerFactory = async (world: SimWorldApi, venue: VenueConfig, opts): Promise<SimServer> => {
  const http = createSimHttp();
  const conns = new Set<Conn>();
  const announced = new Map<SimListing, MarketStatus>();
  const lastTicker = new Map<SimListing, string>();
  const lastTradeSize = new Map<SimListing, number>();
  let flushTimer: NodeJS.Timeout | undefined;
  let malformedSent = 0;

  const listings = (): readonly SimListing[] => world.listings(venue.label);
  const listing = (ticker: string): SimListing | undefined => world.listing(venue.label, ticker);
  for (const l of listings()) announced.set(l, l.status);

  // ---- REST ------------------------------------------------------------------------------------

  const eventsOf = (): Map<string, SimListing[]> => {
    const by = new Map<string, SimListing[]>();
    for (const l of listings()) {
      const e = l.ids['event_ticker'] ?? l.id;
      const g = by.get(e);
      if (g) g.push(l);
      else by.set(e, [l]);
    }
    return by;
  };

  const eventObject = (ticker: string, ls: readonly SimListing[], nested: boolean): Record<string, unknown> => {
    const first = ls[0]!;
    const e: Record<string, unknown> = {
      available_on_brokers: true,
      category: first.category,
      collateral_return_type: '',
      event_ticker: ticker,
      exchange_index: 0,
      last_updated_ts: iso(world.now()),
      mutually_exclusive: false,
      series_ticker: first.ids['series_ticker'] ?? ticker,
      settlement_sources: [],
      strike_period: '',
      sub_title: '',
      title: first.eventTitle,
    };
    if (nested) e['markets'] = ls.map((l) => marketObject(l));
    return e;
  };

  const eventStatus = (ls: readonly SimListing[]): 'open' | 'closed' | 'settled' => {
    if (ls.some((l) => l.status === 'active' || l.status === 'initialized')) return 'open';
    if (ls.every((l) => l.status === 'finalized')) return 'settled';
    return 'closed';
  };

  const seriesObjects = (): Record<string, unknown>[] => {
    const by = new Map<string, SimListing>();
    for (const l of listings()) {
      const s = l.ids['series_ticker'];
      if (s && !by.has(s)) by.set(s, l);
    }
    return [...by].map(([ticker, l]) => ({
      additional_prohibitions: [],
      category: l.category,
      contract_terms_url: `https://assets.kalshi.com/contract_terms/${ticker}.pdf`,
      contract_url: `https://assets.kalshi.com/regulatory/product-certifications/${ticker}.pdf`,
      exchange_index: 0,
      fee_multiplier: 1,
      fee_type: l.ids['fee_type'] ?? 'quadratic',
      frequency: l.ids['frequency'] ?? 'custom',
      last_updated_ts: iso(world.now()),
      settlement_sources: [],
      tags: [...l.tags],
      ticker,
      title: l.seriesTitle ?? l.eventTitle,
    }));
  };

  http.get(`${BASE}/markets`, (q) => {
    const statuses = statusesOf(q);
    const events = listOf(q, 'event_ticker');
    const series = q.get('series_ticker') || undefined;
    const tickers = listOf(q, 'tickers');
    const minClose = q.get('min_close_ts') ? Number(q.get('min_close_ts')) * 1000 : undefined;
    const maxClose = q.get('max_close_ts') ? Number(q.get('max_close_ts')) * 1000 : undefined;
    if ((minClose !== undefined && !Number.isFinite(minClose)) || (maxClose !== undefined && !Number.isFinite(maxClose)))
      throw badRequest('min_close_ts / max_close_ts must be unix seconds');
    const mve = q.get('mve_filter');
    if (mve !== null && mve !== 'only' && mve !== 'exclude') throw badRequest('mve_filter must be only or exclude');
    const all = listings().filter(
      (l) =>
        (!statuses || statuses.has(l.status)) &&
        (!events || events.includes(l.ids['event_ticker'] ?? '')) &&
        (!series || l.ids['series_ticker'] === series) &&
        (!tickers || tickers.includes(l.id)) &&
        (minClose === undefined || l.closeTime >= minClose) &&
        (maxClose === undefined || l.closeTime <= maxClose) &&
        (mve === null || (mve === 'only') === (l.ids['combo'] === 'true')),
    );
    const { items, cursor } = page(all, q, 100, 1000);
    return { cursor, markets: items.map((l) => marketObject(l)) };
  });

  // Registered before /markets/:ticker, which would otherwise take "orderbooks" for a ticker.
  http.get(`${BASE}/markets/orderbooks`, (q) => {
    const tickers = listOf(q, 'tickers');
    if (!tickers) throw badRequest('tickers is required');
    if (tickers.length > 100) throw badRequest('at most 100 tickers');
    const orderbooks: unknown[] = [];
    for (const t of tickers) {
      const l = listing(t);
      if (l) orderbooks.push({ orderbook_fp: restBook(l), ticker: t });
    }
    return { orderbooks };
  });

  http.get(`${BASE}/markets/:ticker`, (_q, p) => {
    const l = listing(p['ticker'] ?? '');
    if (!l) throw notFound(`market ${p['ticker']} not found`);
    return { market: marketObject(l) };
  });

  http.get(`${BASE}/markets/:ticker/orderbook`, (q, p) => {
    const l = listing(p['ticker'] ?? '');
    if (!l) throw notFound(`market ${p['ticker']} not found`);
    const depth = q.get('depth') ? Number(q.get('depth')) : 0;
    if (!Number.isInteger(depth) || depth < 0 || depth > 100) throw badRequest('depth must be an integer between 0 and 100');
    return { orderbook_fp: restBook(l, depth === 0 ? Infinity : depth) };
  });

  http.get(`${BASE}/events`, (q) => {
    const status = q.get('status') || undefined;
    if (status !== undefined && !['open', 'closed', 'settled'].includes(status)) throw badRequest('status must be open, closed or settled');
    const series = q.get('series_ticker') || undefined;
    const nested = q.get('with_nested_markets') === 'true';
    const minClose = q.get('min_close_ts') ? Number(q.get('min_close_ts')) * 1000 : undefined;
    if (minClose !== undefined && !Number.isFinite(minClose)) throw badRequest('min_close_ts must be unix seconds');
    const all = [...eventsOf()].filter(
      ([, ls]) =>
        (!status || eventStatus(ls) === status) &&
        (!series || ls[0]!.ids['series_ticker'] === series) &&
        (minClose === undefined || Math.max(...ls.map((l) => l.closeTime)) >= minClose),
    );
    const { items, cursor } = page(all, q, 200, 200);
    return { cursor, events: items.map(([t, ls]) => eventObject(t, ls, nested)), milestones: [] };
  });

  http.get(`${BASE}/events/:ticker`, (q, p) => {
    const t = p['ticker'] ?? '';
    const ls = eventsOf().get(t);
    if (!ls) throw notFound(`event ${t} not found`);
    const nested = q.get('with_nested_markets') === 'true';
    // As captured: nested markets live in event.markets and the top-level list is empty.
    return { event: eventObject(t, ls, nested), markets: nested ? [] : ls.map((l) => marketObject(l)) };
  });

  http.get(`${BASE}/series`, (q) => {
    const cat = q.get('category')?.toLowerCase();
    const tags = listOf(q, 'tags');
    const series = seriesObjects().filter(
      (s) => (!cat || String(s['category']).toLowerCase() === cat) && (!tags || (s['tags'] as string[]).some((t) => tags.includes(t))),
    );
    return { series };
  });

  http.get(`${BASE}/series/:ticker`, (_q, p) => {
    const s = seriesObjects().find((x) => x['ticker'] === p['ticker']);
    if (!s) throw notFound(`series ${p['ticker']} not found`);
    return { series: s };
  });

  http.get(`${BASE}/exchange/status`, () => ({
    exchange_active: true,
    exchange_index_statuses: [
      { description: 'Default', exchange_active: true, exchange_index: 0, intra_exchange_transfers_active: true, trading_active: true },
    ],
    intra_exchange_transfers_active: true,
    trading_active: true,
  }));

  // ---- WebSocket -------------------------------------------------------------------------------

  const flushAll = (): void => {
    flushTimer = undefined;
    for (const c of conns) flush(c);
  };

  const flush = (c: Conn): void => {
    if (Date.now() < http.stallUntil) return;
    for (const text of c.queue.splice(0)) c.ws.send(text);
  };

  const sendText = (c: Conn, text: string): void => {
    if (c.ws.readyState !== c.ws.OPEN) return;
    if (Date.now() < http.stallUntil) {
      if (c.queue.length >= MAX_QUEUE) c.ws.terminate();
      else c.queue.push(text);
      return;
    }
    if (c.queue.length > 0) flush(c);
    c.ws.send(text);
  };

  const send = (c: Conn, frame: Record<string, unknown>): void => sendText(c, JSON.stringify(frame));

  /** Sends a frame on a sid, taking its next seq. */
  const sendSeq = (c: Conn, s: Sub, type: string, msg: unknown, id?: number): void => {
    s.seq++;
    const frame = id === undefined ? { type, sid: s.sid, seq: s.seq, msg } : { type, id, sid: s.sid, seq: s.seq, msg };
    c.reorder.send(String(s.sid), JSON.stringify(frame), (t) => sendText(c, t));
  };

  const covers = (s: Sub, ticker: string): boolean => s.tickers === null || s.tickers.has(ticker);

  const error = (c: Conn, id: number | undefined, code: number, msg: string): void =>
    send(c, id === undefined ? { type: 'error', msg: { code, msg } } : { id, type: 'error', msg: { code, msg } });

  const snapshot = (c: Conn, s: Sub, ticker: string, id?: number): void => sendSeq(c, s, 'orderbook_snapshot', snapshotMsg(listing(ticker), ticker), id);

  const tickerMsg = (l: SimListing): Record<string, unknown> => {
    const now = world.now();
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
      last_trade_size_fp: fp(lastTradeSize.get(l) ?? 0),
      ts: Math.floor(now / 1000),
      ts_ms: now,
      time: iso(Math.floor(now / 1000) * 1000),
    };
  };

  const tickerFrames = (l: SimListing): void => {
    const key = [l.book.bids.best(), l.book.asks.best(), l.book.bids.bestSize(), l.book.asks.bestSize(), l.last, l.volume, l.openInterest].join(',');
    if (lastTicker.get(l) === key) return;
    lastTicker.set(l, key);
    let msg: Record<string, unknown> | undefined;
    for (const c of conns)
      for (const s of c.subs.values()) if (s.channel === 'ticker' && covers(s, l.id)) send(c, { type: 'ticker', sid: s.sid, msg: (msg ??= tickerMsg(l)) });
  };

  const lifecycle = (msg: Record<string, unknown>): void => {
    for (const c of conns) for (const s of c.subs.values()) if (s.channel === 'market_lifecycle_v2') sendSeq(c, s, 'market_lifecycle_v2', msg);
  };

  const createdMsg = (l: SimListing): Record<string, unknown> => ({
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
  });

  /** The lifecycle frames that take a market from the status last announced to its current one. */
  const statusFrames = (l: SimListing): void => {
    const prev = announced.get(l);
    const next = l.status;
    if (prev === next) return;
    announced.set(l, next);
    const now = world.now();
    const t = l.id;
    const open = prev === 'active' || prev === 'initialized' || prev === undefined;
    if (next === 'active') {
      lifecycle({ market_ticker: t, event_type: 'activated' });
      return;
    }
    if (next === 'initialized') return;
    if (open) lifecycle({ market_ticker: t, event_type: 'close_date_updated', close_ts: Math.floor(Math.min(l.closeTime, now) / 1000) });
    if (next === 'closed') return;
    const result = outcomeOf(l);
    if (prev !== 'determined') {
      const msg: Record<string, unknown> = { market_ticker: t, event_type: 'determined', determination_ts: Math.floor(now / 1000) };
      if (result) {
        msg['result'] = result;
        msg['settlement_value'] = result === 'yes' ? '1.0000' : '0.0000';
      }
      lifecycle(msg);
    }
    if (next === 'finalized') lifecycle({ market_ticker: t, event_type: 'settled', settled_ts: Math.floor(now / 1000) });
  };

  const onChange = (ch: SimChange): void => {
    switch (ch.type) {
      case 'book': {
        const l = ch.listing;
        if (l.venue !== venue.label) return;
        const ts = ch.timestamp;
        for (const c of conns)
          for (const s of c.subs.values()) {
            if (s.channel !== 'orderbook_delta' || !covers(s, l.id)) continue;
            for (const [side, price, size, prev] of ch.changes) {
              const d = size - prev;
              if (d === 0) continue;
              sendSeq(c, s, 'orderbook_delta', deltaMsg(l, side, price, d, ts));
            }
          }
        tickerFrames(l);
        return;
      }
      case 'trade': {
        const l = ch.trade.listing;
        if (l.venue !== venue.label) return;
        lastTradeSize.set(l, ch.trade.size);
        for (const c of conns) for (const s of c.subs.values()) if (s.channel === 'trade' && covers(s, l.id)) sendSeq(c, s, 'trade', tradeMsg(ch.trade));
        tickerFrames(l);
        return;
      }
      case 'status':
        if (ch.listing.venue === venue.label) statusFrames(ch.listing);
        return;
      case 'listing': {
        const l = ch.listing;
        if (l.venue !== venue.label || announced.has(l)) return;
        announced.set(l, l.status === 'active' ? 'initialized' : l.status);
        lifecycle(createdMsg(l));
        statusFrames(l);
        return;
      }
    }
  };
  const unlisten = world.onChange(onChange);

  const onCommand = (c: Conn, text: string): void => {
    let cmd: unknown;
    try {
      cmd = JSON.parse(text);
    } catch {
      error(c, undefined, 1, 'Unable to process message');
      return;
    }
    if (typeof cmd !== 'object' || cmd === null || Array.isArray(cmd)) {
      error(c, undefined, 1, 'Unable to process message');
      return;
    }
    const o = cmd as Record<string, unknown>;
    const id = typeof o['id'] === 'number' && Number.isInteger(o['id']) ? o['id'] : undefined;
    const params = typeof o['params'] === 'object' && o['params'] !== null ? (o['params'] as Record<string, unknown>) : undefined;
    const strings = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined);
    const tickersOf = (p: Record<string, unknown>): string[] | undefined =>
      strings(p['market_tickers']) ?? (typeof p['market_ticker'] === 'string' ? [p['market_ticker']] : undefined);
    switch (o['cmd']) {
      case 'subscribe': {
        if (!params) return error(c, id, 2, 'Params required');
        const channels = strings(params['channels']);
        if (!channels || channels.length === 0) return error(c, id, 3, 'Channels required');
        const tickers = tickersOf(params);
        for (const ch of channels) {
          if (PRIVATE_CHANNELS.has(ch)) {
            error(c, id, 9, 'Authentication required');
            continue;
          }
          if (!PUBLIC_CHANNELS.has(ch)) {
            error(c, id, 8, 'Unknown channel name');
            continue;
          }
          if (ch === 'orderbook_delta' && !tickers) {
            error(c, id, 14, 'Market Ticker required');
            continue;
          }
          const lifecycleCh = ch === 'market_lifecycle_v2' || ch === 'multivariate_market_lifecycle';
          const s: Sub = { sid: c.nextSid++, channel: ch, tickers: lifecycleCh || !tickers ? null : new Set(tickers), seq: 0 };
          c.subs.set(s.sid, s);
          send(c, { id, type: 'subscribed', msg: { channel: ch, sid: s.sid } });
          if (ch === 'orderbook_delta') for (const t of tickers!) snapshot(c, s, t);
          if (ch === 'ticker' && params['send_initial_snapshot'] === true && tickers)
            for (const t of tickers) {
              const l = listing(t);
              if (l) send(c, { type: 'ticker', sid: s.sid, msg: tickerMsg(l) });
            }
        }
        return;
      }
      case 'unsubscribe': {
        const sids = params && Array.isArray(params['sids']) ? (params['sids'] as unknown[]) : undefined;
        if (!sids || sids.length === 0) return error(c, id, 4, 'Subscription IDs required');
        for (const sid of sids) {
          const s = typeof sid === 'number' ? c.subs.get(sid) : undefined;
          if (!s) {
            error(c, id, 7, 'Unknown subscription ID');
            continue;
          }
          s.seq++;
          c.subs.delete(s.sid);
          send(c, { id, sid: s.sid, seq: s.seq, type: 'unsubscribed' });
        }
        return;
      }
      case 'update_subscription': {
        if (!params) return error(c, id, 2, 'Params required');
        const sids = Array.isArray(params['sids']) ? (params['sids'] as unknown[]) : typeof params['sid'] === 'number' ? [params['sid']] : [];
        if (sids.length !== 1 || typeof sids[0] !== 'number') return error(c, id, 12, 'Exactly one subscription ID is required');
        const action = params['action'];
        if (typeof action !== 'string' || action === '') return error(c, id, 15, 'Action required');
        const s = c.subs.get(sids[0]);
        if (!s) return error(c, id, 7, 'Unknown subscription ID');
        const tickers = tickersOf(params);
        if (!tickers) return error(c, id, 14, 'Market Ticker required');
        switch (action) {
          case 'add_markets':
          case 'delete_markets': {
            if (s.tickers === null || s.channel === 'market_lifecycle_v2') return error(c, id, 13, 'Unsupported action');
            const added = tickers.filter((t) => !s.tickers!.has(t));
            for (const t of tickers) {
              if (action === 'add_markets') s.tickers.add(t);
              else s.tickers.delete(t);
            }
            s.seq++;
            send(c, { id, sid: s.sid, seq: s.seq, type: 'ok', msg: { market_tickers: [...s.tickers] } });
            if (action === 'add_markets' && s.channel === 'orderbook_delta') for (const t of added) snapshot(c, s, t);
            return;
          }
          case 'get_snapshot':
            if (s.channel !== 'orderbook_delta') return error(c, id, 13, 'Unsupported action');
            for (const t of tickers) snapshot(c, s, t, id);
            return;
          default:
            return error(c, id, 13, 'Unsupported action');
        }
      }
      case 'list_subscriptions':
        send(c, { id, type: 'ok', msg: [...c.subs.values()].map((s) => ({ channel: s.channel, sid: s.sid })) });
        return;
      default:
        error(c, id, 5, 'Unknown command');
    }
  };

  http.ws(WS_PATH, (ws) => {
    const c: Conn = { ws, subs: new Map(), queue: [], nextSid: 1, reorder: new Reorder() };
    conns.add(c);
    ws.on('message', (data) => onCommand(c, data.toString()));
    ws.on('close', () => conns.delete(c));
    ws.on('error', () => conns.delete(c));
  });

  const malformed = (n: number): string => {
    const variants = [
      'this is not json',
      '{"type":"orderbook_delta","sid":1,"seq":',
      '{"type":"orderbook_delta","sid":"1","seq":"2","msg":{"market_ticker":7,"price_dollars":0.5,"delta_fp":-3,"side":"maybe"}}',
      '{"type":"ticker","sid":"x","msg":{"market_ticker":"SIM-BAD","yes_bid_dollars":45,"volume_fp":null}}',
      '{"type":"trade","msg":null}',
      '[1,2,3]',
      '{"type":42}',
      '{"type":"orderbook_snapshot","msg":{"market_ticker":"SIM-BAD","yes_dollars_fp":[["x","1.00"]]}}',
    ];
    return variants[n % variants.length]!;
  };

  const { host, port } = await http.listen(opts.host, opts.port);
  return {
    venue,
    endpoints: { rest: `http://${host}:${port}${BASE}`, ws: `ws://${host}:${port}${WS_PATH}` },
    fault(f: SimFault) {
      switch (f.kind) {
        case 'disconnect':
          http.dropAll();
          conns.clear();
          return;
        case 'gap':
          for (const c of conns) for (const s of c.subs.values()) s.seq++;
          return;
        case 'malformed':
          for (let i = 0; i < (f.count ?? 1); i++) {
            const text = malformed(malformedSent++);
            for (const c of conns) sendText(c, text);
          }
          return;
        case 'stall':
          http.stallUntil = Math.max(http.stallUntil, Date.now() + f.ms);
          if (flushTimer) clearTimeout(flushTimer);
          flushTimer = setTimeout(flushAll, http.stallUntil - Date.now() + 1);
          flushTimer.unref?.();
          return;
        case 'reorder':
          for (const c of conns) c.reorder.arm();
          return;
        case 'duplicate_snapshot':
          for (const c of conns)
            for (const s of c.subs.values()) if (s.channel === 'orderbook_delta' && s.tickers) for (const t of s.tickers) snapshot(c, s, t);
          return;
      }
    },
    async close() {
      unlisten();
      if (flushTimer) clearTimeout(flushTimer);
      conns.clear();
      await http.close();
    },
  };
};

function deltaMsg(l: SimListing, side: BookSideName, price: number, d: number, ts: number): Record<string, unknown> {
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

function tradeMsg(t: SimTrade): Record<string, unknown> {
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
