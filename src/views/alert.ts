import { toCents } from '../core/price.js';
import type { Alert, AlertType } from '../signals/alerts.js';
import type { EngineState } from '../state/engine.js';
import { tickerName } from './market.js';

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
  /** The wallet's realized PnL over all its positions when the alert was raised, USD; null when unknown. */
  readonly lifetime_pnl: number | null;
  /** = lifetime_pnl (the name clients of the hosted API read on smart-money alerts). */
  readonly smart_lifetime_pnl: number | null;
}

/** The alert record of REST, the WebSocket alert channels and webhooks. */
export function alertJson(slug: string, a: Alert, title: string | null): AlertRecord {
  const pnl = a.walletPnl === undefined || a.walletPnl === null ? null : Math.round(a.walletPnl / 100) / 100;
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
    lifetime_pnl: pnl,
    smart_lifetime_pnl: pnl,
  };
}

/** One side of a fade signal in the hosted API's fade_finder_update (`data.data.profitable_wallet` / `losing_wallet`). */
export interface FadeWallet {
  /** The wallet's address; null where the trade names none on this side. */
  readonly userAddr: string | null;
  /** Its realized PnL over all positions (USD) when the ledger knows it, else null. */
  readonly pnl_to_date: number | null;
  readonly outcome: 'YES' | 'NO';
  readonly side: 'BUY' | 'SELL';
  /** The trade's own price of `outcome`, dollars 0 to 1. */
  readonly price: number;
  /** USD of the trade. */
  readonly amount: number;
}

/** The fade_finder_update message of the hosted dialect: its top-level fields and its `data`. */
export interface FadeFinderUpdate {
  readonly body: Readonly<Record<string, unknown>>;
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * A fade alert in the shape clients of the hosted API read on the fade_finder channel
 * (`type: "fade_finder_update"`, README "Clients of the hosted API"). The hosted feed pairs a
 * profitable and a losing wallet; crossbook's fade alert is one trade by a reliably wrong wallet,
 * so `losing_wallet` is that wallet and its trade, and `profitable_wallet` the other side of the
 * same trade: a SELL of the outcome the wallet bought, at the trade's own price (what fading it
 * means; a client that turns a SELL into a BUY of the other outcome at 1 − price gets the trade to
 * make). Its address is not known (null). `market_slug` is the venue's key of the market
 * (ticker_name: the slug on venue_b), the market id when the catalog does not hold it.
 */
export function fadeFinderUpdate(r: AlertRecord, marketSlug: string, resolutionDate: string | null): FadeFinderUpdate {
  const outcome = r.outcome === 'yes' ? 'YES' : 'NO';
  // From the integer units behind the cents, so 57.3¢ reads 0.573 and not 0.5730000000000001.
  const price = Math.round(r.price * 100) / 10_000;
  const losing: FadeWallet = {
    userAddr: r.wallet,
    pnl_to_date: r.lifetime_pnl,
    outcome,
    side: r.side === 'buy' ? 'BUY' : 'SELL',
    price,
    amount: r.amount_usd,
  };
  const profitable: FadeWallet = { userAddr: null, pnl_to_date: null, outcome, side: losing.side === 'BUY' ? 'SELL' : 'BUY', price, amount: r.amount_usd };
  const body = { type: 'fade_finder_update', channel: 'fade_finder', alert_id: r.alert_id, market_slug: marketSlug, created_at: r.created_at };
  return {
    body,
    data: {
      type: 'fade_finder_update',
      version: 1,
      alert_id: r.alert_id,
      platform: r.platform,
      market_id: r.market_id,
      market_slug: marketSlug,
      title: r.title ?? marketSlug,
      created_at: r.created_at,
      snapshot: false,
      data: { marketSlug, resolution_date: resolutionDate, profitable_wallet: profitable, losing_wallet: losing },
    },
  };
}

/** `fadeFinderUpdate` of an alert as it is raised: its venue's slug, market title, key and close day from the state. */
export function hostedFadeUpdate(state: EngineState, a: Alert): FadeFinderUpdate {
  const v = state.venues.find((x) => x.label === a.venue);
  const m = state.catalog.get(a.venue, a.marketId);
  const r = alertJson(v?.slug ?? a.venue, a, m?.title ?? null);
  const closes = m?.closeTime !== undefined ? new Date(m.closeTime).toISOString().slice(0, 10) : null;
  return fadeFinderUpdate(r, v && m ? tickerName(v, m) : a.marketId, closes);
}
