import { z } from 'zod';

/**
 * The Kalshi Trade API v2 as crossbook speaks it (venue_a by default).
 *
 * WebSocket `wss://…/trade-api/ws/v2` (AsyncAPI 2.0.0, see test/fixtures/kalshi/ and SOURCES.md):
 * every frame is `{type, sid?, seq?, id?, msg?}`. `sid` names a subscription (one per channel per
 * subscribe command); `seq` counts every frame of that sid that carries one, acks included (`ok`
 * for update_subscription and `unsubscribed` use up a seq, `subscribed` does not). Channels:
 * `orderbook_delta` (an `orderbook_snapshot` per market, then RELATIVE `orderbook_delta`s),
 * `ticker` (no seq), `trade`, `market_lifecycle_v2` (which also carries `event_lifecycle` and
 * `event_fee_update`). Books are YES bids (`yes`) and NO bids (`no`), prices in dollars
 * ("0.0800", sub-penny "0.9190"), counts as fixed-point strings ("300.00"). Older frames carry
 * integer cents beside the dollar strings (`price`, `yes_bid`, `yes`), which we accept as a
 * fallback.
 *
 * The WebSocket is the hot path, so frames are checked with the hand-written guards below (no zod
 * per frame). The zod schemas of the frames (`ws*Schema`) exist for tests and the simulator's
 * tests, which run them over the recorded fixtures and over what the simulator sends.
 *
 * REST `https://…/trade-api/v2` is low-rate and validated with zod: `GET /markets` (cursor pages),
 * `GET /events` and `GET /events/{ticker}?with_nested_markets=true`, `GET /series`,
 * `GET /markets/orderbooks?tickers=`, `GET /exchange/status`.
 */

// ---- small guards ----------------------------------------------------------------------------

export type Obj = Record<string, unknown>;

export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isStr = (v: unknown): v is string => typeof v === 'string';
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const optStr = (o: Obj, k: string): boolean => o[k] === undefined || o[k] === null || isStr(o[k]);
const optNum = (o: Obj, k: string): boolean => o[k] === undefined || o[k] === null || isNum(o[k]);
const optBool = (o: Obj, k: string): boolean => o[k] === undefined || o[k] === null || typeof o[k] === 'boolean';

// ---- WebSocket frames --------------------------------------------------------------------------

/** Channels we subscribe to (public market data). */
export const KALSHI_CHANNELS = ['orderbook_delta', 'ticker', 'trade', 'market_lifecycle_v2'] as const;
export type KalshiChannel = (typeof KALSHI_CHANNELS)[number];

/** Any frame: a `type` string and an envelope whose fields are checked where they are used. */
export interface WsFrame {
  readonly type: string;
  readonly sid?: unknown;
  readonly seq?: unknown;
  readonly id?: unknown;
  readonly msg?: unknown;
}

export function isWsFrame(v: unknown): v is WsFrame {
  return isObject(v) && isStr(v['type']);
}

/** `sid` and `seq` of a frame when both are integers (the frame then takes part in seq checking). */
export function sequenced(f: WsFrame): { sid: number; seq: number } | undefined {
  return isInt(f.sid) && isInt(f.seq) ? { sid: f.sid, seq: f.seq } : undefined;
}

export interface WsSubscriptionInfo {
  readonly channel: string;
  readonly sid: number;
}

const isSubInfo = (v: unknown): v is WsSubscriptionInfo => isObject(v) && isStr(v['channel']) && isInt(v['sid']);

/** `{"id":1,"type":"subscribed","msg":{"channel":"orderbook_delta","sid":1}}` — no seq. */
export interface WsSubscribed extends WsFrame {
  readonly type: 'subscribed';
  readonly msg: WsSubscriptionInfo;
}

export function isWsSubscribed(f: WsFrame): f is WsSubscribed {
  return f.type === 'subscribed' && isSubInfo(f.msg);
}

/**
 * `ok`: the ack of update_subscription (`sid`, `seq`, `msg.market_tickers`) or the answer to
 * list_subscriptions (`msg` = [{channel, sid}], no sid/seq). Some servers name the latter
 * `list_subscriptions`; both are accepted.
 */
export interface WsOk extends WsFrame {
  readonly type: 'ok' | 'list_subscriptions';
  readonly msg?: { readonly market_tickers?: readonly string[] } | readonly WsSubscriptionInfo[];
}

export function isWsOk(f: WsFrame): f is WsOk {
  if (f.type !== 'ok' && f.type !== 'list_subscriptions') return false;
  if (f.msg === undefined || f.msg === null) return true;
  if (Array.isArray(f.msg)) return f.msg.every(isSubInfo);
  if (!isObject(f.msg)) return false;
  const t = f.msg['market_tickers'];
  return t === undefined || (Array.isArray(t) && t.every(isStr));
}

