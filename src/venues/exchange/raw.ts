import { z } from 'zod';

/**
 * # crossbook exchange protocol v1
 *
 * The venues behind this protocol (venue_e, venue_f, venue_h by default) publish no public API we
 * can copy, so crossbook defines one, modeled on the venues we do speak (Kalshi's per-market
 * `seq`, Polymarket's one book per outcome token, absolute L2 levels as decimal strings). A venue
 * gateway that speaks it can be pointed at by configuration like any other venue.
 *
 * ## Values
 * - Prices: decimal dollar strings in [0, 1], e.g. "0.4800" (never floats).
 * - Sizes: decimal strings of contracts, e.g. "120", "12.5".
 * - REST times: ISO 8601 UTC strings ("2026-11-22T18:00:00.000Z"). Stream `ts`: ms since epoch.
 *
 * ## Markets and books
 * Every tradable thing is a binary contract, called a market, that pays $1 if its outcome happens.
 * On venue_h each outcome of a game (a team to win, a spread side, an over) is its own market,
 * identified by its outcome id. Every market has a YES book, book key = the market id.
 *
 * - Two-sided venues (venue_e) also list the NO contract with its own book, book key
 *   `<market id>:no`, with bids and asks in NO prices (like Polymarket's NO token). The engine
 *   crosses complementary orders (a NO bid at q is a YES offer at 1 − q) and each book is published
 *   with its complement folded in, so NO bids = 1 − YES asks and NO asks = 1 − YES bids: the best
 *   YES ask is 1 − the best NO bid, and the YES book alone gives a full YES quote. The NO book is
 *   what the API shows as the venue's "no" side (spec 2.8).
 * - Yes-only venues (`capabilities.yesOnlyBook`: venue_f, venue_h) publish only the YES book, bids
 *   and asks of YES. Their NO side is priced as the complement and has no levels of its own.
 *
 * ## REST (base `…/v1`)
 * - `GET /events[?state=scheduled|live|final]` → `{"events":[Event],"ts":ms}` where
 *   Event = `{id, name, sport|null, league|null, category, start_time, state, futures, markets:[Market]}`
 *   and Market = `{id, market_id?, name, market_name, outcome|null, status, open_time, close_time|null,
 *   result|null, books:["yes"] | ["yes","no"], tags}`. `market_id` is the venue's own market the
 *   outcome belongs to where one market holds several outcomes (venue_h: a game's moneyline holds
 *   both teams; spec 2.2 returns it as ticker_name); absent where each market is its own.
 *   `state` is the event's: scheduled | live | final. `status` is the market's: pending | open |
 *   suspended | closed | settled; `result` is "yes" | "no" once known. `futures` marks season-long
 *   events (a championship) rather than one game.
 * - `GET /book/:book` (`:book` = a market id, or `<market id>:no`) →
 *   `{"type":"book","market":M,"book":"yes"|"no","bids":[[p,s],…],"asks":[[p,s],…],"ts":ms}`.
 *   Unknown → 404 `{"error":"unknown market"}`.
 *
 * ## Stream (`…/v1/stream`, WebSocket, JSON text frames)
 * Client → server:
 * - `{"op":"subscribe","channel":"book","markets":[M,…]}`: acked with
 *   `{"type":"subscribed","channel":"book","markets":[…]}`, then a `snapshot` of each book of each
 *   market (YES first, then NO on a two-sided venue). Subscribing a market again sends fresh
 *   snapshots: this is how a client resyncs one market.
 * - `{"op":"unsubscribe","channel":"book","markets":[M,…]}` → `{"type":"unsubscribed",…}`.
 * Server → client:
 * - `{"type":"snapshot","market":M,"book":"yes","seq":n,"bids":[["0.4800","120"],…],"asks":[…],"ts":ms}`:
 *   the whole book, best first (bids descending, asks ascending), replacing what was there.
 * - `{"type":"update","market":M,"book":"yes","seq":n,"changes":[["bid","0.4700","0"],…],"ts":ms}`:
 *   absolute new sizes per level, "0" deletes.
 * - `{"type":"trade","market":M,"seq":n,"id":"…","price":"0.4800","size":"10","taker":"yes"|"no","ts":ms}`:
 *   `price` is the YES price; `taker` is the contract the taker bought (on a yes-only venue "no"
 *   means the taker sold YES).
 * - `{"type":"status","market":M,"seq":n,"status":"open","result":null,"event_state":"live","ts":ms}`:
 *   the market's status or its event's state changed (scheduled → live → final).
 * - `{"type":"heartbeat","ts":ms}` every few seconds; the server also answers WebSocket pings.
 * - `{"type":"error","code":"unknown_market"|"bad_request","msg":"…","market"?:M}`.
 *
 * `seq` is per market and per connection: 1 for the first frame about a market, +1 for every
 * frame about it (snapshot, update, trade, status). A frame whose seq is more than one past the
 * last means frames were lost: the client drops that market's books and subscribes it again, and
 * the snapshots that answer carry on the count. A seq at or below the last is a replay and is
 * ignored.
 */

