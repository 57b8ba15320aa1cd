import type { WebSocket } from 'ws';
import type { VenueConfig } from '../../config/schema.js';
import { complement, toDollarString } from '../../core/price.js';
import type { BookSideName, Level } from '../../core/types.js';
import {
  isSubscribeCommand,
  parseBookKey,
  type BookName,
  type ExchangeBook,
  type ExchangeEvent,
  type ExchangeMarket,
  type WireChange,
} from '../../venues/exchange/raw.js';
import { createSimHttp, HttpError, Reorder } from '../server-kit.js';
import type { SimChange, SimFault, SimListing, SimServer, SimServerFactory, SimWorldApi } from '../types.js';

/**
 * Simulated venue speaking the crossbook exchange protocol v1 (src/venues/exchange/raw.ts), for
 * one venue of the world (SYNTHETIC DATA): REST `GET /v1/events`, `GET /v1/book/:book` and the
 * WebSocket `/v1/stream`. Listings are grouped into events by `ids.event_id`; each listing is one
 * market (on venue_h one outcome). The YES book is the listing's book; on a two-sided venue
 * (`capabilities.yesOnlyBook` false) the NO book is its mirror (NO bids = 1 − YES asks, NO asks =
 * 1 − YES bids) and every YES change is followed by the mirrored NO change.
 *
 * Faults: `disconnect` drops every socket; `gap` skips one seq on every subscribed market of every
 * connection; `malformed` sends `count` bad frames to every connection (truncated JSON, wrong
 * types, a snapshot with a negative size, an unknown type), none of which uses a seq; `stall` sends
 * nothing, answers no ping and holds REST for `ms`, then delivers what was held, in order;
 * `duplicate_snapshot` sends every subscribed book's snapshot again (new seq); `reorder` swaps the
 * next two frames of one market on every connection (the later seq arrives first).
 */

const HEARTBEAT_MS = 5_000;

