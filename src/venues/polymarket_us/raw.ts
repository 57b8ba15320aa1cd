import { z } from 'zod';

/**
 * Polymarket US (venue_g) wire formats.
 *
 * No recorded payloads exist (test/fixtures/polymarket_us/NOTES.md). The shapes below follow the
 * official clients (`Polymarket/polymarket-us-python`, `Polymarket/polymarket-us-typescript`:
 * `src/types/markets.ts`, `src/types/events.ts`, `src/websocket/types.ts`); where they are silent the
 * choice is ours and marked DESIGN.
 *
 * REST, public gateway (`https://gateway.polymarket.us`), offset pagination, markets addressed by slug:
 * - `GET /v1/markets?limit=&offset=&active=&closed=&slug=…` → `{"markets":[MarketDetail]}`, where
 *   MarketDetail = `{id:number, slug, title, outcome, description?, active, closed, liquidity?,
 *   volume?, eventSlug?, team?}`. DESIGN: we also read an optional `endDate` (ISO) and `category`.
 * - `GET /v1/events?limit=&offset=&active=&closed=` → `{"events":[Event]}`, Event = `{id:number,
 *   slug, title, startTime?, endTime?, active, closed, archived, featured, liquidity?, volume?,
 *   markets?, tags?:[{id,slug,label}], series?:{id,slug,title}}`. The catalog joins a market to its
 *   event by `eventSlug` for the event title and the closing time (`endTime`).
 * - `GET /v1/markets/{slug}/book` → MarketBook (the `marketData` object below, unwrapped).
 * - `GET /v1/markets/{slug}/settlement` → `{marketSlug, settlementPrice: Amount, settledAt}`.
 *
 * WebSocket `wss://api.polymarket.us/v1/ws/markets`. The real handshake is signed with Ed25519
 * (headers X-PM-Access-Key, X-PM-Timestamp, X-PM-Signature over timestamp + method + path): NOT
 * implemented here, so against the real venue the stream needs credentials we do not handle.
 * - client: `{"subscribe":{"requestId":"…","subscriptionType":"SUBSCRIPTION_TYPE_MARKET_DATA",
 *   "marketSlugs":[…]}}` (at most 100 slugs per subscription, so larger sets are split over several
 *   requestIds), `{"unsubscribe":{"requestId":"…"}}`.
 * - server: `{"requestId","subscriptionType":"SUBSCRIPTION_TYPE_MARKET_DATA","marketData":{marketSlug,
 *   bids:[{px:{value:"0.48",currency:"USD"},qty:"100"}], offers:[…], state, stats?:{lastTradePx?,
 *   sharesTraded?, openInterest?, highPx?, lowPx?}, transactTime?}}` — a FULL book every time;
 *   `marketDataLite` (best bid/ask, last), `trade`, `{"heartbeat":{}}`, `{"requestId"?,"error":"…"}`.
 *   DESIGN: `transactTime` is an RFC 3339 string (protobuf Timestamp JSON).
 *
 * The book is YES-only (registry `yesOnlyBook`): bids are YES bids, offers YES asks; the NO side
 * is the complement. Each market is one outcome (`outcome`: a team, a candidate).
 */

export type MarketState =
  | 'MARKET_STATE_OPEN'
  | 'MARKET_STATE_PREOPEN'
  | 'MARKET_STATE_SUSPENDED'
  | 'MARKET_STATE_HALTED'
  | 'MARKET_STATE_EXPIRED'
  | 'MARKET_STATE_TERMINATED'
  | 'MARKET_STATE_MATCH_AND_CLOSE_AUCTION';

export const MARKET_STATES: readonly MarketState[] = [
  'MARKET_STATE_OPEN',
  'MARKET_STATE_PREOPEN',
  'MARKET_STATE_SUSPENDED',
  'MARKET_STATE_HALTED',
  'MARKET_STATE_EXPIRED',
  'MARKET_STATE_TERMINATED',
  'MARKET_STATE_MATCH_AND_CLOSE_AUCTION',
];

export const SUBSCRIPTION_MARKET_DATA = 'SUBSCRIPTION_TYPE_MARKET_DATA';
export const SUBSCRIPTION_MARKET_DATA_LITE = 'SUBSCRIPTION_TYPE_MARKET_DATA_LITE';
export const SUBSCRIPTION_TRADE = 'SUBSCRIPTION_TYPE_TRADE';
/** Slugs per subscription request. */
export const WS_MAX_SLUGS_PER_SUBSCRIPTION = 100;
/** The markets WebSocket path on the API host. */
export const WS_MARKETS_PATH = '/v1/ws/markets';

export interface Amount {
  readonly value: string;
  readonly currency?: string;
}

export interface WsLevel {
  readonly px: Amount;
  readonly qty: string;
}

export interface MarketStats {
  readonly lastTradePx?: Amount;
  readonly sharesTraded?: string;
  readonly openInterest?: string;
  readonly highPx?: Amount;
  readonly lowPx?: Amount;
}