/** Book key suffix of the NO contract on a two-sided venue. */
export const NO_BOOK_SUFFIX = ':no';

export type BookName = 'yes' | 'no';

/** The book key of `market`'s `book`. */
export function bookKey(market: string, book: BookName): string {
  return book === 'yes' ? market : `${market}${NO_BOOK_SUFFIX}`;
}

/** The market and book of a book key. */
export function parseBookKey(key: string): { market: string; book: BookName } {
  return key.endsWith(NO_BOOK_SUFFIX) ? { market: key.slice(0, -NO_BOOK_SUFFIX.length), book: 'no' } : { market: key, book: 'yes' };
}

// ---- REST: zod (low rate) -------------------------------------------------------------------

const iso = z.iso.datetime({ offset: true });

export const exchangeMarketSchema = z.object({
  id: z.string().min(1),
  market_id: z.string().min(1).nullable().optional(),
  name: z.string().min(1),
  market_name: z.string(),
  outcome: z.string().nullable().optional(),
  /** pending | open | suspended | closed | settled (unknown values read as closed, and are counted). */
  status: z.string().min(1),
  open_time: iso.nullable().optional(),
  close_time: iso.nullable().optional(),
  result: z.enum(['yes', 'no']).nullable().optional(),
  books: z.array(z.enum(['yes', 'no'])).min(1),
  tags: z.array(z.string()).optional(),
});
export type ExchangeMarket = z.infer<typeof exchangeMarketSchema>;

export const EVENT_STATES = ['scheduled', 'live', 'final'] as const;
export type EventState = (typeof EVENT_STATES)[number];

/** An event with its markets still unvalidated (they are validated one by one). */
export const exchangeEventShellSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  sport: z.string().nullable().optional(),
  league: z.string().nullable().optional(),
  category: z.string().optional(),
  start_time: iso,
  state: z.enum(EVENT_STATES),
  futures: z.boolean(),
  markets: z.array(z.unknown()),
});
export type ExchangeEventShell = z.infer<typeof exchangeEventShellSchema>;

export const exchangeEventSchema = exchangeEventShellSchema.extend({ markets: z.array(exchangeMarketSchema) });
export type ExchangeEvent = z.infer<typeof exchangeEventSchema>;

/** `GET /events`. */
export const exchangeEventsSchema = z.object({ events: z.array(exchangeEventSchema), ts: z.number().int().nonnegative() });
export type ExchangeEvents = z.infer<typeof exchangeEventsSchema>;

export const exchangeEventsShellSchema = z.object({ events: z.array(z.unknown()), ts: z.number().int().nonnegative().optional() });

const wireLevel = z.tuple([z.string(), z.string()]);

/** `GET /book/:book`, and the shape of a stream snapshot without its seq. */
export const exchangeBookSchema = z.object({
  type: z.literal('book'),
  market: z.string().min(1),
  book: z.enum(['yes', 'no']),
  bids: z.array(wireLevel),
  asks: z.array(wireLevel),
  ts: z.number().int().nonnegative(),
});
export type ExchangeBook = z.infer<typeof exchangeBookSchema>;

// ---- Stream: types and guards (hot path, no zod) --------------------------------------------

export type WireLevel = readonly [price: string, size: string];
export type WireChange = readonly [side: 'bid' | 'ask', price: string, size: string];