/** `{"id":102,"sid":2,"seq":7,"type":"unsubscribed"}` — uses up a seq of the sid it ends. */
export interface WsUnsubscribed extends WsFrame {
  readonly type: 'unsubscribed';
  readonly sid: number;
}

export function isWsUnsubscribed(f: WsFrame): f is WsUnsubscribed {
  return f.type === 'unsubscribed' && isInt(f.sid);
}

/** `{"id":3,"type":"error","msg":{"code":8,"msg":"Unknown channel name"}}`. */
export interface WsError extends WsFrame {
  readonly type: 'error';
  readonly msg: { readonly code: number; readonly msg: string };
}

export function isWsError(f: WsFrame): f is WsError {
  return f.type === 'error' && isObject(f.msg) && isInt(f.msg['code']) && optStr(f.msg, 'msg');
}

/** A level as any wire version sends it: `["0.0800","300.00"]`, `["0.08",300]` or `[8,300]`. */
export type WsLevel = readonly [string | number, string | number];

const isLevel = (v: unknown): v is WsLevel => Array.isArray(v) && v.length === 2 && (isStr(v[0]) || isNum(v[0])) && (isStr(v[1]) || isNum(v[1]));
const optLevels = (o: Obj, k: string): boolean => o[k] === undefined || o[k] === null || (Array.isArray(o[k]) && (o[k] as unknown[]).every(isLevel));

export interface WsOrderbookSnapshotMsg {
  readonly market_ticker: string;
  /** Empty ("") on an empty book of an expired market (demo capture). */
  readonly market_id?: string;
  /** YES bids, `[price_dollars, count_fp]`; the key is absent when there are none. */
  readonly yes_dollars_fp?: readonly WsLevel[] | null;
  /** NO bids. */
  readonly no_dollars_fp?: readonly WsLevel[] | null;
  /** Legacy: `[price_dollars, count]`. */
  readonly yes_dollars?: readonly WsLevel[] | null;
  readonly no_dollars?: readonly WsLevel[] | null;
  /** Legacy: `[price_cents, count]`. */
  readonly yes?: readonly WsLevel[] | null;
  readonly no?: readonly WsLevel[] | null;
}

export interface WsOrderbookSnapshot extends WsFrame {
  readonly type: 'orderbook_snapshot';
  readonly sid: number;
  readonly seq: number;
  readonly msg: WsOrderbookSnapshotMsg;
}

export function isWsOrderbookSnapshot(f: WsFrame): f is WsOrderbookSnapshot {
  if (f.type !== 'orderbook_snapshot' || !isInt(f.sid) || !isInt(f.seq) || !isObject(f.msg)) return false;
  const m = f.msg;
  return (
    isStr(m['market_ticker']) &&
    m['market_ticker'].length > 0 &&
    optStr(m, 'market_id') &&
    optLevels(m, 'yes_dollars_fp') &&
    optLevels(m, 'no_dollars_fp') &&
    optLevels(m, 'yes_dollars') &&
    optLevels(m, 'no_dollars') &&
    optLevels(m, 'yes') &&
    optLevels(m, 'no')
  );
}

export interface WsOrderbookDeltaMsg {
  readonly market_ticker: string;
  readonly market_id?: string;
  readonly price_dollars?: string;
  /** Legacy integer cents. */
  readonly price?: number;
  /** Signed change of the resting count at that price ("-54.00"): RELATIVE, not the new size. */
  readonly delta_fp?: string;
  /** Legacy integer delta. */
  readonly delta?: number;
  readonly side: 'yes' | 'no';
  /** RFC 3339 (deprecated). */
  readonly ts?: string;
  readonly ts_ms?: number;
  readonly client_order_id?: string;
}

export interface WsOrderbookDelta extends WsFrame {
  readonly type: 'orderbook_delta';
  readonly sid: number;
  readonly seq: number;
  readonly msg: WsOrderbookDeltaMsg;
}

export function isWsOrderbookDelta(f: WsFrame): f is WsOrderbookDelta {
  if (f.type !== 'orderbook_delta' || !isInt(f.sid) || !isInt(f.seq) || !isObject(f.msg)) return false;
  const m = f.msg;
  return (
    isStr(m['market_ticker']) &&
    m['market_ticker'].length > 0 &&
    (m['side'] === 'yes' || m['side'] === 'no') &&
    (isStr(m['price_dollars']) || isInt(m['price'])) &&
    optStr(m, 'price_dollars') &&
    (isStr(m['delta_fp']) || isInt(m['delta'])) &&
    optStr(m, 'delta_fp') &&
    optStr(m, 'market_id') &&
    optStr(m, 'ts') &&
    optNum(m, 'ts_ms')
  );
}

