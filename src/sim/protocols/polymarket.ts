import { createHash } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { VenueConfig } from '../../config/schema.js';
import { PAYOUT, toDollarString } from '../../core/price.js';
import type { MarketStatus } from '../../core/types.js';
import { WS_PING, WS_PONG } from '../../venues/polymarket/raw.js';
import { createSimHttp, HttpError } from '../server-kit.js';
import type { SimChange, SimFault, SimListing, SimServer, SimServerFactory, SimTrade, SimWorldApi } from '../types.js';

/**
 * Simulated Polymarket (SYNTHETIC DATA), speaking the real wire formats:
 * - Gamma: `GET /gamma/markets` and `GET /gamma/events` (`active`, `closed`, `limit`, `offset`,
 *   `condition_ids`, `slug`, `id` filters), markets with JSON-encoded `outcomes` / `outcomePrices` /
 *   `clobTokenIds` and string `volume` / `liquidity` beside `*Num` numbers.
 * - CLOB REST: `GET /clob/book?token_id=`, `GET /clob/markets/:condition_id`.
 * - data-api: `GET /data/trades?market=&user=&limit=&offset=` (newest first, seconds timestamps).
 * - Market channel `ws://…/ws/market`: subscribe with `{"assets_ids":[…],"type":"market"}` (plus
 *   `{"operation":"subscribe"|"unsubscribe"}` updates); the answer is a JSON array of `book` frames.
 *   Each book change of a listing becomes one `price_change` with entries for BOTH tokens (the NO
 *   token's entry mirrors the YES one: a YES bid at p is a NO ask at 1 − p), with `best_bid` /
 *   `best_ask` after the change; each trade a `last_trade_price` followed by fresh `book` frames of
 *   both tokens (as the venue does after trades); a finalized listing a `market_resolved`; a new
 *   listing a `new_market` (the last two only with `custom_feature_enabled`). Text `PING` → `PONG`.
 *
 * The YES token's book is the listing's book; the NO token's is its mirror: bids at 10_000 − YES
 * asks, asks at 10_000 − YES bids. `book` levels are listed as the venue lists them: bids ascending,
 * asks descending (best last).
 *
 * A trade is reported on the token the taker bought (YES at p, or NO at 1 − p), side BUY.
 *
 * Faults: `disconnect` drops every socket; `gap` makes every connection silently skip its next
 * `price_change` (Polymarket has no sequence numbers: only a client that checks `best_bid` /
 * `best_ask` can notice, and only when the lost change moved the top); `malformed` sends `count`
 * invalid frames to every connection (truncated JSON, wrong types, an unknown event_type, a price
 * of 1.5, a negative size); `stall` holds every frame (and PONG, and REST answers) for `ms`, then
 * delivers them; `duplicate_snapshot` sends every subscribed book again.
 */

interface Conn {
  readonly ws: WebSocket;
  readonly assets: Set<string>;
  custom: boolean;
  skipNextPriceChange: boolean;
  readonly queue: string[];
}

interface TokenRef {
  readonly listing: SimListing;
  readonly yes: boolean;
}

/** Units → the venue's shortest decimal string: 4800 → "0.48", 10_000 → "1", 10 → "0.001". */
export function polyPrice(units: number): string {
  return toDollarString(units).replace(/\.?0+$/, '') || '0';
}

/** A size as the venue writes it: "250", "12.5". */
export function polySize(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(6).replace(/\.?0+$/, '');
}

const iso = (ms: number): string => new Date(ms).toISOString();
const CLOSED: readonly MarketStatus[] = ['closed', 'determined', 'finalized'];

