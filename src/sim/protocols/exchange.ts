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
import { createSimHttp, HttpError, Reorder, type SimHttp } from '../server-kit.js';
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
  registerRest(http, world, venue.label, books);
  const stream = new ExchangeStream(world, venue.label, http, books);
  http.ws('/v1/stream', (ws) => stream.connect(ws));
  const off = world.onChange((ch) => stream.onChange(ch));

  const { host, port } = await http.listen(opts.host, opts.port);
  return {
    venue,
    endpoints: { rest: `http://${host}:${port}/v1`, ws: `ws://${host}:${port}/v1/stream` },
    fault: (f: SimFault) => stream.fault(f),
    close: async () => {
      off();
      stream.close();
      await http.close();
    },
  };
};

/** `GET /v1/events` (listings grouped by `ids.event_id`, optionally by state) and `GET /v1/book/:book`. */
function registerRest(http: SimHttp, world: SimWorldApi, label: string, books: readonly BookName[]): void {
  http.get('/v1/events', (q) => eventsDoc(world, label, books, q.get('state')));
  http.get('/v1/book/:book', (_q, params): ExchangeBook => {
    const { market, book } = parseBookKey(params['book'] ?? '');
    const l = world.listing(label, market);
    if (!l || !books.includes(book)) throw new HttpError(404, { error: 'unknown market' });
    return { type: 'book', market, book, ...bookLevels(l, book), ts: world.now() };
  });
}

function marketOf(l: SimListing, books: readonly BookName[]): ExchangeMarket {
  return {
    id: l.id,
    ...(l.ids['market_id'] ? { market_id: l.ids['market_id'] } : {}),
    name: l.title,
    market_name: l.ids['market_name'] ?? 'Winner',
    outcome: l.outcome ?? null,
    status: statusOf(l),
    open_time: iso(l.openTime),
    close_time: iso(l.closeTime),
    result: resultOf(l),
    books: [...books],
    tags: [...l.tags],
  };
}

function eventsDoc(world: SimWorldApi, label: string, books: readonly BookName[], state: string | null): { events: ExchangeEvent[]; ts: number } {
  const by = new Map<string, ExchangeEvent>();
  for (const l of world.listings(label)) {
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
    ev.markets.push(marketOf(l, books));
  }
  const events = [...by.values()].filter((e) => state === null || e.state === state);
  return { events, ts: world.now() };
}

/** A YES-perspective book change as wire changes of book `book` (mirrored for NO). */
function wireChanges(changes: readonly (readonly [BookSideName, number, number, number])[], book: BookName): WireChange[] {
  return book === 'yes'
    ? changes.map(([side, p, s]) => [side, dollars(p), size(s)])
    : changes.map(([side, p, s]) => [side === 'bid' ? 'ask' : 'bid', dollars(complement(p)), size(s)]);
}