/** The full book of one market. */
export interface MarketBook {
  readonly marketSlug: string;
  readonly bids: readonly WsLevel[];
  readonly offers: readonly WsLevel[];
  readonly state: string;
  readonly stats?: MarketStats;
  readonly transactTime?: string;
}

export interface WsMarketData {
  readonly requestId?: string;
  readonly subscriptionType?: string;
  readonly marketData: MarketBook;
}

export interface WsMarketDataLite {
  readonly requestId?: string;
  readonly subscriptionType?: string;
  readonly marketDataLite: { readonly marketSlug: string; readonly bestBid?: Amount; readonly bestAsk?: Amount; readonly lastTradePx?: Amount };
}

export interface WsSubscribe {
  readonly subscribe: { readonly requestId: string; readonly subscriptionType: string; readonly marketSlugs?: readonly string[] };
}

export interface WsUnsubscribe {
  readonly unsubscribe: { readonly requestId: string };
}

// ---------------------------------------------------------------------------------------------
// Guards (hot path). Shape and primitive types only; values are the mapper's.
// ---------------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isStr = (v: unknown): v is string => typeof v === 'string';
const optStr = (v: unknown): boolean => v === undefined || typeof v === 'string';

export function isAmount(v: unknown): v is Amount {
  return isObject(v) && isStr(v['value']) && optStr(v['currency']);
}
const optAmount = (v: unknown): boolean => v === undefined || isAmount(v);

function isLevels(v: unknown): v is WsLevel[] {
  if (!Array.isArray(v)) return false;
  for (const l of v) if (!isObject(l) || !isAmount(l['px']) || !isStr(l['qty'])) return false;
  return true;
}

function isStats(v: unknown): boolean {
  return (
    v === undefined ||
    (isObject(v) && optAmount(v['lastTradePx']) && optStr(v['sharesTraded']) && optStr(v['openInterest']) && optAmount(v['highPx']) && optAmount(v['lowPx']))
  );
}

export function isMarketBook(v: unknown): v is MarketBook {
  return (
    isObject(v) &&
    isStr(v['marketSlug']) &&
    isLevels(v['bids']) &&
    isLevels(v['offers']) &&
    isStr(v['state']) &&
    isStats(v['stats']) &&
    optStr(v['transactTime'])
  );
}

export function isMarketDataLite(v: unknown): v is WsMarketDataLite['marketDataLite'] {
  return isObject(v) && isStr(v['marketSlug']) && optAmount(v['bestBid']) && optAmount(v['bestAsk']) && optAmount(v['lastTradePx']);
}

// ---------------------------------------------------------------------------------------------
// REST (zod)
// ---------------------------------------------------------------------------------------------

const amountSchema = z.object({ value: z.string(), currency: z.string().optional() });
const levelSchema = z.object({ px: amountSchema, qty: z.string() });

export const usMarketSchema = z.looseObject({
  id: z.number().int(),
  slug: z.string().min(1),
  title: z.string(),
  outcome: z.string().nullish(),
  description: z.string().nullish(),
  active: z.boolean(),
  closed: z.boolean(),
  liquidity: z.number().nullish(),
  volume: z.number().nullish(),
  eventSlug: z.string().nullish(),
  /** DESIGN: not in the official types; read when present. */
  endDate: z.string().nullish(),
  category: z.string().nullish(),
});
export type UsMarket = z.infer<typeof usMarketSchema>;

const usTagSchema = z.looseObject({ id: z.number().nullish(), slug: z.string().nullish(), label: z.string().nullish() });

export const usEventSchema = z.looseObject({
  id: z.number().int(),
  slug: z.string(),
  title: z.string(),
  description: z.string().nullish(),
  startTime: z.string().nullish(),
  endTime: z.string().nullish(),
  active: z.boolean(),
  closed: z.boolean(),
  archived: z.boolean().nullish(),
  featured: z.boolean().nullish(),
  liquidity: z.number().nullish(),
  volume: z.number().nullish(),
  markets: z.array(usMarketSchema.partial({ eventSlug: true })).nullish(),
  tags: z.array(usTagSchema).nullish(),
  series: z.looseObject({ id: z.number().nullish(), slug: z.string().nullish(), title: z.string().nullish() }).nullish(),
});
export type UsEvent = z.infer<typeof usEventSchema>;

export const usMarketsResponseSchema = z.looseObject({ markets: z.array(usMarketSchema) });
export const usEventsResponseSchema = z.looseObject({ events: z.array(usEventSchema) });

export const usMarketBookSchema = z.looseObject({
  marketSlug: z.string(),
  bids: z.array(levelSchema),
  offers: z.array(levelSchema),
  state: z.string(),
  stats: z
    .looseObject({
      lastTradePx: amountSchema.optional(),
      sharesTraded: z.string().optional(),
      openInterest: z.string().optional(),
      highPx: amountSchema.optional(),
      lowPx: amountSchema.optional(),
    })
    .optional(),
  transactTime: z.string().optional(),
});

export const usSettlementSchema = z.looseObject({ marketSlug: z.string(), settlementPrice: amountSchema, settledAt: z.string() });