/** Levels of one token, best first: the YES book, or its mirror for the NO token. */
function tokenLevels(l: SimListing, yes: boolean): { bids: [number, number][]; asks: [number, number][] } {
  const b = l.book;
  const bids: [number, number][] = [];
  const asks: [number, number][] = [];
  if (yes) {
    for (let i = 0; i < b.bids.length; i++) bids.push([b.bids.prices[i]!, b.bids.sizes[i]!]);
    for (let i = 0; i < b.asks.length; i++) asks.push([b.asks.prices[i]!, b.asks.sizes[i]!]);
  } else {
    for (let i = 0; i < b.asks.length; i++) bids.push([PAYOUT - b.asks.prices[i]!, b.asks.sizes[i]!]);
    for (let i = 0; i < b.bids.length; i++) asks.push([PAYOUT - b.bids.prices[i]!, b.bids.sizes[i]!]);
  }
  return { bids, asks };
}

function sha1(s: string): string {
  return createHash('sha1').update(s).digest('hex');
}

/** The YES result of a settled listing, when known. */
function resultOf(l: SimListing): 'yes' | 'no' | undefined {
  if (l.status !== 'finalized' && l.status !== 'determined') return undefined;
  if (l.last === PAYOUT) return 'yes';
  if (l.last === 0) return 'no';
  const r = l.prop.resolved;
  return r === undefined ? undefined : (r === 'yes') !== l.inverted ? 'yes' : 'no';
}

