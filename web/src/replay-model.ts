import type { components } from 'crossbook/client';
import type { Book } from './book.js';

type S = components['schemas'];

/** Where a WebSocket replay is. */
export type ReplayState = 'idle' | 'starting' | 'running' | 'paused' | 'completed' | 'stopped' | 'error';

/** One market's last price in the replay. */
export interface ReplayPrice {
  readonly market: string;
  readonly source: string;
  readonly yesBid: number | null;
  readonly yesAsk: number | null;
  readonly last: number | null;
  /** When crossbook received the frame behind it (ms), as it was recorded. */
  readonly recvTs: number | undefined;
}

/** One match group's open arbitrage in the replay. */
export interface ReplayArb {
  readonly groupId: number;
  readonly title: string;
  readonly count: number;
  readonly bestRoi: number | null;
}

/** One alert the smart-money or fade-finder feed sent in the window (as /alerts/* give it). */
export interface ReplayAlert {
  readonly id: string;
  readonly kind: S['WsSmartMoney']['alert_type'] | 'fade';
  readonly market: string;
  readonly source: string;
  readonly title: string | null;
  readonly side: 'buy' | 'sell';
  readonly outcome: 'yes' | 'no';
  readonly price: number;
  readonly amountUsd: number;
  readonly reason: string;
  /** When the alert was raised, as it was recorded (ms). */
  readonly createdAt: number;
}

/** Alerts the page keeps, newest first (a long window raises many). */
export const REPLAY_ALERTS_SHOWN = 50;

/**
 * The state a WebSocket replay shows: the messages the live channels sent over the window, applied
 * as a live page would apply them (prices, books, arbitrage by group), plus the replay's own
 * messages (started, control acknowledgments, completed, errors).
 */
export class ReplayModel {
  state: ReplayState = 'idle';
  id: string | undefined;
  /** Receive time the replay is at (ms): the latest message's recv_ts, or a control's position. */
  position: number | undefined;
  messages = 0;
  error: string | undefined;
  completed: S['WsReplayCompleted'] | undefined;
  readonly prices = new Map<string, ReplayPrice>();
  readonly books = new Map<string, Book>();
  readonly arbs = new Map<number, ReplayArb>();
  /** The alert channels' messages, newest first (at most REPLAY_ALERTS_SHOWN). */
  alerts: ReplayAlert[] = [];
  /** Warnings the replay gave (an alert window reaching past what the store keeps, …). */
  readonly warnings: string[] = [];

  /** Applies one server message; true when it changed what the page shows. */
  apply(m: Record<string, unknown>): boolean {
    const type = m['type'];
    if (type === 'replay_started') return this.started(m as unknown as S['WsReplayStarted']);
    if (type === 'replay_completed') {
      this.completed = m as unknown as S['WsReplayCompleted'];
      this.state = 'completed';
      return true;
    }
    if (type === 'replay_paused' || type === 'replay_resumed' || type === 'replay_seeked' || type === 'replay_stopped') {
      const c = m as unknown as S['WsReplayControl'];
      this.position = c.position;
      // A seek keeps a paused replay paused (the server waits at the new position for a resume).
      if (type === 'replay_paused') this.state = 'paused';
      else if (type === 'replay_stopped') this.state = 'stopped';
      else if (type === 'replay_resumed' || this.state !== 'paused') this.state = 'running';
      if (type === 'replay_seeked') this.clear();
      return true;
    }
    if (type === 'warning') {
      this.warnings.push(String(m['message']));
      return true;
    }
    if (type === 'error') {
      this.error = String(m['message']);
      if (this.state === 'starting') this.state = 'error';
      return true;
    }
    return this.stream(m);
  }

  private started(m: S['WsReplayStarted']): boolean {
    this.id = m.replay_id;
    this.state = 'running';
    this.position = m.from;
    this.error = undefined;
    return true;
  }

  /** A replayed message of a live channel. */
  private stream(m: Record<string, unknown>): boolean {
    const type = m['type'];
    if (type === 'smart_money' || type === 'fade_finder') return this.alert(m as unknown as S['WsSmartMoney'] | S['WsFadeFinder']);
    if (type !== 'price_update' && type !== 'orderbook_update' && type !== 'arb' && type !== 'arb_expired') return false;
    this.messages++;
    if (typeof m['recv_ts'] === 'number') this.position = m['recv_ts'];
    if (type === 'price_update') {
      const p = m as unknown as S['WsPriceUpdate'];
      const key = `${p.source}:${p.market_id}`;
      this.prices.set(key, { market: p.market_id, source: p.source, yesBid: p.yes_bid, yesAsk: p.yes_ask, last: p.last_price, recvTs: p.recv_ts });
    } else if (type === 'orderbook_update') {
      const b = m as unknown as S['WsOrderbookUpdate'];
      this.books.set(`${b.source}:${b.market_id}`, b.yes);
    } else if (type === 'arb') {
      const a = m as unknown as S['WsArb'];
      if (a.opportunities.length === 0) this.arbs.delete(a.group_id);
      else
        this.arbs.set(a.group_id, {
          groupId: a.group_id,
          title: a.title,
          count: a.opportunities.length,
          bestRoi: Math.max(...a.opportunities.map((o) => o.roi)),
        });
    }
    return true;
  }

  /** An alert message: the replay's position is when it was raised (alerts carry no recv_ts). */
  private alert(a: S['WsSmartMoney'] | S['WsFadeFinder']): boolean {
    this.messages++;
    const createdAt = Date.parse(a.created_at);
    if (Number.isFinite(createdAt)) this.position = createdAt;
    const row: ReplayAlert = {
      id: a.alert_id,
      kind: a.alert_type,
      market: a.market_id,
      source: a.platform,
      title: a.title,
      side: a.side,
      outcome: a.outcome,
      price: a.price,
      amountUsd: a.amount_usd,
      reason: a.reason,
      createdAt,
    };
    this.alerts = [row, ...this.alerts.slice(0, REPLAY_ALERTS_SHOWN - 1)];
    return true;
  }

  /** A seek: what the page showed is from another moment; the snapshots that follow fill it again. */
  clear(): void {
    this.prices.clear();
    this.books.clear();
    this.arbs.clear();
    this.alerts = [];
  }

  /** A new replay from scratch. */
  reset(): void {
    this.clear();
    this.state = 'starting';
    this.id = undefined;
    this.position = undefined;
    this.messages = 0;
    this.error = undefined;
    this.completed = undefined;
    this.warnings.length = 0;
  }
}