interface Conn {
  readonly ws: WebSocket;
  /** Market → last seq sent. */
  readonly subs: Map<string, number>;
  /** Frames held back by a stall. */
  readonly held: string[];
  readonly reorder: Reorder;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const dollars = (units: number): string => toDollarString(units);
const size = (n: number): string => String(n);

/** The protocol's market status of a listing. */
function statusOf(l: SimListing): ExchangeMarket['status'] {
  switch (l.status) {
    case 'initialized':
      return 'pending';
    case 'active':
      return 'open';
    case 'closed':
    case 'determined':
      return 'closed';
    case 'finalized':
      return 'settled';
  }
}

function resultOf(l: SimListing): 'yes' | 'no' | null {
  if ((l.status !== 'determined' && l.status !== 'finalized') || l.prop.resolved === undefined) return null;
  return (l.prop.resolved === 'yes') !== l.inverted ? 'yes' : 'no';
}

/** Levels of a listing's book `book`, best first, as wire strings. */
export function bookLevels(l: SimListing, book: BookName): { bids: [string, string][]; asks: [string, string][] } {
  const wire = (levels: readonly Level[]): [string, string][] => levels.map(([p, s]) => [dollars(p), size(s)]);
  if (book === 'yes') return { bids: wire(l.book.bids.levels()), asks: wire(l.book.asks.levels()) };
  // NO bids are the complement of YES asks (best YES ask → best NO bid), and vice versa.
  const mirror = (levels: readonly Level[]): Level[] => levels.map(([p, s]) => [complement(p), s]);
  return { bids: wire(mirror(l.book.asks.levels())), asks: wire(mirror(l.book.bids.levels())) };
}

/** Serves the crossbook exchange protocol for `venue` from `world`. */
export const serve: SimServerFactory = async (world: SimWorldApi, venue: VenueConfig, opts): Promise<SimServer> => {
  const http = createSimHttp();
  const twoSided = !venue.capabilities.yesOnlyBook;
  const books: BookName[] = twoSided ? ['yes', 'no'] : ['yes'];
  const conns = new Set<Conn>();
  let malformedSent = 0;
  let flushTimer: NodeJS.Timeout | undefined;

  const marketOf = (l: SimListing): ExchangeMarket => ({
    id: l.id,
    ...(l.ids['market_id'] ? { market_id: l.ids['market_id'] } : {}),
    name: l.title,
    market_name: l.ids['market_name'] ?? 'Winner',
    outcome: l.outcome ?? null,
    status: statusOf(l),
    open_time: iso(l.openTime),
    close_time: iso(l.closeTime),
    result: resultOf(l),
    books,
    tags: [...l.tags],
  });

  const eventsDoc = (state: string | null): { events: ExchangeEvent[]; ts: number } => {
    const by = new Map<string, ExchangeEvent>();
    for (const l of world.listings(venue.label)) {
      const id = l.ids['event_id'] ?? l.event.id;
      let ev = by.get(id);
      if (!ev) {
        ev = {
          id,
          name: l.eventTitle,
          sport: l.event.sport ?? null,
          league: l.event.league ?? null,
          category: l.category,
          start_time: iso(l.event.startTime),
          state: l.event.state,
          futures: l.event.futures,
          markets: [],
        };
        by.set(id, ev);
      }
      ev.markets.push(marketOf(l));
    }
    const events = [...by.values()].filter((e) => state === null || e.state === state);
    return { events, ts: world.now() };
  };

  http.get('/v1/events', (q) => eventsDoc(q.get('state')));
  http.get('/v1/book/:book', (_q, params): ExchangeBook => {
    const { market, book } = parseBookKey(params['book'] ?? '');
    const l = world.listing(venue.label, market);
    if (!l || (book === 'no' && !twoSided)) throw new HttpError(404, { error: 'unknown market' });
    return { type: 'book', market, book, ...bookLevels(l, book), ts: world.now() };
  });

  // ---- stream ---------------------------------------------------------------------------

  /** Delivers what a stall held back, once the stall is over (timers may fire a little early). */
  const scheduleFlush = (): void => {
    if (flushTimer) return;
    flushTimer = setTimeout(
      () => {
        flushTimer = undefined;
        if (Date.now() < http.stallUntil) return scheduleFlush();
        for (const c of conns) for (const text of c.held.splice(0)) c.ws.send(text);
      },
      Math.max(1, http.stallUntil - Date.now() + 1),
    );
    flushTimer.unref?.();
  };

  const sendText = (c: Conn, text: string): void => {
    if (c.ws.readyState !== c.ws.OPEN) return;
    if (Date.now() < http.stallUntil) {
      c.held.push(text);
      scheduleFlush();
      return;
    }
    for (const held of c.held.splice(0)) c.ws.send(held);
    c.ws.send(text);
  };

  /** Sends a frame about `market`, stamping the connection's next seq for it. */
  const sendSeq = (c: Conn, market: string, frame: Record<string, unknown>): void => {
    const seq = (c.subs.get(market) ?? 0) + 1;
    c.subs.set(market, seq);
    c.reorder.send(market, JSON.stringify({ ...frame, seq }), (t) => sendText(c, t));
  };

  const sendSnapshots = (c: Conn, l: SimListing): void => {
    const ts = world.now();
    for (const b of books) sendSeq(c, l.id, { type: 'snapshot', market: l.id, book: b, ...bookLevels(l, b), ts });
  };

  const onConnection = (ws: WebSocket): void => {
    const c: Conn = { ws, subs: new Map(), held: [], reorder: new Reorder() };
    conns.add(c);
    ws.on('close', () => conns.delete(c));
    ws.on('error', () => conns.delete(c));
    ws.on('message', (data) => {
      let cmd: unknown;
      try {
        cmd = JSON.parse(String(data));
      } catch {
        cmd = undefined;
      }
      if (!isSubscribeCommand(cmd)) {
        sendText(c, JSON.stringify({ type: 'error', code: 'bad_request', msg: 'expected {"op":"subscribe"|"unsubscribe","channel":"book","markets":[…]}' }));
        return;
      }
      if (cmd.op === 'unsubscribe') {
        for (const m of cmd.markets) c.subs.delete(m);
        sendText(c, JSON.stringify({ type: 'unsubscribed', channel: 'book', markets: cmd.markets }));
        return;
      }
      const ok: SimListing[] = [];
      for (const m of cmd.markets) {
        const l = world.listing(venue.label, m);
        if (l) ok.push(l);
        else sendText(c, JSON.stringify({ type: 'error', code: 'unknown_market', msg: `unknown market ${m}`, market: m }));
      }
      sendText(c, JSON.stringify({ type: 'subscribed', channel: 'book', markets: ok.map((l) => l.id) }));
      for (const l of ok) sendSnapshots(c, l);
    });
  };
  http.ws('/v1/stream', onConnection);

  const wireChanges = (changes: readonly (readonly [BookSideName, number, number, number])[], book: BookName): WireChange[] =>
    book === 'yes'
      ? changes.map(([side, p, s]) => [side, dollars(p), size(s)])
      : changes.map(([side, p, s]) => [side === 'bid' ? 'ask' : 'bid', dollars(complement(p)), size(s)]);

  const onChange = (ch: SimChange): void => {
    const l = ch.type === 'trade' ? ch.trade.listing : ch.listing;
    if (l.venue !== venue.label) return;
    for (const c of conns) {
      if (!c.subs.has(l.id)) continue;
      switch (ch.type) {
        case 'book':
          for (const b of books) sendSeq(c, l.id, { type: 'update', market: l.id, book: b, changes: wireChanges(ch.changes, b), ts: ch.timestamp });
          break;
        case 'trade':
          sendSeq(c, l.id, {
            type: 'trade',
            market: l.id,
            id: ch.trade.id,
            price: dollars(ch.trade.price),
            size: size(ch.trade.size),
            taker: ch.trade.takerSide,
            ts: ch.trade.timestamp,
          });
          break;
        case 'status':
          sendSeq(c, l.id, { type: 'status', market: l.id, status: statusOf(l), result: resultOf(l), event_state: l.event.state, ts: ch.timestamp });
          break;
        case 'listing':
          // New markets are found through the catalog (GET /v1/events).
          break;
      }
    }
  };
  const off = world.onChange(onChange);

  const heartbeat = setInterval(() => {
    const text = JSON.stringify({ type: 'heartbeat', ts: world.now() });
    for (const c of conns) sendText(c, text);
  }, HEARTBEAT_MS);
  heartbeat.unref?.();

  const { host, port } = await http.listen(opts.host, opts.port);
  return {
    venue,
    endpoints: { rest: `http://${host}:${port}/v1`, ws: `ws://${host}:${port}/v1/stream` },
    fault(f: SimFault) {
      switch (f.kind) {
        case 'disconnect':
          http.dropAll();
          break;
        case 'gap':
          for (const c of conns) for (const [m, seq] of c.subs) c.subs.set(m, seq + 1);
          break;
        case 'malformed':
          for (let i = 0; i < (f.count ?? 1); i++) {
            const n = malformedSent++;
            for (const c of conns) sendText(c, malformedFrame(n, c, world));
          }
          break;
        case 'stall':
          http.stallUntil = Date.now() + f.ms;
          if (flushTimer) clearTimeout(flushTimer);
          flushTimer = undefined;
          scheduleFlush();
          break;
        case 'reorder':
          for (const c of conns) c.reorder.arm();
          break;
        case 'duplicate_snapshot':
          for (const c of conns) {
            for (const m of c.subs.keys()) {
              const l = world.listing(venue.label, m);
              if (l) sendSnapshots(c, l);
            }
          }
          break;
      }
    },
    close: async () => {
      off();
      clearInterval(heartbeat);
      if (flushTimer) clearTimeout(flushTimer);
      await http.close();
    },
  };
};

/** A bad frame of one of four kinds, in turn. None is valid, so none may use up a seq. */
function malformedFrame(n: number, c: Conn, world: SimWorldApi): string {
  const market = c.subs.keys().next().value ?? 'unknown';
  const seq = (c.subs.get(market) ?? 0) + 1;
  const ts = world.now();
  switch (n % 4) {
    case 0:
      return JSON.stringify({ type: 'update', market, book: 'yes', seq, changes: [['bid', '0.47', '10']], ts }).slice(0, 40);
    case 1:
      return JSON.stringify({ type: 'update', market, book: 'yes', seq: String(seq), changes: [['bid', 0.47, 10]], ts });
    case 2:
      return JSON.stringify({ type: 'snapshot', market, book: 'yes', seq, bids: [['0.5000', '-3']], asks: [['1.5000', '10']], ts });
    default:
      return JSON.stringify({ type: 'book_v2', market, seq, ts });
  }
}