export interface SnapshotFrame {
  readonly type: 'snapshot';
  readonly market: string;
  readonly book: BookName;
  readonly seq: number;
  readonly bids: readonly WireLevel[];
  readonly asks: readonly WireLevel[];
  readonly ts: number;
}

export interface UpdateFrame {
  readonly type: 'update';
  readonly market: string;
  readonly book: BookName;
  readonly seq: number;
  readonly changes: readonly WireChange[];
  readonly ts: number;
}

export interface TradeFrame {
  readonly type: 'trade';
  readonly market: string;
  readonly seq: number;
  readonly id: string;
  readonly price: string;
  readonly size: string;
  readonly taker: 'yes' | 'no';
  readonly ts: number;
}

export interface StatusFrame {
  readonly type: 'status';
  readonly market: string;
  readonly seq: number;
  readonly status: string;
  readonly result: 'yes' | 'no' | null;
  readonly event_state: EventState;
  readonly ts: number;
}

export interface ErrorFrame {
  readonly type: 'error';
  readonly code: string;
  readonly msg: string;
  readonly market?: string | undefined;
}

export type SeqFrame = SnapshotFrame | UpdateFrame | TradeFrame | StatusFrame;

/** Client → server. */
export interface SubscribeCommand {
  readonly op: 'subscribe' | 'unsubscribe';
  readonly channel: 'book';
  readonly markets: readonly string[];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;
const isTs = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isBook = (v: unknown): v is BookName => v === 'yes' || v === 'no';
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

function isLevels(v: unknown): v is WireLevel[] {
  if (!Array.isArray(v)) return false;
  for (const l of v) if (!Array.isArray(l) || l.length !== 2 || typeof l[0] !== 'string' || typeof l[1] !== 'string') return false;
  return true;
}

function isChanges(v: unknown): v is WireChange[] {
  if (!Array.isArray(v)) return false;
  for (const c of v) {
    if (!Array.isArray(c) || c.length !== 3 || (c[0] !== 'bid' && c[0] !== 'ask') || typeof c[1] !== 'string' || typeof c[2] !== 'string') return false;
  }
  return true;
}

export function isRecordFrame(v: unknown): v is Record<string, unknown> & { type: string } {
  return isRecord(v) && typeof v['type'] === 'string';
}

export function isSnapshotFrame(v: Record<string, unknown>): v is Record<string, unknown> & SnapshotFrame {
  return isId(v['market']) && isBook(v['book']) && isSeq(v['seq']) && isLevels(v['bids']) && isLevels(v['asks']) && isTs(v['ts']);
}

export function isUpdateFrame(v: Record<string, unknown>): v is Record<string, unknown> & UpdateFrame {
  return isId(v['market']) && isBook(v['book']) && isSeq(v['seq']) && isChanges(v['changes']) && isTs(v['ts']);
}

export function isTradeFrame(v: Record<string, unknown>): v is Record<string, unknown> & TradeFrame {
  return (
    isId(v['market']) &&
    isSeq(v['seq']) &&
    isId(v['id']) &&
    typeof v['price'] === 'string' &&
    typeof v['size'] === 'string' &&
    (v['taker'] === 'yes' || v['taker'] === 'no') &&
    isTs(v['ts'])
  );
}

export function isStatusFrame(v: Record<string, unknown>): v is Record<string, unknown> & StatusFrame {
  return (
    isId(v['market']) &&
    isSeq(v['seq']) &&
    isId(v['status']) &&
    (v['result'] === null || v['result'] === 'yes' || v['result'] === 'no') &&
    (EVENT_STATES as readonly unknown[]).includes(v['event_state']) &&
    isTs(v['ts'])
  );
}

export function isErrorFrame(v: Record<string, unknown>): v is Record<string, unknown> & ErrorFrame {
  return typeof v['code'] === 'string' && typeof v['msg'] === 'string' && (v['market'] === undefined || typeof v['market'] === 'string');
}

/** A client command, as the simulator reads it. */
export function isSubscribeCommand(v: unknown): v is SubscribeCommand {
  return (
    isRecord(v) &&
    (v['op'] === 'subscribe' || v['op'] === 'unsubscribe') &&
    v['channel'] === 'book' &&
    Array.isArray(v['markets']) &&
    v['markets'].every((m) => typeof m === 'string')
  );
}
