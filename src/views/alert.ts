import { toCents } from '../core/price.js';
import type { Alert } from '../signals/alerts.js';

/** The alert record of the API (spec 2.14: the record's fields are ours to define). */
export function alertJson(slug: string, a: Alert, title: string | null): Record<string, unknown> {
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