/** The stream: subscriptions per connection with a seq per market, stall holding, heartbeats and faults. */
class ExchangeStream {
  private readonly conns = new Set<Conn>();
  private malformedSent = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly world: SimWorldApi,
    private readonly label: string,
    private readonly http: SimHttp,
    private readonly books: readonly BookName[],
  ) {
    this.heartbeat = setInterval(() => {
      const text = JSON.stringify({ type: 'heartbeat', ts: world.now() });
      for (const c of this.conns) this.sendText(c, text);
    }, HEARTBEAT_MS);
    this.heartbeat.unref?.();
  }

  /** Takes a new client. */
  connect(ws: WebSocket): void {
    const c: Conn = { ws, subs: new Map(), held: [], reorder: new Reorder() };
    this.conns.add(c);
    ws.on('close', () => this.conns.delete(c));
    ws.on('error', () => this.conns.delete(c));
    ws.on('message', (data) => this.onMessage(c, String(data)));
  }

  private onMessage(c: Conn, text: string): void {
    let cmd: unknown;
    try {
      cmd = JSON.parse(text);
    } catch {
      cmd = undefined;
    }
    if (!isSubscribeCommand(cmd)) {
      this.sendText(c, JSON.stringify({ type: 'error', code: 'bad_request', msg: 'expected {"op":"subscribe"|"unsubscribe","channel":"book","markets":[…]}' }));
      return;
    }
    if (cmd.op === 'unsubscribe') {
      for (const m of cmd.markets) c.subs.delete(m);
      this.sendText(c, JSON.stringify({ type: 'unsubscribed', channel: 'book', markets: cmd.markets }));
      return;
    }
    const ok: SimListing[] = [];
    for (const m of cmd.markets) {
      const l = this.world.listing(this.label, m);
      if (l) ok.push(l);
      else this.sendText(c, JSON.stringify({ type: 'error', code: 'unknown_market', msg: `unknown market ${m}`, market: m }));
    }
    this.sendText(c, JSON.stringify({ type: 'subscribed', channel: 'book', markets: ok.map((l) => l.id) }));
    for (const l of ok) this.sendSnapshots(c, l);
  }

  // ---- sending --------------------------------------------------------------------------------

  /** Delivers what a stall held back, once the stall is over (timers may fire a little early). */
  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(
      () => {
        this.flushTimer = undefined;
        if (Date.now() < this.http.stallUntil) return this.scheduleFlush();
        for (const c of this.conns) for (const text of c.held.splice(0)) c.ws.send(text);
      },
      Math.max(1, this.http.stallUntil - Date.now() + 1),
    );
    this.flushTimer.unref?.();
  }

  private sendText(c: Conn, text: string): void {
    if (c.ws.readyState !== c.ws.OPEN) return;
    if (Date.now() < this.http.stallUntil) {
      c.held.push(text);
      this.scheduleFlush();
      return;
    }
    for (const held of c.held.splice(0)) c.ws.send(held);
    c.ws.send(text);
  }

  /** Sends a frame about `market`, stamping the connection's next seq for it. */
  private sendSeq(c: Conn, market: string, frame: Record<string, unknown>): void {
    const seq = (c.subs.get(market) ?? 0) + 1;
    c.subs.set(market, seq);
    c.reorder.send(market, JSON.stringify({ ...frame, seq }), (t) => this.sendText(c, t));
  }

  private sendSnapshots(c: Conn, l: SimListing): void {
    const ts = this.world.now();
    for (const b of this.books) this.sendSeq(c, l.id, { type: 'snapshot', market: l.id, book: b, ...bookLevels(l, b), ts });
  }

  // ---- the world's changes ------------------------------------------------------------------

  onChange(ch: SimChange): void {
    const l = ch.type === 'trade' ? ch.trade.listing : ch.listing;
    if (l.venue !== this.label) return;
    for (const c of this.conns) {
      if (!c.subs.has(l.id)) continue;
      switch (ch.type) {
        case 'book':
          for (const b of this.books) this.sendSeq(c, l.id, { type: 'update', market: l.id, book: b, changes: wireChanges(ch.changes, b), ts: ch.timestamp });
          break;
        case 'trade':
          this.sendSeq(c, l.id, {
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
          this.sendSeq(c, l.id, { type: 'status', market: l.id, status: statusOf(l), result: resultOf(l), event_state: l.event.state, ts: ch.timestamp });
          break;
        case 'listing':
          // New markets are found through the catalog (GET /v1/events).
          break;
      }
    }
  }

  fault(f: SimFault): void {
    switch (f.kind) {
      case 'disconnect':
        this.http.dropAll();
        break;
      case 'gap':
        for (const c of this.conns) for (const [m, seq] of c.subs) c.subs.set(m, seq + 1);
        break;
      case 'malformed':
        for (let i = 0; i < (f.count ?? 1); i++) {
          const n = this.malformedSent++;
          for (const c of this.conns) this.sendText(c, malformedFrame(n, c, this.world));
        }
        break;
      case 'stall':
        this.http.stallUntil = Date.now() + f.ms;
        if (this.flushTimer) clearTimeout(this.flushTimer);
        this.flushTimer = undefined;
        this.scheduleFlush();
        break;
      case 'reorder':
        for (const c of this.conns) c.reorder.arm();
        break;
      case 'duplicate_snapshot':
        for (const c of this.conns) {
          for (const m of c.subs.keys()) {
            const l = this.world.listing(this.label, m);
            if (l) this.sendSnapshots(c, l);
          }
        }
        break;
    }
  }

  close(): void {
    clearInterval(this.heartbeat);
    if (this.flushTimer) clearTimeout(this.flushTimer);
  }
}

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
