import { toCents } from '../core/price.js';
import type { Alert, AlertType } from '../signals/alerts.js';

/** The alert record of the API (spec 2.14: the record's fields are ours to define). */
export interface AlertRecord {
  readonly alert_id: string;
  readonly alert_type: AlertType;
  readonly platform: string;
  readonly market_id: string;
  readonly token_id: string | null;
  readonly title: string | null;
  readonly outcome: Alert['outcome'];
  readonly side: Alert['action'];
  readonly wallet: string | null;
  /** Cents. */
  readonly price: number;
  readonly shares: number;
  readonly amount_usd: number;
  readonly trade_id: string;
  readonly executed_at: string;
  readonly created_at: string;
  /** created_at, unix seconds. */
  readonly timestamp: number;
  readonly reason: string;
  readonly figures: Alert['figures'];
}

/** The alert record of REST, the WebSocket alert channels and webhooks. */
export function alertJson(slug: string, a: Alert, title: string | null): AlertRecord {
  return {
    alert_id: String(a.seq),
    alert_type: a.type,
    platform: slug,
    market_id: a.marketId,
    token_id: a.token,
    title,
    outcome: a.outcome,
    side: a.action,
    wallet: a.wallet,
    price: toCents(a.price),
    shares: a.size,
    amount_usd: Math.round(a.notional / 100) / 100,
    trade_id: a.tradeId,
    executed_at: new Date(a.tradeTimestamp).toISOString(),
    created_at: new Date(a.createdAt).toISOString(),
    timestamp: Math.floor(a.createdAt / 1000),
    reason: a.reason,
    figures: a.figures,
  };
}
