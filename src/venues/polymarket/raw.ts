import { z } from 'zod';

/**
 * Polymarket wire formats: the CLOB market channel WebSocket
 * (`wss://ws-subscriptions-clob.polymarket.com/ws/market`), CLOB REST (`https://clob.polymarket.com`),
 * Gamma REST (`https://gamma-api.polymarket.com`) and the data-api (`https://data-api.polymarket.com`).
 *
 * The WebSocket frames get hand-written type guards (hot path, STYLE.md rule 5); the REST bodies get
 * zod schemas. Every shape here is taken from test/fixtures/polymarket/ (captures and the docs'
 * examples) and the docs' price_change migration guide (the legacy `changes[]` format, retired on
 * 2025-09-15 but still found in recorded data).
 *
 * Facts the guards and mappers rely on:
 * - A frame is one object or a JSON ARRAY of objects (the initial dump after subscribing).
 * - Prices are decimal dollar strings, sometimes without the leading zero (".48"); sizes are
 *   decimal strings; timestamps are ms-since-epoch strings.
 * - `book` levels come in no guaranteed order: captures list bids ascending and asks descending
 *   (best last), the docs example lists both ascending.
 * - Each outcome token (asset) has its own book; the NO token's book mirrors the YES token's.
 */

// ---------------------------------------------------------------------------------------------
// WebSocket: client → server
// ---------------------------------------------------------------------------------------------

/** The first message on a market-channel connection. */
export interface WsSubscribe {
  readonly assets_ids: readonly string[];
  readonly type: 'market';
  /** Enables `best_bid_ask`, `new_market` and `market_resolved`. */
  readonly custom_feature_enabled?: boolean;
  /** Whether to send `book` snapshots on subscribe (default true). */
  readonly initial_dump?: boolean;
}

/** Adds or removes assets on an open connection. */
export interface WsSubscriptionUpdate {
  readonly assets_ids: readonly string[];
  readonly operation: 'subscribe' | 'unsubscribe';
  readonly custom_feature_enabled?: boolean;
}

/** The keep-alive the server expects as a TEXT frame every ~10 s; it answers with the text `PONG`. */
export const WS_PING = 'PING';
export const WS_PONG = 'PONG';

/** Documented limit of assets per market-channel connection; larger sets are sharded. */
export const WS_MAX_ASSETS_PER_CONNECTION = 500;

// ---------------------------------------------------------------------------------------------
// WebSocket: server → client
// ---------------------------------------------------------------------------------------------

export interface WsLevel {
  readonly price: string;
  readonly size: string;
}

/** Full book of one asset (on subscribe, and after trades). */
export interface WsBook {
  readonly event_type: 'book';
  readonly asset_id: string;
  /** Condition id. */
  readonly market: string;
  readonly bids: readonly WsLevel[];
  readonly asks: readonly WsLevel[];
  readonly timestamp?: string | number;
  readonly hash?: string;
  readonly tick_size?: string;
  /** May be "" when the asset never traded. */
  readonly last_trade_price?: string;
}

export interface WsPriceChangeEntry {
  readonly asset_id: string;
  readonly price: string;
  /** Absolute new size at `price`; "0" removes the level. */
  readonly size: string;
  /** BUY = bid side, SELL = ask side. */
  readonly side: 'BUY' | 'SELL';
  readonly hash?: string;
  readonly best_bid?: string;
  readonly best_ask?: string;
}

/** Level changes (format since 2025-09-15): one entry per asset and level, both tokens of a market. */
export interface WsPriceChange {
  readonly event_type: 'price_change';
  readonly market: string;
  readonly price_changes: readonly WsPriceChangeEntry[];
  readonly timestamp?: string | number;
}

export interface WsLegacyChange {
  readonly price: string;
  readonly side: 'BUY' | 'SELL';
  readonly size: string;
}

/** Level changes, format before 2025-09-15: one asset per frame, `asset_id` and `hash` at the root. */
export interface WsLegacyPriceChange {
  readonly event_type: 'price_change';
  readonly asset_id: string;
  readonly market: string;
  readonly changes: readonly WsLegacyChange[];
  readonly timestamp?: string | number;
  readonly hash?: string;
}

export interface WsTickSizeChange {
  readonly event_type: 'tick_size_change';
  readonly asset_id: string;
  readonly market: string;
  readonly old_tick_size: string;
  readonly new_tick_size: string;
  readonly timestamp?: string | number;
}

/** A trade on one asset (no trade id, no wallets). */
export interface WsLastTradePrice {
  readonly event_type: 'last_trade_price';
  readonly asset_id: string;
  readonly market: string;
  readonly price: string;
  readonly side: 'BUY' | 'SELL';
  readonly size: string;
  readonly fee_rate_bps?: string;
  readonly timestamp?: string | number;
  /** Not in the docs example; taken when a server sends it. */
  readonly transaction_hash?: string;
}

/** Top of book of one asset (custom feature). "0" bid / "1" ask mean an empty side. */
export interface WsBestBidAsk {
  readonly event_type: 'best_bid_ask';
  readonly asset_id: string;
  readonly market: string;
  readonly best_bid: string;
  readonly best_ask: string;
  readonly spread?: string;
  readonly timestamp?: string | number;
}