export const serve: SimServerFactory = async (world: SimWorldApi, venue: VenueConfig, opts): Promise<SimServer> => {
  const http = createSimHttp();
  const label = venue.label;
  const conns = new Set<Conn>();
  const tokens = new Map<string, TokenRef>();
  let flushTimer: NodeJS.Timeout | undefined;

  const listings = (): readonly SimListing[] => world.listings(label);
  function token(id: string): TokenRef | undefined {
    let t = tokens.get(id);
    if (!t) {
      // Listings appear over time: rebuild the index on a miss.
      for (const l of listings()) {
        tokens.set(l.ids['yes_token']!, { listing: l, yes: true });
        tokens.set(l.ids['no_token']!, { listing: l, yes: false });
      }
      t = tokens.get(id);
    }
    return t;
  }

  // ---- documents -------------------------------------------------------------------------

  function bookFrame(l: SimListing, yes: boolean): Record<string, unknown> {
    const { bids, asks } = tokenLevels(l, yes);
    const asset = l.ids[yes ? 'yes_token' : 'no_token']!;
    // The venue lists bids ascending and asks descending (best last).
    const wire = {
      bids: bids.reverse().map(([p, s]) => ({ price: polyPrice(p), size: polySize(s) })),
      asks: asks.reverse().map(([p, s]) => ({ price: polyPrice(p), size: polySize(s) })),
    };
    const ts = String(l.book.timestamp || world.now());
    const last = l.last === undefined ? '' : polyPrice(yes ? l.last : PAYOUT - l.last);
    return {
      market: l.id,
      asset_id: asset,
      timestamp: ts,
      hash: sha1(`${asset}${ts}${JSON.stringify(wire)}`),
      bids: wire.bids,
      asks: wire.asks,
      tick_size: l.ids['tick_size'] ?? '0.01',
      event_type: 'book',
      last_trade_price: last,
    };
  }

  function eventRef(l: SimListing): Record<string, unknown> {
    return {
      id: l.ids['event_id'],
      ticker: l.ids['event_slug'],
      slug: l.ids['event_slug'],
      title: l.eventTitle,
      endDate: iso(l.closeTime),
      active: true,
      closed: CLOSED.includes(l.status),
      category: l.category,
      tags: l.tags.map((t) => ({ id: sha1(t).slice(0, 6), label: t, slug: t.toLowerCase().replace(/[^a-z0-9]+/g, '-') })),
      ...(l.seriesTitle
        ? { series: [{ id: sha1(l.seriesTitle).slice(0, 6), slug: l.seriesTitle.toLowerCase().replace(/[^a-z0-9]+/g, '-'), title: l.seriesTitle }] }
        : {}),
    };
  }

  function gammaMarket(l: SimListing, ev?: Record<string, unknown>): Record<string, unknown> {
    const bid = l.book.bids.best();
    const ask = l.book.asks.best();
    const result = resultOf(l);
    const ref = bid !== undefined && ask !== undefined ? Math.round((bid + ask) / 2) : (l.last ?? 5000);
    const yesPrice = result === 'yes' ? PAYOUT : result === 'no' ? 0 : (l.last ?? ref);
    let liquidity = 0;
    for (let i = 0; i < l.book.bids.length; i++) liquidity += (l.book.bids.prices[i]! * l.book.bids.sizes[i]!) / PAYOUT;
    for (let i = 0; i < l.book.asks.length; i++) liquidity += ((PAYOUT - l.book.asks.prices[i]!) * l.book.asks.sizes[i]!) / PAYOUT;
    liquidity = Math.round(liquidity * 1e4) / 1e4;
    const closed = CLOSED.includes(l.status);
    return {
      id: l.ids['gamma_id'],
      question: l.title,
      conditionId: l.id,
      slug: l.ids['slug'],
      resolutionSource: '',
      endDate: iso(l.closeTime),
      liquidity: String(liquidity),
      startDate: iso(l.openTime),
      outcomes: JSON.stringify([l.ids['outcome_yes'] ?? 'Yes', l.ids['outcome_no'] ?? 'No']),
      outcomePrices: JSON.stringify([polyPrice(yesPrice), polyPrice(PAYOUT - yesPrice)]),
      volume: String(l.volume),
      active: true,
      closed,
      createdAt: iso(l.createdAt),
      updatedAt: iso(world.now()),
      questionID: l.ids['question_id'],
      enableOrderBook: true,
      orderPriceMinTickSize: Number(l.ids['tick_size'] ?? '0.01'),
      orderMinSize: 5,
      volumeNum: l.volume,
      liquidityNum: liquidity,
      endDateIso: iso(l.closeTime).slice(0, 10),
      startDateIso: iso(l.openTime).slice(0, 10),
      clobTokenIds: JSON.stringify([l.ids['yes_token'], l.ids['no_token']]),
      acceptingOrders: l.status === 'active',
      acceptingOrdersTimestamp: l.status === 'initialized' ? null : iso(l.openTime),
      negRisk: l.ids['neg_risk'] === 'true',
      category: l.category,
      umaResolutionStatus: l.status === 'finalized' ? 'resolved' : l.status === 'determined' ? 'proposed' : undefined,
      umaResolutionStatuses: '[]',
      bestBid: bid === undefined ? undefined : bid / PAYOUT,
      bestAsk: ask === undefined ? undefined : ask / PAYOUT,
      lastTradePrice: l.last === undefined ? undefined : l.last / PAYOUT,
      events: [ev ?? eventRef(l)],
    };
  }

  /**
   * Gamma events: listings grouped by event slug and event title. The world draws an event id per
   * listing (the group's first one names the event) and may phrase one event's title differently
   * per market; keeping the title in the key serves every listing its own event title.
   */
  function eventsOf(ls: readonly SimListing[]): Map<string, SimListing[]> {
    const by = new Map<string, SimListing[]>();
    for (const l of ls) {
      const k = `${l.ids['event_slug'] ?? l.id}\u0000${l.eventTitle}`;
      const g = by.get(k);
      if (g) g.push(l);
      else by.set(k, [l]);
    }
    return by;
  }

  function boolFilter(q: URLSearchParams, key: string): boolean | undefined {
    const v = q.get(key);
    return v === null ? undefined : v === 'true';
  }

  function page<T>(rows: T[], q: URLSearchParams, defLimit: number, maxLimit: number): T[] {
    const limit = Math.min(maxLimit, Math.max(0, Number(q.get('limit') ?? defLimit) || defLimit));
    const offset = Math.max(0, Number(q.get('offset') ?? 0) || 0);
    return rows.slice(offset, offset + limit);
  }

  // ---- REST ----------------------------------------------------------------------------------

  http.get('/gamma/markets', (q) => {
    const active = boolFilter(q, 'active');
    const closed = boolFilter(q, 'closed');
    const cids = new Set(q.getAll('condition_ids'));
    const slugs = new Set(q.getAll('slug'));
    const ids = new Set(q.getAll('id'));
    const groups = eventsOf(listings());
    const refs = new Map<string, Record<string, unknown>>();
    for (const g of groups.values()) {
      const ref = eventRef(g[0]!);
      ref['closed'] = g.every((l) => CLOSED.includes(l.status));
      for (const l of g) refs.set(l.id, ref);
    }
    const rows = listings().filter(
      (l) =>
        (active === undefined || active) &&
        (closed === undefined || closed === CLOSED.includes(l.status)) &&
        (cids.size === 0 || cids.has(l.id)) &&
        (slugs.size === 0 || slugs.has(l.ids['slug']!)) &&
        (ids.size === 0 || ids.has(l.ids['gamma_id']!)),
    );
    return page(rows, q, 20, 500).map((l) => gammaMarket(l, refs.get(l.id)));
  });

  http.get('/gamma/events', (q) => {
    const active = boolFilter(q, 'active');
    const closed = boolFilter(q, 'closed');
    const slugs = new Set(q.getAll('slug'));
    const ids = new Set(q.getAll('id'));
    const rows: Record<string, unknown>[] = [];
    if (active === false) return [];
    for (const g of eventsOf(listings()).values()) {
      const ref = eventRef(g[0]!);
      const isClosed = g.every((l) => CLOSED.includes(l.status));
      ref['closed'] = isClosed;
      if (closed !== undefined && closed !== isClosed) continue;
      if (slugs.size && !slugs.has(String(ref['slug']))) continue;
      if (ids.size && !ids.has(String(ref['id']))) continue;
      const volume = g.reduce((s, l) => s + l.volume, 0);
      rows.push({
        ...ref,
        description: '',
        startDate: iso(Math.min(...g.map((l) => l.openTime))),
        creationDate: iso(Math.min(...g.map((l) => l.createdAt))),
        volume,
        negRisk: g[0]!.ids['neg_risk'] === 'true',
        markets: g.map((l) => {
          const { events: _e, ...m } = gammaMarket(l);
          return m;
        }),
      });
    }
    return page(rows, q, 20, 500);
  });

  http.get('/clob/book', (q) => {
    const t = token(q.get('token_id') ?? '');
    if (!t) throw new HttpError(404, { error: 'No orderbook exists for the requested token id' });
    const f = bookFrame(t.listing, t.yes);
    return {
      market: f['market'],
      asset_id: f['asset_id'],
      timestamp: f['timestamp'],
      hash: f['hash'],
      bids: f['bids'],
      asks: f['asks'],
      min_order_size: '5',
      tick_size: f['tick_size'],
      neg_risk: t.listing.ids['neg_risk'] === 'true',
      last_trade_price: f['last_trade_price'],
    };
  });

  http.get('/clob/markets/:condition_id', (_q, p) => {
    const l = world.listing(label, p['condition_id'] ?? '');
    if (!l) throw new HttpError(404, { error: 'market not found' });
    const result = resultOf(l);
    const mid = (t: boolean): number => {
      const { bids, asks } = tokenLevels(l, t);
      const b = bids[0]?.[0];
      const a = asks[0]?.[0];
      return b !== undefined && a !== undefined ? (b + a) / 2 / PAYOUT : 0.5;
    };
    return {
      condition_id: l.id,
      question_id: l.ids['question_id'],
      tokens: [
        { token_id: l.ids['yes_token'], outcome: l.ids['outcome_yes'] ?? 'Yes', price: mid(true), winner: result === 'yes' },
        { token_id: l.ids['no_token'], outcome: l.ids['outcome_no'] ?? 'No', price: mid(false), winner: result === 'no' },
      ],
      minimum_order_size: 5,
      minimum_tick_size: Number(l.ids['tick_size'] ?? '0.01'),
      category: l.category,
      end_date_iso: iso(l.closeTime),
      question: l.title,
      market_slug: l.ids['slug'],
      active: true,
      closed: CLOSED.includes(l.status),
      accepting_orders: l.status === 'active',
      neg_risk: l.ids['neg_risk'] === 'true',
    };
  });

  http.get('/data/trades', (q) => {
    const markets = new Set((q.get('market') ?? '').split(',').filter(Boolean));
    const user = q.get('user')?.toLowerCase();
    const all = world.trades(label);
    const rows: SimTrade[] = [];
    for (let i = all.length - 1; i >= 0; i--) {
      const t = all[i]!;
      if (markets.size && !markets.has(t.listing.id)) continue;
      if (user && t.taker.toLowerCase() !== user) continue;
      rows.push(t);
    }
    return page(rows, q, 100, 10_000).map(dataTrade);
  });

  // ---- market channel --------------------------------------------------------------------------

  function flush(c: Conn): void {
    while (c.queue.length && c.ws.readyState === c.ws.OPEN) c.ws.send(c.queue.shift()!);
  }

  function out(c: Conn, text: string): void {
    if (c.ws.readyState !== c.ws.OPEN) return;
    const wait = http.stallUntil - Date.now();
    if (wait > 0) {
      c.queue.push(text);
      if (!flushTimer) {
        flushTimer = setTimeout(() => {
          flushTimer = undefined;
          for (const x of conns) flush(x);
        }, wait);
      }
      return;
    }
    flush(c);
    c.ws.send(text);
  }

  function sendBooks(c: Conn, assets: Iterable<string>): void {
    const frames: Record<string, unknown>[] = [];
    for (const a of assets) {
      const t = token(a);
      if (t) frames.push(bookFrame(t.listing, t.yes));
    }
    if (frames.length) out(c, JSON.stringify(frames));
  }

  http.ws('/ws/market', (ws) => {
    const c: Conn = { ws, assets: new Set(), custom: false, skipNextPriceChange: false, queue: [] };
    conns.add(c);
    ws.on('close', () => conns.delete(c));
    ws.on('message', (data) => {
      const text = data.toString();
      if (text === WS_PING) {
        out(c, WS_PONG);
        return;
      }
      let m: unknown;
      try {
        m = JSON.parse(text);
      } catch {
        return; // the venue ignores what it cannot parse
      }
      if (typeof m !== 'object' || m === null) return;
      const msg = m as { assets_ids?: unknown; type?: unknown; operation?: unknown; custom_feature_enabled?: unknown; initial_dump?: unknown };
      const ids = Array.isArray(msg.assets_ids) ? msg.assets_ids.filter((x): x is string => typeof x === 'string') : [];
      if (msg.custom_feature_enabled === true) c.custom = true;
      if (msg.operation === 'unsubscribe') {
        for (const a of ids) c.assets.delete(a);
        return;
      }
      if (msg.operation === 'subscribe' || (typeof msg.type === 'string' && msg.type.toLowerCase() === 'market')) {
        // A duplicate subscription is ignored, as the venue does: only new assets get a book.
        const added = ids.filter((a) => !c.assets.has(a));
        for (const a of added) c.assets.add(a);
        if (msg.initial_dump !== false) sendBooks(c, added);
      }
    });
  });

  function priceChange(c: Conn, ch: Extract<SimChange, { type: 'book' }>): void {
    const l = ch.listing;
    const yesId = l.ids['yes_token']!;
    const noId = l.ids['no_token']!;
    const wantYes = c.assets.has(yesId);
    const wantNo = c.assets.has(noId);
    if (!wantYes && !wantNo) return;
    if (c.skipNextPriceChange) {
      c.skipNextPriceChange = false;
      return;
    }
    const yb = l.book.bids.best();
    const ya = l.book.asks.best();
    const yesTop = { best_bid: yb === undefined ? '0' : polyPrice(yb), best_ask: ya === undefined ? '1' : polyPrice(ya) };
    const noTop = { best_bid: ya === undefined ? '0' : polyPrice(PAYOUT - ya), best_ask: yb === undefined ? '1' : polyPrice(PAYOUT - yb) };
    const entries: Record<string, unknown>[] = [];
    for (const [side, price, size] of ch.changes) {
      if (wantYes)
        entries.push({
          asset_id: yesId,
          price: polyPrice(price),
          size: polySize(size),
          side: side === 'bid' ? 'BUY' : 'SELL',
          hash: sha1(`${yesId}${ch.timestamp}${side}${price}${size}`),
          ...yesTop,
        });
      if (wantNo)
        entries.push({
          asset_id: noId,
          price: polyPrice(PAYOUT - price),
          size: polySize(size),
          side: side === 'bid' ? 'SELL' : 'BUY',
          hash: sha1(`${noId}${ch.timestamp}${side}${price}${size}`),
          ...noTop,
        });
    }
    out(c, JSON.stringify({ market: l.id, price_changes: entries, timestamp: String(ch.timestamp), event_type: 'price_change' }));
  }

  function onTrade(t: SimTrade): void {
    const l = t.listing;
    const yes = t.takerSide === 'yes';
    const asset = l.ids[yes ? 'yes_token' : 'no_token']!;
    const frame = JSON.stringify({
      asset_id: asset,
      event_type: 'last_trade_price',
      fee_rate_bps: '0',
      market: l.id,
      price: polyPrice(yes ? t.price : PAYOUT - t.price),
      side: 'BUY',
      size: polySize(t.size),
      timestamp: String(t.timestamp),
    });
    const both = [l.ids['yes_token']!, l.ids['no_token']!];
    for (const c of conns) {
      if (c.assets.has(asset)) out(c, frame);
      const mine = both.filter((a) => c.assets.has(a));
      if (mine.length) sendBooks(c, mine);
    }
  }

  function marketMessage(l: SimListing): Record<string, unknown> {
    return {
      id: l.ids['gamma_id'],
      question: l.title,
      market: l.id,
      slug: l.ids['slug'],
      description: '',
      assets_ids: [l.ids['yes_token'], l.ids['no_token']],
      outcomes: [l.ids['outcome_yes'] ?? 'Yes', l.ids['outcome_no'] ?? 'No'],
      event_message: { id: l.ids['event_id'], ticker: l.ids['event_slug'], slug: l.ids['event_slug'], title: l.eventTitle, description: '' },
      timestamp: String(world.now()),
    };
  }

  const unsubscribe = world.onChange((ch) => {
    if (conns.size === 0) return;
    switch (ch.type) {
      case 'book':
        if (ch.listing.venue !== label) return;
        for (const c of conns) priceChange(c, ch);
        return;
      case 'trade':
        if (ch.trade.listing.venue === label) onTrade(ch.trade);
        return;
      case 'status': {
        const l = ch.listing;
        if (l.venue !== label || l.status !== 'finalized') return;
        const result = resultOf(l);
        if (!result) return;
        const frame = JSON.stringify({
          ...marketMessage(l),
          winning_asset_id: l.ids[result === 'yes' ? 'yes_token' : 'no_token'],
          winning_outcome: l.ids[result === 'yes' ? 'outcome_yes' : 'outcome_no'],
          event_type: 'market_resolved',
        });
        for (const c of conns) if (c.custom && (c.assets.has(l.ids['yes_token']!) || c.assets.has(l.ids['no_token']!))) out(c, frame);
        return;
      }
      case 'listing': {
        const l = ch.listing;
        if (l.venue !== label) return;
        tokens.set(l.ids['yes_token']!, { listing: l, yes: true });
        tokens.set(l.ids['no_token']!, { listing: l, yes: false });
        const frame = JSON.stringify({ ...marketMessage(l), event_type: 'new_market' });
        for (const c of conns) if (c.custom) out(c, frame);
      }
    }
  });

  function malformed(c: Conn, i: number): string {
    const a = c.assets.values().next().value ?? '0';
    const t = token(a);
    const market = t?.listing.id ?? '0x0';
    switch (i % 5) {
      case 0:
        return '[{"event_type":"book","asset_id":"'; // truncated JSON
      case 1:
        return JSON.stringify({ event_type: 'book', asset_id: 12345, market, bids: 'none', asks: [] }); // wrong types
      case 2:
        return JSON.stringify({ event_type: 'order_book_v9', asset_id: a, market }); // unknown variant
      case 3:
        return JSON.stringify({
          market,
          price_changes: [{ asset_id: a, price: '1.5', size: '10', side: 'BUY' }],
          timestamp: String(world.now()),
          event_type: 'price_change',
        });
      default:
        return JSON.stringify({
          market,
          price_changes: [{ asset_id: a, price: '0.5', size: '-10', side: 'SELL' }],
          timestamp: String(world.now()),
          event_type: 'price_change',
        });
    }
  }

  function fault(f: SimFault): void {
    switch (f.kind) {
      case 'disconnect':
        http.dropAll();
        return;
      case 'gap':
        for (const c of conns) c.skipNextPriceChange = true;
        return;
      case 'malformed':
        for (const c of conns) for (let i = 0; i < (f.count ?? 1); i++) out(c, malformed(c, i));
        return;
      case 'stall':
        http.stallUntil = Date.now() + f.ms;
        return;
      case 'duplicate_snapshot':
        for (const c of conns) sendBooks(c, c.assets);
        return;
    }
  }

  const { host, port } = await http.listen(opts.host, opts.port);
  const base = `http://${host}:${port}`;
  return {
    venue,
    endpoints: {
      rest: `${base}/clob`,
      ws: `ws://${host}:${port}/ws/market`,
      extra: { gamma: `${base}/gamma`, data: `${base}/data` },
    },
    fault,
    close: async () => {
      unsubscribe();
      if (flushTimer) clearTimeout(flushTimer);
      await http.close();
    },
  };
};