/**
 * `ticker`: top of book, last price, volume and open interest of one market. No seq. Current
 * frames have `*_dollars` / `*_fp` strings; frames of the transition period also carry the legacy
 * integer-cent and integer-count fields (capture 2026-02-12), and an undocumented `Clock`.
 */
export interface WsTickerMsg {
  readonly market_ticker: string;
  readonly market_id?: string;
  readonly price_dollars?: string;
  readonly yes_bid_dollars?: string;
  readonly yes_ask_dollars?: string;
  readonly volume_fp?: string;
  readonly open_interest_fp?: string;
  readonly yes_bid_size_fp?: string;
  readonly yes_ask_size_fp?: string;
  readonly last_trade_size_fp?: string;
  readonly dollar_volume?: number;
  readonly dollar_open_interest?: number;
  readonly price?: number;
  readonly yes_bid?: number;
  readonly yes_ask?: number;
  readonly volume?: number;
  readonly open_interest?: number;
  /** Seconds (deprecated). */
  readonly ts?: number;
  readonly ts_ms?: number;
  readonly time?: string;
}

export interface WsTicker extends WsFrame {
  readonly type: 'ticker';
  readonly msg: WsTickerMsg;
}

const TICKER_STR = [
  'market_id',
  'price_dollars',
  'yes_bid_dollars',
  'yes_ask_dollars',
  'volume_fp',
  'open_interest_fp',
  'yes_bid_size_fp',
  'yes_ask_size_fp',
  'last_trade_size_fp',
  'time',
];
const TICKER_NUM = ['price', 'yes_bid', 'yes_ask', 'volume', 'open_interest', 'dollar_volume', 'dollar_open_interest', 'ts', 'ts_ms'];

export function isWsTicker(f: WsFrame): f is WsTicker {
  if (f.type !== 'ticker' || !isObject(f.msg)) return false;
  const m = f.msg;
  return isStr(m['market_ticker']) && m['market_ticker'].length > 0 && TICKER_STR.every((k) => optStr(m, k)) && TICKER_NUM.every((k) => optNum(m, k));
}

/**
 * Legacy `ticker_v2` (no longer in the AsyncAPI channel list): sparse updates, `price` (last, in
 * cents) beside `price_dollars`, and volume / open interest as DELTAS.
 */
export interface WsTickerV2Msg {
  readonly market_ticker: string;
  readonly market_id?: string;
  readonly price?: number;
  readonly price_dollars?: string;
  readonly yes_bid?: number;
  readonly yes_ask?: number;
  readonly yes_bid_dollars?: string;
  readonly yes_ask_dollars?: string;
  readonly volume_delta?: number;
  readonly volume_delta_fp?: string;
  readonly open_interest_delta?: number;
  readonly open_interest_delta_fp?: string;
  readonly dollar_volume_delta?: number;
  readonly dollar_open_interest_delta?: number;
  readonly ts?: number;
}

export interface WsTickerV2 extends WsFrame {
  readonly type: 'ticker_v2';
  readonly msg: WsTickerV2Msg;
}

const V2_STR = ['market_id', 'price_dollars', 'yes_bid_dollars', 'yes_ask_dollars', 'volume_delta_fp', 'open_interest_delta_fp'];
const V2_NUM = ['price', 'yes_bid', 'yes_ask', 'volume_delta', 'open_interest_delta', 'dollar_volume_delta', 'dollar_open_interest_delta', 'ts'];

export function isWsTickerV2(f: WsFrame): f is WsTickerV2 {
  if (f.type !== 'ticker_v2' || !isObject(f.msg)) return false;
  const m = f.msg;
  return isStr(m['market_ticker']) && m['market_ticker'].length > 0 && V2_STR.every((k) => optStr(m, k)) && V2_NUM.every((k) => optNum(m, k));
}

export interface WsTradeMsg {
  readonly trade_id: string;
  readonly market_ticker: string;
  readonly yes_price_dollars?: string;
  readonly no_price_dollars?: string;
  readonly count_fp?: string;
  /** Legacy integer cents / count. */
  readonly yes_price?: number;
  readonly no_price?: number;
  readonly count?: number;
  /** Deprecated: the outcome the taker bought. */
  readonly taker_side?: 'yes' | 'no';
  readonly taker_outcome_side?: 'yes' | 'no';
  /** 'bid' = taker_outcome_side yes, 'ask' = no. */
  readonly taker_book_side?: 'bid' | 'ask';
  readonly is_block_trade?: boolean;
  readonly ts?: number;
  readonly ts_ms?: number;
}

export interface WsTrade extends WsFrame {
  readonly type: 'trade';
  readonly msg: WsTradeMsg;
}