export interface WsEventMessage {
  readonly id?: string;
  readonly ticker?: string;
  readonly slug?: string;
  readonly title?: string;
  readonly description?: string;
}

/** A market was created (custom feature). `assets_ids` pair with `outcomes` by index. */
export interface WsNewMarket {
  readonly event_type: 'new_market';
  readonly id?: string;
  readonly question: string;
  readonly market: string;
  readonly slug?: string;
  readonly description?: string;
  readonly assets_ids: readonly string[];
  readonly outcomes: readonly string[];
  readonly event_message?: WsEventMessage;
  readonly timestamp?: string | number;
}

/** A market was resolved (custom feature). */
export interface WsMarketResolved extends Omit<WsNewMarket, 'event_type'> {
  readonly event_type: 'market_resolved';
  readonly winning_asset_id: string;
  readonly winning_outcome?: string;
}

export type WsMessage = WsBook | WsPriceChange | WsLegacyPriceChange | WsTickSizeChange | WsLastTradePrice | WsBestBidAsk | WsNewMarket | WsMarketResolved;

// ---------------------------------------------------------------------------------------------
// Guards. They check shape and primitive types only; value checks (a price inside [0, 1], a
// non-negative size) are the mapper's, so that it can say which kind of frame was malformed.
// ---------------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

/** A non-null, non-array object. */
export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isStr = (v: unknown): v is string => typeof v === 'string';
const optStr = (v: unknown): boolean => v === undefined || typeof v === 'string';
const optTs = (v: unknown): boolean => v === undefined || typeof v === 'string' || typeof v === 'number';
const isSide = (v: unknown): v is 'BUY' | 'SELL' => v === 'BUY' || v === 'SELL';

function isLevels(v: unknown): v is WsLevel[] {
  if (!Array.isArray(v)) return false;
  for (const l of v) if (!isObject(l) || !isStr(l['price']) || !isStr(l['size'])) return false;
  return true;
}

function isStrArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every(isStr);
}

export function isWsBook(m: Obj): m is Obj & WsBook {
  return isStr(m['asset_id']) && isStr(m['market']) && isLevels(m['bids']) && isLevels(m['asks']) && optTs(m['timestamp']) && optStr(m['last_trade_price']);
}

export function isWsPriceChange(m: Obj): m is Obj & WsPriceChange {
  const pcs = m['price_changes'];
  if (!isStr(m['market']) || !Array.isArray(pcs) || !optTs(m['timestamp'])) return false;
  for (const c of pcs) {
    if (!isObject(c) || !isStr(c['asset_id']) || !isStr(c['price']) || !isStr(c['size']) || !isSide(c['side'])) return false;
    if (!optStr(c['best_bid']) || !optStr(c['best_ask'])) return false;
  }
  return true;
}

export function isWsLegacyPriceChange(m: Obj): m is Obj & WsLegacyPriceChange {
  const cs = m['changes'];
  if (!isStr(m['asset_id']) || !isStr(m['market']) || !Array.isArray(cs) || !optTs(m['timestamp'])) return false;
  for (const c of cs) if (!isObject(c) || !isStr(c['price']) || !isStr(c['size']) || !isSide(c['side'])) return false;
  return true;
}

export function isWsTickSizeChange(m: Obj): m is Obj & WsTickSizeChange {
  return isStr(m['asset_id']) && isStr(m['market']) && isStr(m['old_tick_size']) && isStr(m['new_tick_size']) && optTs(m['timestamp']);
}

export function isWsLastTradePrice(m: Obj): m is Obj & WsLastTradePrice {
  return (
    isStr(m['asset_id']) &&
    isStr(m['market']) &&
    isStr(m['price']) &&
    isStr(m['size']) &&
    isSide(m['side']) &&
    optTs(m['timestamp']) &&
    optStr(m['transaction_hash'])
  );
}

export function isWsBestBidAsk(m: Obj): m is Obj & WsBestBidAsk {
  return isStr(m['asset_id']) && isStr(m['market']) && isStr(m['best_bid']) && isStr(m['best_ask']) && optTs(m['timestamp']);
}

function isEventMessage(v: unknown): boolean {
  return v === undefined || (isObject(v) && optStr(v['id']) && optStr(v['slug']) && optStr(v['title']));
}

export function isWsNewMarket(m: Obj): m is Obj & WsNewMarket {
  return (
    isStr(m['market']) &&
    isStr(m['question']) &&
    isStrArray(m['assets_ids']) &&
    isStrArray(m['outcomes']) &&
    optStr(m['id']) &&
    optStr(m['slug']) &&
    isEventMessage(m['event_message']) &&
    optTs(m['timestamp'])
  );
}

export function isWsMarketResolved(m: Obj): m is Obj & WsMarketResolved {
  return isWsNewMarket(m) && isStr(m['winning_asset_id']) && optStr(m['winning_outcome']);
}

