import type { WebSocket } from 'ws';
import type { VenueConfig } from '../../../config/schema.js';
import type { MarketStatus } from '../../../core/types.js';
import { Reorder, type SimHttp } from '../../server-kit.js';
import type { SimChange, SimFault, SimListing, SimWorldApi } from '../../types.js';
import { onCommand } from './commands.js';
import { createdMsg, deltaMsg, outcomeOf, snapshotMsg, tickerMsg, tradeMsg } from './wire.js';

/** One subscription (sid) of a connection. */
export interface Sub {
  readonly sid: number;
  readonly channel: string;
  /** null = every market (lifecycle, or ticker/trade subscribed without a filter). */
  readonly tickers: Set<string> | null;
  seq: number;
}

/** One WebSocket client. */
export interface Conn {
  readonly ws: WebSocket;
  readonly subs: Map<number, Sub>;
  readonly queue: string[];
  nextSid: number;
  readonly reorder: Reorder;
}

/** Most frames queued for one connection during a stall before it is dropped instead. */
const MAX_QUEUE = 200_000;

/** Bad frames the `malformed` fault sends, in turn: none carries a usable sid/seq. */
const MALFORMED = [
  'this is not json',
  '{"type":"orderbook_delta","sid":1,"seq":',
  '{"type":"orderbook_delta","sid":"1","seq":"2","msg":{"market_ticker":7,"price_dollars":0.5,"delta_fp":-3,"side":"maybe"}}',
  '{"type":"ticker","sid":"x","msg":{"market_ticker":"SIM-BAD","yes_bid_dollars":45,"volume_fp":null}}',
  '{"type":"trade","msg":null}',
  '[1,2,3]',
  '{"type":42}',
  '{"type":"orderbook_snapshot","msg":{"market_ticker":"SIM-BAD","yes_dollars_fp":[["x","1.00"]]}}',
];

/**
 * The simulated Kalshi WebSocket: its connections and subscriptions, the frames the world's
 * changes become (deltas, tickers, trades, lifecycle), stall queueing and the stream faults.
 */
export class KalshiStream {
  readonly conns = new Set<Conn>();
  /** The status each listing was last announced with on market_lifecycle_v2. */
  private readonly announced = new Map<SimListing, MarketStatus>();
  private readonly lastTicker = new Map<SimListing, string>();
  private readonly lastTradeSize = new Map<SimListing, number>();
  private flushTimer: NodeJS.Timeout | undefined;
  private malformedSent = 0;

  constructor(
    readonly world: SimWorldApi,
    private readonly venue: VenueConfig,
    private readonly http: SimHttp,
  ) {
    for (const l of world.listings(venue.label)) this.announced.set(l, l.status);
  }

  listing(ticker: string): SimListing | undefined {
    return this.world.listing(this.venue.label, ticker);
  }

  /** Takes a new client: its commands are answered by `onCommand`. */
  connect(ws: WebSocket): void {
    const c: Conn = { ws, subs: new Map(), queue: [], nextSid: 1, reorder: new Reorder() };
    this.conns.add(c);
    ws.on('message', (data) => onCommand(this, c, data.toString()));
    ws.on('close', () => this.conns.delete(c));
    ws.on('error', () => this.conns.delete(c));
  }

  // ---- sending --------------------------------------------------------------------------------

  private flush(c: Conn): void {
    if (Date.now() < this.http.stallUntil) return;
    for (const text of c.queue.splice(0)) c.ws.send(text);
  }

  /** Sends now, or queues while stalled (dropping a client whose queue overflows). */
  sendText(c: Conn, text: string): void {
    if (c.ws.readyState !== c.ws.OPEN) return;
    if (Date.now() < this.http.stallUntil) {
      if (c.queue.length >= MAX_QUEUE) c.ws.terminate();
      else c.queue.push(text);
      return;
    }
    if (c.queue.length > 0) this.flush(c);
    c.ws.send(text);
  }

  send(c: Conn, frame: Record<string, unknown>): void {
    this.sendText(c, JSON.stringify(frame));
  }

  /** Sends a frame on a sid, taking its next seq. */
  sendSeq(c: Conn, s: Sub, type: string, msg: unknown, id?: number): void {
    s.seq++;
    const frame = id === undefined ? { type, sid: s.sid, seq: s.seq, msg } : { type, id, sid: s.sid, seq: s.seq, msg };
    c.reorder.send(String(s.sid), JSON.stringify(frame), (t) => this.sendText(c, t));
  }

  error(c: Conn, id: number | undefined, code: number, msg: string): void {
    this.send(c, id === undefined ? { type: 'error', msg: { code, msg } } : { id, type: 'error', msg: { code, msg } });
  }

  snapshot(c: Conn, s: Sub, ticker: string, id?: number): void {
    this.sendSeq(c, s, 'orderbook_snapshot', snapshotMsg(this.listing(ticker), ticker), id);
  }

  tickerMsg(l: SimListing): Record<string, unknown> {
    return tickerMsg(l, this.world.now(), this.lastTradeSize.get(l) ?? 0);
  }

  // ---- the world's changes ------------------------------------------------------------------