const optEnum = (o: Obj, k: string, values: readonly string[]): boolean => o[k] === undefined || o[k] === null || values.includes(o[k] as string);

export function isWsTrade(f: WsFrame): f is WsTrade {
  if (f.type !== 'trade' || !isObject(f.msg)) return false;
  const m = f.msg;
  return (
    isStr(m['trade_id']) &&
    isStr(m['market_ticker']) &&
    m['market_ticker'].length > 0 &&
    (isStr(m['yes_price_dollars']) || isInt(m['yes_price'])) &&
    (isStr(m['count_fp']) || isNum(m['count'])) &&
    ['yes_price_dollars', 'no_price_dollars', 'count_fp'].every((k) => optStr(m, k)) &&
    ['yes_price', 'no_price', 'count', 'ts', 'ts_ms'].every((k) => optNum(m, k)) &&
    optEnum(m, 'taker_side', ['yes', 'no']) &&
    optEnum(m, 'taker_outcome_side', ['yes', 'no']) &&
    optEnum(m, 'taker_book_side', ['bid', 'ask']) &&
    optBool(m, 'is_block_trade')
  );
}

/** `additional_metadata` of a `created` lifecycle frame. */
export interface WsLifecycleMetadata {
  readonly name?: string;
  readonly title?: string;
  readonly yes_sub_title?: string;
  readonly no_sub_title?: string;
  readonly rules_primary?: string;
  readonly rules_secondary?: string;
  readonly can_close_early?: boolean;
  readonly event_ticker?: string;
  readonly expected_expiration_ts?: number;
  readonly strike_type?: string;
  readonly floor_strike?: number;
  readonly cap_strike?: number;
}

/**
 * `market_lifecycle_v2` (also `multivariate_market_lifecycle`). `event_type`: created, activated,
 * deactivated, close_date_updated, determined, settled, price_level_structure_updated,
 * metadata_updated. Each carries only the keys of its kind (see the AsyncAPI notes).
 */
export interface WsMarketLifecycleMsg {
  readonly market_ticker: string;
  readonly event_type: string;
  readonly exchange_index?: number;
  readonly open_ts?: number;
  readonly close_ts?: number;
  readonly determination_ts?: number;
  readonly settled_ts?: number;
  readonly result?: string;
  /** Fixed-point dollars ("0.5000"). */
  readonly settlement_value?: string;
  readonly is_deactivated?: boolean;
  readonly additional_metadata?: WsLifecycleMetadata;
  readonly price_level_structure?: string;
  readonly price_ranges?: readonly { start: string; end: string; step: string }[];
  readonly yes_sub_title?: string;
  readonly strike_type?: string;
  readonly floor_strike?: number;
  readonly cap_strike?: number;
}

export interface WsMarketLifecycle extends WsFrame {
  readonly type: 'market_lifecycle_v2' | 'multivariate_market_lifecycle';
  readonly msg: WsMarketLifecycleMsg;
}

export function isWsMarketLifecycle(f: WsFrame): f is WsMarketLifecycle {
  if ((f.type !== 'market_lifecycle_v2' && f.type !== 'multivariate_market_lifecycle') || !isObject(f.msg)) return false;
  const m = f.msg;
  const meta = m['additional_metadata'];
  return (
    isStr(m['market_ticker']) &&
    m['market_ticker'].length > 0 &&
    isStr(m['event_type']) &&
    ['open_ts', 'close_ts', 'determination_ts', 'settled_ts', 'exchange_index', 'floor_strike', 'cap_strike'].every((k) => optNum(m, k)) &&
    ['result', 'price_level_structure', 'yes_sub_title', 'strike_type'].every((k) => optStr(m, k)) &&
    // settlement_value is documented as a dollar string; very old frames had integer cents.
    (m['settlement_value'] === undefined || m['settlement_value'] === null || isStr(m['settlement_value']) || isInt(m['settlement_value'])) &&
    optBool(m, 'is_deactivated') &&
    (meta === undefined ||
      meta === null ||
      (isObject(meta) &&
        ['name', 'title', 'yes_sub_title', 'no_sub_title', 'rules_primary', 'rules_secondary', 'event_ticker', 'strike_type'].every((k) => optStr(meta, k)) &&
        ['expected_expiration_ts', 'floor_strike', 'cap_strike'].every((k) => optNum(meta, k)) &&
        optBool(meta, 'can_close_early')))
  );
}

/** `event_lifecycle` (on the market_lifecycle_v2 channel): an event was created. */
export interface WsEventLifecycle extends WsFrame {
  readonly type: 'event_lifecycle';
  readonly msg: {
    readonly event_ticker: string;
    readonly title?: string;
    readonly subtitle?: string;
    readonly sub_title?: string;
    readonly collateral_return_type?: string;
    readonly series_ticker?: string;
    readonly exchange_index?: number;
    readonly strike_date?: number;
    readonly strike_period?: string;
  };
}