// ---------------------------------------------------------------------------------------------
// REST (zod). Loose objects: the venue adds fields all the time; we validate what we read.
// ---------------------------------------------------------------------------------------------

/** Gamma encodes some arrays as JSON inside a string: `"[\"Yes\", \"No\"]"`. */
const jsonStringArray = z.string().transform((s, ctx) => {
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'not a JSON-encoded array' });
    return z.NEVER;
  }
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
    ctx.addIssue({ code: 'custom', message: 'not a JSON-encoded array of strings' });
    return z.NEVER;
  }
  return v as string[];
});

const numOrStr = z.union([z.number(), z.string()]);

export const gammaTagSchema = z.looseObject({
  id: z.string().nullish(),
  label: z.string().nullish(),
  slug: z.string().nullish(),
});

export const gammaSeriesSchema = z.looseObject({
  id: z.string().nullish(),
  slug: z.string().nullish(),
  title: z.string().nullish(),
});

/** An event as nested inside a Gamma market (`markets[].events[]`): no markets of its own. */
export const gammaEventRefSchema = z.looseObject({
  id: z.string(),
  slug: z.string().nullish(),
  ticker: z.string().nullish(),
  title: z.string().nullish(),
  category: z.string().nullish(),
  endDate: z.string().nullish(),
  active: z.boolean().nullish(),
  closed: z.boolean().nullish(),
  tags: z.array(gammaTagSchema).nullish(),
  series: z.array(gammaSeriesSchema).nullish(),
});
export type GammaEventRef = z.infer<typeof gammaEventRefSchema>;

/** One Gamma market (`GET /markets`, and nested in `GET /events`). */
export const gammaMarketSchema = z.looseObject({
  id: z.string(),
  question: z.string(),
  conditionId: z.string(),
  slug: z.string().nullish(),
  questionID: z.string().nullish(),
  endDate: z.string().nullish(),
  startDate: z.string().nullish(),
  outcomes: jsonStringArray.nullish(),
  outcomePrices: jsonStringArray.nullish(),
  clobTokenIds: jsonStringArray.nullish(),
  volume: numOrStr.nullish(),
  volumeNum: z.number().nullish(),
  liquidity: numOrStr.nullish(),
  liquidityNum: z.number().nullish(),
  active: z.boolean().nullish(),
  closed: z.boolean().nullish(),
  archived: z.boolean().nullish(),
  acceptingOrders: z.boolean().nullish(),
  acceptingOrdersTimestamp: z.string().nullish(),
  enableOrderBook: z.boolean().nullish(),
  negRisk: z.boolean().nullish(),
  orderPriceMinTickSize: z.number().nullish(),
  groupItemTitle: z.string().nullish(),
  category: z.string().nullish(),
  umaResolutionStatus: z.string().nullish(),
  tags: z.array(gammaTagSchema).nullish(),
  events: z.array(gammaEventRefSchema).nullish(),
});
export type GammaMarket = z.infer<typeof gammaMarketSchema>;

/** One Gamma event (`GET /events`), with its markets. */
export const gammaEventSchema = gammaEventRefSchema.extend({
  markets: z.array(gammaMarketSchema).nullish(),
  liquidity: numOrStr.nullish(),
  volume: numOrStr.nullish(),
  negRisk: z.boolean().nullish(),
});
export type GammaEvent = z.infer<typeof gammaEventSchema>;

export const gammaMarketsResponseSchema = z.array(gammaMarketSchema);
export const gammaEventsResponseSchema = z.array(gammaEventSchema);

const restLevel = z.object({ price: z.string(), size: z.string() });

/** CLOB `GET /book?token_id=`. */
export const clobBookSchema = z.looseObject({
  market: z.string(),
  asset_id: z.string(),
  timestamp: z.string().regex(/^\d+$/),
  hash: z.string().nullish(),
  bids: z.array(restLevel),
  asks: z.array(restLevel),
  min_order_size: z.string().nullish(),
  tick_size: z.string().nullish(),
  neg_risk: z.boolean().nullish(),
  last_trade_price: z.string().nullish(),
});
export type ClobBook = z.infer<typeof clobBookSchema>;

/** One data-api `GET /trades` item. Numbers on this API are JSON numbers; `timestamp` is seconds. */
export const dataTradeSchema = z.looseObject({
  proxyWallet: z.string(),
  side: z.enum(['BUY', 'SELL']),
  asset: z.string(),
  conditionId: z.string(),
  size: z.number().nonnegative(),
  price: z.number().min(0).max(1),
  timestamp: z.number().int().nonnegative(),
  title: z.string().nullish(),
  slug: z.string().nullish(),
  icon: z.string().nullish(),
  eventSlug: z.string().nullish(),
  outcome: z.string().nullish(),
  outcomeIndex: z.number().int().min(0).nullish(),
  name: z.string().nullish(),
  pseudonym: z.string().nullish(),
  bio: z.string().nullish(),
  profileImage: z.string().nullish(),
  profileImageOptimized: z.string().nullish(),
  transactionHash: z.string(),
});
export type DataTrade = z.infer<typeof dataTradeSchema>;

export const dataTradesResponseSchema = z.array(dataTradeSchema);