  /** Turns one change of the world into the frames each subscription asked for. */
  onChange(ch: SimChange): void {
    switch (ch.type) {
      case 'book': {
        const l = ch.listing;
        if (l.venue !== this.venue.label) return;
        const ts = ch.timestamp;
        for (const c of this.conns)
          for (const s of c.subs.values()) {
            if (s.channel !== 'orderbook_delta' || !covers(s, l.id)) continue;
            for (const [side, price, size, prev] of ch.changes) {
              const d = size - prev;
              if (d === 0) continue;
              this.sendSeq(c, s, 'orderbook_delta', deltaMsg(l, side, price, d, ts));
            }
          }
        this.tickerFrames(l);
        return;
      }
      case 'trade': {
        const l = ch.trade.listing;
        if (l.venue !== this.venue.label) return;
        this.lastTradeSize.set(l, ch.trade.size);
        for (const c of this.conns)
          for (const s of c.subs.values()) if (s.channel === 'trade' && covers(s, l.id)) this.sendSeq(c, s, 'trade', tradeMsg(ch.trade));
        this.tickerFrames(l);
        return;
      }
      case 'status':
        if (ch.listing.venue === this.venue.label) this.statusFrames(ch.listing);
        return;
      case 'listing': {
        const l = ch.listing;
        if (l.venue !== this.venue.label || this.announced.has(l)) return;
        this.announced.set(l, l.status === 'active' ? 'initialized' : l.status);
        this.lifecycle(createdMsg(l));
        this.statusFrames(l);
        return;
      }
    }
  }

  private tickerFrames(l: SimListing): void {
    const key = [l.book.bids.best(), l.book.asks.best(), l.book.bids.bestSize(), l.book.asks.bestSize(), l.last, l.volume, l.openInterest].join(',');
    if (this.lastTicker.get(l) === key) return;
    this.lastTicker.set(l, key);
    let msg: Record<string, unknown> | undefined;
    for (const c of this.conns)
      for (const s of c.subs.values())
        if (s.channel === 'ticker' && covers(s, l.id)) this.send(c, { type: 'ticker', sid: s.sid, msg: (msg ??= this.tickerMsg(l)) });
  }

  private lifecycle(msg: Record<string, unknown>): void {
    for (const c of this.conns) for (const s of c.subs.values()) if (s.channel === 'market_lifecycle_v2') this.sendSeq(c, s, 'market_lifecycle_v2', msg);
  }

  /** The lifecycle frames that take a market from the status last announced to its current one. */
  private statusFrames(l: SimListing): void {
    const prev = this.announced.get(l);
    const next = l.status;
    if (prev === next) return;
    this.announced.set(l, next);
    const now = this.world.now();
    const t = l.id;
    const open = prev === 'active' || prev === 'initialized' || prev === undefined;
    if (next === 'active') {
      this.lifecycle({ market_ticker: t, event_type: 'activated' });
      return;
    }
    if (next === 'initialized') return;
    if (open) this.lifecycle({ market_ticker: t, event_type: 'close_date_updated', close_ts: Math.floor(Math.min(l.closeTime, now) / 1000) });
    if (next === 'closed') return;
    const result = outcomeOf(l);
    if (prev !== 'determined') {
      const msg: Record<string, unknown> = { market_ticker: t, event_type: 'determined', determination_ts: Math.floor(now / 1000) };
      if (result) {
        msg['result'] = result;
        msg['settlement_value'] = result === 'yes' ? '1.0000' : '0.0000';
      }
      this.lifecycle(msg);
    }
    if (next === 'finalized') this.lifecycle({ market_ticker: t, event_type: 'settled', settled_ts: Math.floor(now / 1000) });
  }

  // ---- faults ------------------------------------------------------------------------------

  fault(f: SimFault): void {
    switch (f.kind) {
      case 'disconnect':
        this.http.dropAll();
        this.conns.clear();
        return;
      case 'gap':
        for (const c of this.conns) for (const s of c.subs.values()) s.seq++;
        return;
      case 'malformed':
        for (let i = 0; i < (f.count ?? 1); i++) {
          const text = MALFORMED[this.malformedSent++ % MALFORMED.length]!;
          for (const c of this.conns) this.sendText(c, text);
        }
        return;
      case 'stall':
        this.http.stallUntil = Math.max(this.http.stallUntil, Date.now() + f.ms);
        if (this.flushTimer) clearTimeout(this.flushTimer);
        this.flushTimer = setTimeout(() => this.flushAll(), this.http.stallUntil - Date.now() + 1);
        this.flushTimer.unref?.();
        return;
      case 'reorder':
        for (const c of this.conns) c.reorder.arm();
        return;
      case 'duplicate_snapshot':
        for (const c of this.conns)
          for (const s of c.subs.values()) if (s.channel === 'orderbook_delta' && s.tickers) for (const t of s.tickers) this.snapshot(c, s, t);
        return;
    }
  }

  private flushAll(): void {
    this.flushTimer = undefined;
    for (const c of this.conns) this.flush(c);
  }

  close(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.conns.clear();
  }
}

/** Whether a subscription covers a market. */
export const covers = (s: Sub, ticker: string): boolean => s.tickers === null || s.tickers.has(ticker);