export function isWsEventLifecycle(f: WsFrame): f is WsEventLifecycle {
  if (f.type !== 'event_lifecycle' || !isObject(f.msg)) return false;
  const m = f.msg;
  return (
    isStr(m['event_ticker']) &&
    ['title', 'subtitle', 'sub_title', 'collateral_return_type', 'series_ticker', 'strike_period'].every((k) => optStr(m, k)) &&
    optNum(m, 'strike_date') &&
    optNum(m, 'exchange_index')
  );
}

/** `event_fee_update` (on the market_lifecycle_v2 channel): a fee override set (or cleared with nulls). */
export interface WsEventFeeUpdate extends WsFrame {
  readonly type: 'event_fee_update';
  readonly msg: { readonly event_ticker: string; readonly fee_type_override?: string | null; readonly fee_multiplier_override?: number | null };
}

export function isWsEventFeeUpdate(f: WsFrame): f is WsEventFeeUpdate {
  if (f.type !== 'event_fee_update' || !isObject(f.msg)) return false;
  const m = f.msg;
  return isStr(m['event_ticker']) && optStr(m, 'fee_type_override') && optNum(m, 'fee_multiplier_override');
}

// ---- client commands -------------------------------------------------------------------------

/** `subscribe`: `market_ticker` or `market_tickers`; market_lifecycle_v2 takes neither. */
export interface SubscribeCommand {
  readonly id: number;
  readonly cmd: 'subscribe';
  readonly params: {
    readonly channels: readonly string[];
    readonly market_ticker?: string;
    readonly market_tickers?: readonly string[];
    readonly send_initial_snapshot?: boolean;
  };
}

export interface UnsubscribeCommand {
  readonly id: number;
  readonly cmd: 'unsubscribe';
  readonly params: { readonly sids: readonly number[] };
}

/** `update_subscription`: exactly one of `sid` / `sids` (one element). */
export interface UpdateSubscriptionCommand {
  readonly id: number;
  readonly cmd: 'update_subscription';
  readonly params: {
    readonly sid?: number;
    readonly sids?: readonly number[];
    readonly market_tickers?: readonly string[];
    readonly market_ticker?: string;
    readonly action: 'add_markets' | 'delete_markets' | 'get_snapshot';
  };
}

export interface ListSubscriptionsCommand {
  readonly id: number;
  readonly cmd: 'list_subscriptions';
}

export type KalshiCommand = SubscribeCommand | UnsubscribeCommand | UpdateSubscriptionCommand | ListSubscriptionsCommand;

// ---- zod schemas of the frames (tests and simulator checks only; never per frame) ---------------

const zLevelFp = z.tuple([z.string(), z.string()]);
const zInt = z.number().int();