const ADJECTIVES = ['Enchanting', 'Quiet', 'Bold', 'Lucky', 'Patient', 'Sharp', 'Restless', 'Frugal', 'Brave', 'Curious'];
const NOUNS = ['Populist', 'Otter', 'Contrarian', 'Falcon', 'Oracle', 'Badger', 'Skeptic', 'Heron', 'Gambit', 'Lantern'];

/**
 * The public profile the data-api shows with a wallet's trades, as on the venue: about a third
 * of wallets have none (empty strings), the rest an Adjective-Noun pseudonym, some a chosen name.
 */
export function profile(wallet: string): { name: string; pseudonym: string } {
  const h = createHash('sha1').update(wallet.toLowerCase()).digest();
  if (h[0]! % 3 === 0) return { name: '', pseudonym: '' };
  const pseudonym = `${ADJECTIVES[h[1]! % ADJECTIVES.length]}-${NOUNS[h[2]! % NOUNS.length]}`;
  return { name: h[3]! % 2 ? `trader-${wallet.slice(2, 8).toLowerCase()}` : '', pseudonym };
}

/** A simulated trade as the data-api serves it (taker only, the API's default takerOnly=true). */
export function dataTrade(t: SimTrade): Record<string, unknown> {
  const l = t.listing;
  const yes = t.takerSide === 'yes';
  const price = yes ? t.price : PAYOUT - t.price;
  return {
    proxyWallet: t.taker,
    side: 'BUY',
    asset: l.ids[yes ? 'yes_token' : 'no_token'],
    conditionId: l.id,
    size: t.size,
    price: price / PAYOUT,
    timestamp: Math.floor(t.timestamp / 1000),
    title: l.title,
    slug: l.ids['slug'],
    icon: '',
    eventSlug: l.ids['event_slug'],
    outcome: l.ids[yes ? 'outcome_yes' : 'outcome_no'] ?? (yes ? 'Yes' : 'No'),
    outcomeIndex: yes ? 0 : 1,
    ...profile(t.taker),
    bio: '',
    profileImage: '',
    profileImageOptimized: '',
    transactionHash: `0x${createHash('sha256').update(t.id).digest('hex')}`,
  };
}