export const wsSubscribedSchema = z.object({ id: zInt.optional(), type: z.literal('subscribed'), msg: z.object({ channel: z.string(), sid: zInt }) });
export const wsOkSchema = z.object({
  id: zInt.optional(),
  type: z.literal('ok'),
  sid: zInt.optional(),
  seq: zInt.optional(),
  msg: z.union([z.object({ market_tickers: z.array(z.string()) }), z.array(z.object({ channel: z.string(), sid: zInt }))]).optional(),
});
export const wsUnsubscribedSchema = z.object({ id: zInt.optional(), type: z.literal('unsubscribed'), sid: zInt, seq: zInt });
export const wsErrorSchema = z.object({ id: zInt.optional(), type: z.literal('error'), msg: z.object({ code: zInt, msg: z.string() }) });
export const wsOrderbookSnapshotSchema = z.object({
  type: z.literal('orderbook_snapshot'),
  id: zInt.optional(),
  sid: zInt,
  seq: zInt,
  msg: z.object({
    market_ticker: z.string().min(1),
    market_id: z.string(),
    yes_dollars_fp: z.array(zLevelFp).optional(),
    no_dollars_fp: z.array(zLevelFp).optional(),
  }),
});
export const wsOrderbookDeltaSchema = z.object({
  type: z.literal('orderbook_delta'),
  sid: zInt,
  seq: zInt,
  msg: z.object({
    market_ticker: z.string().min(1),
    market_id: z.string(),
    price_dollars: z.string(),
    delta_fp: z.string(),
    side: z.enum(['yes', 'no']),
    client_order_id: z.string().optional(),
    ts: z.string().optional(),
    ts_ms: zInt.optional(),
  }),
});
export const wsTickerSchema = z.object({
  type: z.literal('ticker'),
  sid: zInt,
  seq: zInt.optional(),
  msg: z.object({
    market_id: z.string(),
    market_ticker: z.string().min(1),
    price_dollars: z.string(),
    yes_bid_dollars: z.string(),
    yes_ask_dollars: z.string(),
    volume_fp: z.string(),
    open_interest_fp: z.string(),
    dollar_volume: zInt,
    dollar_open_interest: zInt,
    yes_bid_size_fp: z.string().optional(),
    yes_ask_size_fp: z.string().optional(),
    last_trade_size_fp: z.string().optional(),
    ts: zInt,
    ts_ms: zInt.optional(),
    time: z.string().optional(),
    // Transition-period legacy fields (capture 2026-02-12).
    price: zInt.optional(),
    yes_bid: zInt.optional(),
    yes_ask: zInt.optional(),
    volume: zInt.optional(),
    open_interest: zInt.optional(),
    Clock: zInt.optional(),
  }),
});
export const wsTickerV2Schema = z.object({
  type: z.literal('ticker_v2'),
  sid: zInt,
  msg: z.object({
    market_ticker: z.string().min(1),
    market_id: z.string().optional(),
    price: zInt.optional(),
    price_dollars: z.string().optional(),
    volume_delta: zInt.optional(),
    volume_delta_fp: z.string().optional(),
    open_interest_delta: zInt.optional(),
    open_interest_delta_fp: z.string().optional(),
    dollar_volume_delta: zInt.optional(),
    dollar_open_interest_delta: zInt.optional(),
    ts: zInt,
  }),
});
export const wsTradeSchema = z.object({
  type: z.literal('trade'),
  sid: zInt,
  seq: zInt,
  msg: z.object({
    trade_id: z.string(),
    market_ticker: z.string().min(1),
    yes_price_dollars: z.string(),
    no_price_dollars: z.string(),
    count_fp: z.string(),
    taker_side: z.enum(['yes', 'no']),
    taker_outcome_side: z.enum(['yes', 'no']),
    taker_book_side: z.enum(['bid', 'ask']),
    is_block_trade: z.boolean(),
    ts: zInt,
    ts_ms: zInt,
  }),
});
const zPriceRange = z.object({ start: z.string(), end: z.string(), step: z.string() });
export const wsMarketLifecycleSchema = z.object({
  type: z.literal('market_lifecycle_v2'),
  sid: zInt,
  seq: zInt,
  msg: z.object({
    market_ticker: z.string().min(1),
    event_type: z.enum([
      'created',
      'activated',
      'deactivated',
      'close_date_updated',
      'determined',
      'settled',
      'price_level_structure_updated',
      'metadata_updated',
    ]),
    exchange_index: zInt.optional(),
    open_ts: zInt.optional(),
    close_ts: zInt.optional(),
    determination_ts: zInt.optional(),
    settled_ts: zInt.optional(),
    result: z.string().optional(),
    settlement_value: z.string().optional(),
    is_deactivated: z.boolean().optional(),
    additional_metadata: z
      .object({
        name: z.string(),
        title: z.string(),
        yes_sub_title: z.string(),
        no_sub_title: z.string(),
        rules_primary: z.string(),
        rules_secondary: z.string(),
        can_close_early: z.boolean(),
        event_ticker: z.string(),
        expected_expiration_ts: zInt,
        strike_type: z.string().optional(),
        floor_strike: z.number().optional(),
        cap_strike: z.number().optional(),
        custom_strike: z.record(z.string(), z.unknown()).optional(),
      })
      .optional(),
    price_level_structure: z.string().optional(),
    price_ranges: z.array(zPriceRange).optional(),
    yes_sub_title: z.string().optional(),
    strike_type: z.string().optional(),
    floor_strike: z.number().optional(),
    cap_strike: z.number().optional(),
  }),
});
export const wsEventLifecycleSchema = z.object({
  type: z.literal('event_lifecycle'),
  sid: zInt,
  seq: zInt,
  msg: z.object({
    event_ticker: z.string(),
    exchange_index: zInt.optional(),
    title: z.string(),
    subtitle: z.string().optional(),
    collateral_return_type: z.string().optional(),
    series_ticker: z.string(),
    strike_date: zInt.optional(),
    strike_period: z.string().optional(),
  }),
});
export const wsEventFeeUpdateSchema = z.object({
  type: z.literal('event_fee_update'),
  sid: zInt,
  seq: zInt,
  msg: z.object({ event_ticker: z.string(), fee_type_override: z.string().nullable(), fee_multiplier_override: z.number().nullable() }),
});

/** Every server frame we know, as one zod union (for tests). */
export const wsServerFrameSchema = z.union([
  wsSubscribedSchema,
  wsOkSchema,
  wsUnsubscribedSchema,
  wsErrorSchema,
  wsOrderbookSnapshotSchema,
  wsOrderbookDeltaSchema,
  wsTickerSchema,
  wsTickerV2Schema,
  wsTradeSchema,
  wsMarketLifecycleSchema,
  wsEventLifecycleSchema,
  wsEventFeeUpdateSchema,
]);

/** Client commands (the simulator validates what it receives with this). */
export const wsCommandSchema = z.discriminatedUnion('cmd', [
  z.object({
    id: zInt,
    cmd: z.literal('subscribe'),
    params: z.object({
      channels: z.array(z.string()),
      market_ticker: z.string().optional(),
      market_tickers: z.array(z.string()).optional(),
      market_id: z.string().optional(),
      market_ids: z.array(z.string()).optional(),
      send_initial_snapshot: z.boolean().optional(),
    }),
  }),
  z.object({ id: zInt, cmd: z.literal('unsubscribe'), params: z.object({ sids: z.array(zInt) }) }),
  z.object({
    id: zInt,
    cmd: z.literal('update_subscription'),
    params: z.object({
      sid: zInt.optional(),
      sids: z.array(zInt).optional(),
      market_ticker: z.string().optional(),
      market_tickers: z.array(z.string()).optional(),
      action: z.string().optional(),
    }),
  }),
  z.object({ id: zInt, cmd: z.literal('list_subscriptions') }),
]);

// ---- REST (zod) ---------------------------------------------------------------------------------

const optString = z.string().nullable().optional();
const optNumber = z.number().nullable().optional();

/** One element of `price_ranges`: the valid price band and its tick, dollars. */
export const kalshiPriceRangeSchema = zPriceRange;

/**
 * A market object of `GET /markets`, `GET /markets/{ticker}` and nested in events. Current objects
 * carry only `*_dollars` / `*_fp` fields; the legacy integer fields are accepted when present.
 * Timestamps are RFC 3339; Go's zero time ("0001-01-01T00:00:00Z") means unset.
 */
export const kalshiMarketSchema = z.object({
  ticker: z.string().min(1),
  event_ticker: z.string().min(1),
  /** Not in captured market objects; accepted when a server sends it. */
  series_ticker: optString,
  market_type: optString,
  title: optString,
  subtitle: optString,
  yes_sub_title: optString,
  no_sub_title: optString,
  status: z.string(),
  created_time: optString,
  open_time: optString,
  close_time: optString,
  updated_time: optString,
  expiration_time: optString,
  expected_expiration_time: optString,
  latest_expiration_time: optString,
  occurrence_datetime: optString,
  settlement_ts: optString,
  settlement_timer_seconds: optNumber,
  can_close_early: z.boolean().nullable().optional(),
  early_close_condition: optString,
  yes_bid_dollars: optString,
  yes_ask_dollars: optString,
  no_bid_dollars: optString,
  no_ask_dollars: optString,
  last_price_dollars: optString,
  previous_price_dollars: optString,
  previous_yes_bid_dollars: optString,
  previous_yes_ask_dollars: optString,
  liquidity_dollars: optString,
  notional_value_dollars: optString,
  yes_bid_size_fp: optString,
  yes_ask_size_fp: optString,
  volume_fp: optString,
  volume_24h_fp: optString,
  open_interest_fp: optString,
  // Legacy integer fields (cents / contracts).
  yes_bid: optNumber,
  yes_ask: optNumber,
  last_price: optNumber,
  volume: optNumber,
  open_interest: optNumber,
  result: optString,
  settlement_value_dollars: optString,
  settlement_value: optNumber,
  expiration_value: optString,
  rules_primary: optString,
  rules_secondary: optString,
  price_level_structure: optString,
  price_ranges: z.array(zPriceRange).nullable().optional(),
  exchange_index: optNumber,
  strike_type: optString,
  floor_strike: optNumber,
  cap_strike: optNumber,
  custom_strike: z.record(z.string(), z.unknown()).nullable().optional(),
  /** Set on multivariate (combo) markets. */
  mve_collection_ticker: optString,
  mve_selected_legs: z.array(z.unknown()).nullable().optional(),
  is_provisional: z.boolean().nullable().optional(),
  fee_waiver_expiration_time: optString,
});
export type KalshiMarket = z.infer<typeof kalshiMarketSchema>;

/** `GET /markets` page with its markets unvalidated (each is validated alone, see mappers). */
export const kalshiMarketsPageShellSchema = z.object({ cursor: z.string().nullable().optional(), markets: z.array(z.unknown()).nullable() });
/** `GET /markets` page, fully validated (tests). */
export const kalshiMarketsPageSchema = z.object({ cursor: z.string().nullable().optional(), markets: z.array(kalshiMarketSchema).nullable() });
export type KalshiMarketsPage = z.infer<typeof kalshiMarketsPageSchema>;

/** `GET /markets/{ticker}`. */
export const kalshiMarketResponseSchema = z.object({ market: kalshiMarketSchema });

const settlementSource = z.object({ name: z.string().optional(), url: z.string().optional() });

export const kalshiEventSchema = z.object({
  event_ticker: z.string().min(1),
  series_ticker: z.string(),
  title: z.string(),
  sub_title: optString,
  category: optString,
  mutually_exclusive: z.boolean().nullable().optional(),
  collateral_return_type: optString,
  strike_period: optString,
  strike_date: optString,
  exchange_index: optNumber,
  last_updated_ts: optString,
  available_on_brokers: z.boolean().nullable().optional(),
  settlement_sources: z.array(settlementSource).nullable().optional(),
  /** Only with `with_nested_markets=true`; validated market by market. */
  markets: z.array(z.unknown()).nullable().optional(),
});
export type KalshiEvent = z.infer<typeof kalshiEventSchema>;

/**
 * `GET /events/{event_ticker}`: `{event, markets}`. With `with_nested_markets=true` the markets are
 * inside `event.markets` and the top-level `markets` is `[]` (capture 2026-09-13).
 */
export const kalshiEventResponseSchema = z.object({ event: kalshiEventSchema, markets: z.array(z.unknown()).nullable().optional() });
export type KalshiEventResponse = z.infer<typeof kalshiEventResponseSchema>;

/** `GET /events` page. */
export const kalshiEventsPageSchema = z.object({ cursor: z.string().nullable().optional(), events: z.array(kalshiEventSchema).nullable() });
export type KalshiEventsPage = z.infer<typeof kalshiEventsPageSchema>;

export const kalshiSeriesSchema = z.object({
  ticker: z.string().min(1),
  title: z.string(),
  category: optString,
  tags: z.array(z.string()).nullable().optional(),
  frequency: optString,
  fee_type: optString,
  fee_multiplier: optNumber,
  settlement_sources: z.array(settlementSource).nullable().optional(),
  contract_url: optString,
  contract_terms_url: optString,
  additional_prohibitions: z.array(z.string()).nullable().optional(),
  exchange_index: optNumber,
  last_updated_ts: optString,
});
export type KalshiSeries = z.infer<typeof kalshiSeriesSchema>;

/** `GET /series` (the whole list; `series` is null when a filter matches nothing). */
export const kalshiSeriesListSchema = z.object({ series: z.array(kalshiSeriesSchema).nullable(), cursor: z.string().nullable().optional() });
export type KalshiSeriesList = z.infer<typeof kalshiSeriesListSchema>;

/** `[price_dollars, count_fp]`. REST books are bids only, sorted ASCENDING: the best bid is last. */
const restLevels = z
  .array(z.tuple([z.string(), z.string()]))
  .nullable()
  .optional();

export const kalshiOrderbookFpSchema = z.object({ yes_dollars: restLevels, no_dollars: restLevels });

/** `GET /markets/orderbooks?tickers=A,B`. */
export const kalshiOrderbooksSchema = z.object({
  orderbooks: z.array(z.object({ ticker: z.string().min(1), orderbook_fp: kalshiOrderbookFpSchema })).nullable(),
});
export type KalshiOrderbooks = z.infer<typeof kalshiOrderbooksSchema>;

/** `GET /markets/{ticker}/orderbook`. */
export const kalshiOrderbookResponseSchema = z.object({ orderbook_fp: kalshiOrderbookFpSchema });

export const kalshiExchangeStatusSchema = z.object({
  exchange_active: z.boolean(),
  trading_active: z.boolean(),
  exchange_estimated_resume_time: optString,
  intra_exchange_transfers_active: z.boolean().optional(),
  exchange_index_statuses: z
    .array(
      z.object({
        description: z.string(),
        exchange_active: z.boolean(),
        exchange_index: z.number().int(),
        trading_active: z.boolean(),
        intra_exchange_transfers_active: z.boolean().optional(),
      }),
    )
    .optional(),
});
export type KalshiExchangeStatus = z.infer<typeof kalshiExchangeStatusSchema>;

/** Error body of the REST API: `{"error":{"code":"…","message":"…"}}`. */
export const kalshiRestErrorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.string().optional(), service: z.string().optional() }),
});

/** The request status filter of `GET /markets` (single value per request). */
export const KALSHI_STATUS_FILTERS = ['unopened', 'open', 'closed', 'settled'] as const;
export type KalshiStatusFilter = (typeof KALSHI_STATUS_FILTERS)[number];
