import { z } from 'zod';
import { CLOSE_REASONS, OpportunityRecordJson } from '../signals/lifecycle/record.js';
import { AlertJson, ArbOpportunity, cents, centsOrNull, EvOpportunity, numOrNull, strOrNull, time } from '../views/schemas.js';

/**
 * The WebSocket protocol of /api/v2/ws (spec section 6; the parts the spec leaves "not shown"
 * are ours and documented in README "WebSocket").
 *
 * Client → server: `{"type":"subscribe"|"unsubscribe","channel":"prices"|"orderbook"|"live_games"|"arb"|"ev"|"smart_money"|"fade_finder"|"<venue_a>_prices","market_ids":[…]}`
 * (`event_ids` for live_games), and `{"type":"ping"}`. `action` is accepted for `type` and
 * `heartbeat` for `ping`, as clients of the hosted API send them (`parseClientMessage`); a
 * connection that sends them is in the hosted dialect.
 * Server → client: `welcome`, `subscribed`, `unsubscribed`, `price_update`, `orderbook_update`,
 * `ticker`, `live_game`, `trade`, `arb`, `ev`, `arb_expired`, `ev_expired`, `smart_money`,
 * `fade_finder` (and, in the hosted dialect only, `fade_finder_update` after each), `warning` and
 * `error` (each with a `code` and a `message`), `ready`, `pong`
 * (schemas: SERVER_MESSAGES). Streamed messages carry their `channel`, a per-topic `seq`, the
 * process `epoch` and `ts` (send time, ms); those a venue frame caused also `venue_ts` and
 * `recv_ts` (the frame's venue and receive times, ms); in the hosted dialect also their body again
 * under `data`.
 */
/** A replay time as the client gives it (ms since the epoch or ISO 8601), checked by the session (msOrIsoTime) with a message naming the field. */
const replayTime = z.union([z.number().int().min(0), z.string().min(1).max(64)]);

export const clientMessage = z.discriminatedUnion('type', [
  z.object({
    type: z.enum(['subscribe', 'unsubscribe']),
    channel: z.string().min(1).max(64),
    market_ids: z.array(z.string().min(1).max(300)).max(10_000).optional(),
    event_ids: z.array(z.string().min(1).max(300)).max(1_000).optional(),
    all: z.boolean().optional(),
    /** Last seq seen per market id (cluster edges replay what came after it from the stream). */
    resume: z.record(z.string().min(1).max(300), z.number().int().nonnegative()).optional(),
  }),
  z.object({ type: z.literal('ping') }),
  /** In-band login, the first message of a connection opened without a key (clients of the hosted API send it). */
  z.object({
    type: z.literal('auth'),
    api_key: z.string().min(1).max(512).optional().describe('an API key (pmx_…)'),
    token: z.string().min(1).max(512).optional().describe('a token from POST /api/v2/ws-token'),
  }),
  /** A WebSocket replay (replay-session.ts): the messages the channels sent over a past window of the capture log. */
  z.object({
    type: z.literal('replay'),
    channels: z.array(z.string().min(1).max(64)).min(1).max(8).describe('prices, orderbook, the ticker channel, arb, ev, live_games, smart_money, fade_finder'),
    market_ids: z
      .array(z.string().min(1).max(300))
      .max(1_000)
      .optional()
      .describe('markets of prices, orderbook and the ticker channel; a replay of only alert channels (and arb, ev, live_games) takes none, or ["*"]'),
    event_ids: z.array(z.string().min(1).max(300)).max(1_000).optional().describe('live_games: the game event ids (as the window knew them)'),
    from: replayTime.describe('start of the window (receive time): ms since the epoch or ISO 8601'),
    to: replayTime.describe('end of the window, inclusive: ms since the epoch or ISO 8601'),
    speed: z
      .union([z.number().positive().max(1_000_000), z.literal('max')])
      .optional()
      .describe('× the recorded pace (default 1), or max: as fast as the client reads'),
  }),
  z.object({
    type: z.enum(['replay_pause', 'replay_resume', 'replay_stop']),
    replay_id: z.string().min(1).max(64).optional().describe("the replay_started message's id (may be left out while the connection runs one replay)"),
  }),
  z.object({
    type: z.literal('replay_seek'),
    replay_id: z.string().min(1).max(64).optional(),
    at: replayTime.describe('where the replay goes on from, inside its window: ms since the epoch or ISO 8601'),
  }),
]);
export type ClientMessage = z.infer<typeof clientMessage>;
/** The replay messages of a client: start a replay, and its controls. */
export type ReplayMessage = Extract<ClientMessage, { type: 'replay' | 'replay_pause' | 'replay_resume' | 'replay_stop' | 'replay_seek' }>;

export function isReplayMessage(m: ClientMessage): m is ReplayMessage {
  return m.type.startsWith('replay');
}

/** Message kinds of `type` (or `action`): `heartbeat` is read as `ping`. */
const ACTIONS = ['subscribe', 'unsubscribe', 'ping', 'heartbeat', 'auth', 'replay', 'replay_pause', 'replay_resume', 'replay_seek', 'replay_stop'] as const;

/** The alert channels: alerts of the smart-money feed and of the fade-finder feed (spec 6 rule 7 leaves the names to us). */
export const ALERT_CHANNELS = ['smart_money', 'fade_finder'] as const;
export type AlertChannel = (typeof ALERT_CHANNELS)[number];

/** The hub topic of an alert channel: every alert of the feed. */
export const alertTopic = (ch: AlertChannel): string => `${ch}:*`;

/**
 * A client message, read as clients of the hosted API write it too: `action` stands for `type`
 * (both may be given if they agree) and `heartbeat` for `ping`. A bad message is answered with a
 * message that names the field as the client wrote it.
 */
export function parseClientMessage(raw: unknown): { ok: true; message: ClientMessage; hosted: boolean } | { ok: false; message: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, message: 'invalid message: (root): expected a JSON object' };
  const obj = raw as Record<string, unknown>;
  const field = obj['type'] === undefined && obj['action'] !== undefined ? 'action' : 'type';
  if (obj['type'] !== undefined && obj['action'] !== undefined && obj['type'] !== obj['action'])
    return { ok: false, message: 'invalid message: type and action disagree (send one of them)' };
  const kind = obj[field];
  if (typeof kind !== 'string' || !(ACTIONS as readonly string[]).includes(kind))
    return {
      ok: false,
      message: `invalid message: ${field}: ${kind === undefined ? 'missing' : `unknown ${field} ${JSON.stringify(kind)}`}; expected one of ${ACTIONS.join(', ')}`,
    };
  const { action: _action, ...rest } = obj;
  const parsed = clientMessage.safeParse({ ...rest, type: kind === 'heartbeat' ? 'ping' : kind });
  // `action` or `heartbeat` is the hosted dialect, whose streamed messages carry `data`.
  if (parsed.success) return { ok: true, message: parsed.data, hosted: obj['action'] !== undefined || kind === 'heartbeat' };
  const i = parsed.error.issues[0];
  return { ok: false, message: `invalid message: ${i?.path.join('.') || '(root)'}: ${i?.message ?? 'invalid'}` };
}

/** Warning and error codes a client can switch on. */
export const CODES = {
  UNKNOWN_ID: 'UNKNOWN_ID',
  UNKNOWN_EVENT_ID: 'UNKNOWN_EVENT_ID',
  UNKNOWN_CHANNEL: 'UNKNOWN_CHANNEL',
  BAD_JSON: 'BAD_JSON',
  BAD_REQUEST: 'BAD_REQUEST',
  RATE_LIMITED: 'RATE_LIMITED',
  NOT_ENTITLED: 'NOT_ENTITLED',
  SUBSCRIPTION_LIMIT: 'SUBSCRIPTION_LIMIT',
  FEED_INTERRUPTED: 'FEED_INTERRUPTED',
  RESYNC: 'RESYNC',
  FEED_READY: 'FEED_READY',
  FEED_DEGRADED: 'FEED_DEGRADED',
  COALESCED: 'COALESCED',
  /** A message other than `auth` on a connection that has not logged in. */
  AUTH_REQUIRED: 'AUTH_REQUIRED',
  /** An in-band login refused (its `reason` is the upgrade's code: auth.invalid_key, …); the connection is closed. */
  AUTH_FAILED: 'AUTH_FAILED',
  /** An in-band login past the plan's connections per key; the connection is closed. */
  CONNECTION_LIMIT: 'CONNECTION_LIMIT',
  /** The key's plan changed: subscriptions it no longer includes were dropped (named in the message). */
  PLAN_CHANGED: 'PLAN_CHANGED',
  /** A replay control names no replay of this connection (finished, stopped, or never started). */
  REPLAY_UNKNOWN: 'REPLAY_UNKNOWN',
  /** A replay window outside what the capture log retains, or capture turned off. */
  REPLAY_OUTSIDE_RETENTION: 'REPLAY_OUTSIDE_RETENTION',
  /** More replays at once than the key's plan (ws.replays) or the server (websocket.replayMaxConcurrent) runs. */
  REPLAY_LIMIT: 'REPLAY_LIMIT',
  /** A replay of smart_money / fade_finder whose window starts before the oldest alert still stored (older ones were pruned): it sends them from `retained_from` on. */
  REPLAY_ALERTS_PRUNED: 'REPLAY_ALERTS_PRUNED',
} as const;

/** Close codes (4000–4999 are ours; the others are RFC 6455's). */
export const CLOSE = {
  BACKPRESSURE: 4008,
  CONNECTION_LIMIT: 4029,
  SHUTDOWN: 1001,
  /** A binary frame that is not UTF-8 (text frames that are not UTF-8 are refused by uWS itself, as 1006). */
  INVALID_PAYLOAD: 1007,
  /** Kept sending past the message budget after RATE_LIMITED. */
  POLICY: 1008,
  /** A message over the size limit. */
  TOO_BIG: 1009,
  /** An in-band login refused (bad key or token, or the plan's connections per key). */
  UNAUTHORIZED: 4001,
  /** No in-band login within the login window after opening without a key. */
  AUTH_TIMEOUT: 4002,
  /** The connection's key was revoked. */
  KEY_REVOKED: 4003,
} as const;

/** Default login window of a connection opened without a key (ms; config `websocket.authTimeoutMs`). */
export const AUTH_TIMEOUT_MS = 5_000;

/** Defaults of the per-connection message budget (every client message counts). */
export const MESSAGE_BUDGET = { perSecond: 50, burst: 100 } as const;

/**
 * The per-connection budget of client messages: a token bucket of `burst` messages refilled at
 * `perSecond`. Every message takes a token, whatever it is (ping, subscribe, invalid JSON). A
 * message without a token is refused: the first of a run is answered with RATE_LIMITED, and a
 * run longer than `burst` means the client ignores it, so the connection is closed.
 */
export class MessageBudget {
  private tokens: number;
  private at: number;
  /** Messages refused in a row. */
  private refused = 0;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.at = now;
  }

  /** ok: go on; warn: refuse and say RATE_LIMITED; drop: refuse silently; close: close the connection. */
  take(now: number): 'ok' | 'warn' | 'drop' | 'close' {
    if (now > this.at) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.perSecond) / 1000);
      this.at = now;
    }
    if (this.tokens >= 1) {
      this.tokens--;
      this.refused = 0;
      return 'ok';
    }
    this.refused++;
    if (this.refused === 1) return 'warn';
    return this.refused > this.burst ? 'close' : 'drop';
  }
}

/**
 * The OpenAPI path item of GET /ws: OpenAPI has no WebSocket messages, so the protocol is written
 * out in the operation's description (the same as README "WebSocket"), with the upgrade's answers
 * as responses. `ticker` is the `<venue_a slug>_prices` channel; `limits` lines name each plan's
 * connection and subscription caps from config/plans.json.
 */
export function wsPathItem(ticker: string, limits: readonly string[]): Record<string, unknown> {
  const description = [
    'Upgrade to a WebSocket. The key goes in the X-API-Key header or the api_key query parameter, or a token from POST /api/v2/ws-token in the token query parameter (once, within its lifetime); an invalid or revoked key, or an unknown, used or expired token, is refused at the upgrade with HTTP 401 and a JSON body naming the reason (auth.invalid_key, auth.revoked_key, auth.invalid_token), too many connections for the key with 429. The first message is {"type":"welcome","epoch","plan","channels"}.',
    '',
    `In-band login: a connection opened with no key and no token must send {"action":"auth","api_key":"pmx_…"} (or {"type":"auth","token":"…"}) first; it is answered with {"type":"auth","status":"authenticated","key_id","plan"} and then the welcome, or with an error AUTH_FAILED (reason: the upgrade's code) or CONNECTION_LIMIT and a close (${CLOSE.UNAUTHORIZED}, ${CLOSE.CONNECTION_LIMIT}). Any other message before it is refused with error AUTH_REQUIRED; without a login within the login window (config websocket.authTimeoutMs, default ${AUTH_TIMEOUT_MS} ms) the connection is closed with ${CLOSE.AUTH_TIMEOUT}. An auth message on a connection already open as the same key is acknowledged again. When a key is revoked its open connections are closed with ${CLOSE.KEY_REVOKED}; when its plan changes, subscriptions the new plan does not include are dropped with a PLAN_CHANGED warning.`,
    '',
    'Client messages (JSON text): {"type":"subscribe"|"unsubscribe","channel":C,"market_ids":[…]} where market_ids are native ids or platform:market_id (the prefix is stripped); live_games takes "event_ids" instead; arb and ev take match-group ids, or none (or ["*"]) for every group; ' +
      `{"type":"subscribe","channel":"${ticker}","all":true} subscribes an Enterprise key to every market of the venue; smart_money and fade_finder take no market_ids (or ["*"]): every alert of the feed; {"type":"ping"} is answered with pong. "action" is accepted in place of "type" ({"action":"subscribe","channel":"smart_money"}) and {"action":"heartbeat"} (or {"type":"heartbeat"}) is a ping; an unknown type or action is an error with code BAD_REQUEST.`,
    '',
    `Channels: prices (price_update: native market_id, source = venue slug, yes_bid, yes_ask, no_bid, no_ask, last_price in cents 0–100, volume; a snapshot with "snapshot":true at once, then every change), orderbook (orderbook_update: yes/no bids and asks as [cents, size], no empty on yes-only venues), live_games (live_game price changes and trade messages of the games' matched markets), arb and ev (a group's opportunities as /arb and /ev give them, each leg with platform and source), smart_money (type smart_money: each alert of the smart-money feed, alert_type smart_money, insider or captain_hook, as /alerts/smart-money gives it) and fade_finder (type fade_finder: each fade alert, as /alerts/fade-finder gives it; both with the entitlement of those endpoints; a connection in the hosted dialect also gets each fade alert again right after it as type fade_finder_update with the same seq, data carrying market_slug, created_at and data.profitable_wallet / losing_wallet {userAddr, pnl_to_date, outcome, side, price (dollars 0 to 1), amount}, the shape clients of the hosted API read), ${ticker} (ticker: decimal-dollar strings yes_bid_dollars, yes_ask_dollars, price_dollars).`,
    '',
    "Server messages carry a type: subscribed / unsubscribed (one per venue of the request: the accepted native market_ids and their venue as source), price_update, orderbook_update, live_game, trade, ticker, arb, ev, arb_expired, ev_expired, smart_money, fade_finder, warning and error (with a code and a message), ready, pong. Every streamed message carries its channel, a per-topic seq, the process epoch and ts (server send time, ms since epoch); price_update, orderbook_update, ticker, live_game and trade messages caused by a venue frame also carry venue_ts (the venue's time of the update; our receive time when the venue gives none) and recv_ts (when crossbook received the frame), ms since epoch, so recv_ts − venue_ts is the venue leg, ts − recv_ts crossbook's and the client's receive time − ts the network's (snapshots carry neither): a seq gap or a new epoch means reconcile over REST (/prices/bulk). A connection that has sent a message with \"action\" (or a heartbeat) gets every streamed message with its fields both at the top level and again under data, the envelope clients of the hosted API read.",
    '',
    'Resume (cluster edges, README "Scaling out"): a subscribe may carry "resume":{"<market_id>":<last seq seen>}; the edge sends the messages after that seq in order from the stream\'s window, then the live ones, with no snapshot; when the window no longer holds them, the snapshot and a RESYNC warning. A single process answers with the snapshot as usual.',
    '',
    'Replay (plans with replay; README "Capture and replay"): {"type":"replay","channels":["prices","orderbook","arb","ev"],"market_ids":[…],"from":T,"to":T,"speed":N|"max"} (T: ms since the epoch or ISO 8601; live_games takes "event_ids") is answered replay_started {replay_id, epoch}, then each market\'s snapshot at from, then the messages the live channels sent in the window (the same bodies, their recorded venue_ts, recv_ts and ts), then replay_completed {messages, counts, events}. smart_money and fade_finder replay the alerts live sent (read back from the alert store; market_ids absent or ["*"] when no market channel is asked for; a replay of only them needs no capture), each in its place by creation time, with ts = that time and seqs of the replay\'s own from 1 per epoch, the hosted dialect\'s fade_finder_update after each fade; a window that starts before the oldest alert still stored gets a warning REPLAY_ALERTS_PRUNED (retained_from) after replay_started. {"type":"replay_pause"|"replay_resume"|"replay_stop","replay_id"} and {"type":"replay_seek","replay_id","at":T} are acknowledged replay_paused, replay_resumed, replay_stopped, replay_seeked (a new epoch from there). A client that does not read pauses its replay. Errors: NOT_ENTITLED (the plan lacks replay or a channel: the alert channels with the entitlement of /alerts/smart-money and /alerts/fade-finder), BAD_REQUEST, REPLAY_OUTSIDE_RETENTION (retained_from, retained_to), REPLAY_UNKNOWN, REPLAY_LIMIT (replays at once per key: the plan\'s ws.replays; per server: websocket.replayMaxConcurrent).',
    '',
    'Message schemas: components.schemas.WsClientMessage (client to server) and components.schemas.Ws* (server to client, by type), listed in x-websocket-messages.',
    '',
    `Codes: UNKNOWN_ID (warning: a market id the venues do not list, event tickers included), UNKNOWN_EVENT_ID (warning: live_games), UNKNOWN_CHANNEL (warning), BAD_JSON and BAD_REQUEST (error: not JSON / not a valid message), NOT_ENTITLED (error: the plan does not include the channel), SUBSCRIPTION_LIMIT (error), RATE_LIMITED (error: more than 20 subscribe/unsubscribe messages a second, more market ids subscribed or unsubscribed than the key's connections may together (2,000 a second, 10,000 at once; websocket.keyIdsPerSecond, keyIdsBurst), a subscribe while more than 256 KB sent to the client is unread, or more client messages of any kind than the connection's budget: ${MESSAGE_BUDGET.burst} at once, then ${MESSAGE_BUDGET.perSecond} a second; the refused message is not processed, and a client that goes on sending without a token is closed with ${CLOSE.POLICY}), AUTH_REQUIRED, AUTH_FAILED and CONNECTION_LIMIT (error: in-band login), PLAN_CHANGED (warning: the key's plan changed; plan, channels and the dropped topics), FEED_INTERRUPTED (warning: the venue feed disconnected, stalled or lost sequence; prices may be stale), FEED_DEGRADED (warning: malformed frames dropped), FEED_READY (type ready: the feed is back; reconcile over REST), COALESCED (warning: you read slower than updates arrive and now get the latest per market), RESYNC (warning: a resume asked for messages no longer held; the snapshot is sent just before it).`,
    '',
    `Backpressure and limits: a client that keeps not reading is closed with code ${CLOSE.BACKPRESSURE} and a reason; pings are sent automatically and an idle connection closes after 120 s; on shutdown the close code is ${CLOSE.SHUTDOWN}; a message over the size limit closes with ${CLOSE.TOO_BIG} (far over it, uWS drops the connection: 1006), a binary frame that is not UTF-8 with ${CLOSE.INVALID_PAYLOAD} (a text frame that is not UTF-8 is dropped by uWS: 1006). Per plan: ${limits.join('; ')} (0 = unlimited).`,
  ].join('\n');
  const err = { description: 'Refused at the upgrade', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  return {
    get: {
      summary: 'WebSocket stream: prices, order books, live games, arbitrage, EV and alerts',
      description,
      tags: ['websocket'],
      operationId: 'ws',
      security: [{ ApiKeyHeader: [] }, { ApiKeyQuery: [] }],
      responses: {
        101: { description: 'Switching Protocols: the WebSocket is open' },
        400: { $ref: '#/components/responses/BadRequest' },
        401: err,
        426: { ...err, description: 'A plain HTTP GET with a good key: upgrade to a WebSocket' },
        429: err,
        405: { $ref: '#/components/responses/MethodNotAllowed' },
        500: { $ref: '#/components/responses/InternalError' },
      },
      // The message schemas, by direction (components.schemas): OpenAPI itself has no WebSocket messages.
      'x-websocket-messages': {
        client: { $ref: '#/components/schemas/WsClientMessage' },
        server: { oneOf: Object.keys(SERVER_MESSAGES).map((name) => ({ $ref: `#/components/schemas/${name}` })) },
      },
    },
  };
}

/**
 * The envelope of every streamed message: per-topic seq, process epoch, send time, and on a message
 * a venue frame caused (price, order book, ticker, live game, trade) that frame's venue and receive
 * times, so a client sees each leg: venue → crossbook (recv_ts − venue_ts), crossbook (ts − recv_ts),
 * crossbook → client (its receive time − ts).
 */
const stream = {
  venue_ts: z
    .number()
    .optional()
    .describe("the venue's own time of the update, ms since epoch (our receive time when the venue gives none); on messages a venue frame caused"),
  recv_ts: z.number().int().optional().describe('when crossbook received the venue frame behind the update, ms since epoch'),
  seq: z.number().int().min(0).describe('per-topic sequence: a gap means reconcile over REST'),
  epoch: z.number().int().describe('process epoch (ms): a new one means the server restarted; reconcile over REST'),
  ts: z.number().int().describe('server send time, ms since epoch'),
  snapshot: z.literal(true).optional().describe('the current state, sent on subscribe'),
};
/**
 * A streamed message: its body and the stream envelope; a connection in the hosted dialect gets
 * the body again under `data` (without seq, epoch and ts; a price snapshot keeps its snapshot flag there).
 */
function streamed<S extends z.ZodRawShape>(body: S) {
  return z.object({
    ...body,
    ...stream,
    data: z
      .object({ ...body, snapshot: stream.snapshot })
      .optional()
      .describe('hosted dialect (a connection that sent action or heartbeat): the message body again'),
  });
}

const quote = {
  market_id: z.string().describe('native market id'),
  source: z.string().describe('venue slug'),
  yes_bid: centsOrNull('best YES bid'),
  yes_ask: centsOrNull('best YES ask'),
  no_bid: centsOrNull('best NO bid'),
  no_ask: centsOrNull('best NO ask'),
  last_price: centsOrNull('last trade'),
  volume: numOrNull('traded volume as the venue reports it'),
};
const levels = z.array(z.tuple([cents('price'), z.number().describe('size')])).describe('[cents, size], best first');
const code = z.enum(Object.values(CODES) as [string, ...string[]]);
/** A warning, error or ready notice without its envelope. */
const notice = {
  type: z.enum(['warning', 'error', 'ready']).describe('warning: go on; error: the request was refused; ready: a feed is back'),
  code: code.describe('what happened, for a client to switch on'),
  message: z.string().describe('what happened, in words'),
  channel: z.string().optional().describe('the channel of the request'),
  market_ids: z.array(z.string()).optional().describe('the ids the notice is about'),
  event_ids: z.array(z.string()).optional().describe('live_games: the event ids the notice is about'),
  source: z.string().optional().describe('venue of a feed notice'),
  market_id: z.string().optional().describe('market of a feed notice'),
  reason: z.string().optional().describe('AUTH_FAILED: the refusal code of the upgrade (auth.invalid_key, auth.revoked_key, auth.invalid_token, …)'),
  plan: z.string().optional().describe("PLAN_CHANGED: the key's plan now"),
  channels: z.array(z.string()).optional().describe('PLAN_CHANGED: the channels it includes; REPLAY_ALERTS_PRUNED: the alert channels it is about'),
  dropped: z.array(z.string()).optional().describe('PLAN_CHANGED: the subscriptions (topics) it no longer includes, dropped'),
  replay_id: z.string().optional().describe('the replay a replay error or warning is about'),
  retained_from: z
    .number()
    .int()
    .optional()
    .describe(
      'REPLAY_OUTSIDE_RETENTION: the oldest receive time the capture holds (ms); REPLAY_ALERTS_PRUNED: the creation time of the oldest alert stored (ms)',
    ),
  retained_to: z.number().int().optional().describe('REPLAY_OUTSIDE_RETENTION: now (ms)'),
};

/**
 * Every message the server sends on /api/v2/ws, by `type`: the components of the OpenAPI
 * document (OpenAPI has no WebSocket messages) and what the contract test checks frames against.
 */
export const SERVER_MESSAGES = {
  WsWelcome: z.object({
    type: z.literal('welcome'),
    epoch: stream.epoch,
    plan: z.string(),
    channels: z.array(z.string()).describe('channels the plan includes'),
    ts: stream.ts,
  }),
  WsSubscribed: z.object({
    type: z.enum(['subscribed', 'unsubscribed']),
    channel: z.string(),
    market_ids: z.array(z.string()).optional().describe('accepted native ids (group ids on arb/ev; ["*"] for all)'),
    source: z.string().nullable().optional().describe('venue of market_ids; null when none was accepted'),
    sources: z.array(z.string()).optional().describe('venue of each market id'),
    event_ids: z.array(z.string()).optional().describe('live_games: accepted event ids'),
    live: z.array(z.string()).optional().describe('live_games: those live now'),
    ts: stream.ts,
  }),
  WsPriceUpdate: streamed({ type: z.literal('price_update'), channel: z.literal('prices'), ...quote }),
  WsOrderbookUpdate: streamed({
    type: z.literal('orderbook_update'),
    channel: z.literal('orderbook'),
    market_id: z.string(),
    source: z.string(),
    ready: z.boolean().describe('a full snapshot has been applied'),
    yes: z.object({ bids: levels, asks: levels }),
    no: z.object({ bids: levels, asks: levels }).describe('empty on yes-only venues'),
  }),
  WsTicker: streamed({
    type: z.literal('ticker'),
    channel: z.string().describe('<venue_a slug>_prices'),
    market_id: z.string(),
    market_ticker: z.string(),
    source: z.string(),
    yes_bid_dollars: strOrNull('best YES bid, decimal dollars'),
    yes_ask_dollars: strOrNull('best YES ask, decimal dollars'),
    price_dollars: strOrNull('last trade, decimal dollars'),
    volume: numOrNull('volume'),
    open_interest: numOrNull('open interest'),
  }),
  WsLiveGame: streamed({ type: z.literal('live_game'), channel: z.literal('live_games'), event_id: z.string().describe('live game (event) id'), ...quote }),
  WsTrade: streamed({
    type: z.literal('trade'),
    channel: z.literal('live_games'),
    event_id: z.string(),
    market_id: z.string(),
    source: z.string(),
    price: cents('YES price of the trade'),
    size: z.number(),
    taker_side: z.enum(['yes', 'no']).nullable(),
    trade_id: z.string(),
    executed_at: time('execution time'),
  }),
  WsArb: streamed({
    type: z.literal('arb'),
    channel: z.literal('arb'),
    group_id: z.number().int(),
    title: z.string(),
    opportunities: z.array(ArbOpportunity),
    computed_at: time('when computed'),
  }),
  WsEv: streamed({
    type: z.literal('ev'),
    channel: z.literal('ev'),
    group_id: z.number().int(),
    title: z.string(),
    opportunities: z.array(EvOpportunity),
    computed_at: time('when computed'),
  }),
  WsExpired: streamed({
    type: z.enum(['arb_expired', 'ev_expired']).describe('an arbitrage or EV opportunity closed: drop it from the list'),
    channel: z.enum(['arb', 'ev']).describe('the channel of its group'),
    group_id: z.number().int().describe('match group of the opportunity'),
    opportunity_id: z.string().describe('the id the opportunity carried while it lived'),
    close_reason: z.enum(CLOSE_REASONS).describe('why it closed, most specific first'),
    record: OpportunityRecordJson.describe('the closed opportunity as /arb/history and /ev/history serve it'),
  }),
  WsSmartMoney: streamed({
    type: z.literal('smart_money'),
    channel: z.literal('smart_money'),
    ...AlertJson.shape,
    alert_type: z.enum(['smart_money', 'insider', 'captain_hook']).describe('kind of smart-money alert'),
  }).describe('an alert of the smart-money feed, as /alerts/smart-money gives it'),
  WsFadeFinder: streamed({
    type: z.literal('fade_finder'),
    channel: z.literal('fade_finder'),
    ...AlertJson.shape,
    alert_type: z.literal('fade').describe('a fade alert'),
  }).describe('an alert of the fade-finder feed, as /alerts/fade-finder gives it'),
  WsFadeFinderUpdate: (() => {
    const wallet = (who: string) =>
      z
        .object({
          userAddr: z.string().nullable().describe('wallet address; null when the trade names none on this side'),
          pnl_to_date: z.number().nullable().describe('realized PnL over all positions, USD, when the wallet ledger knows it'),
          outcome: z.enum(['YES', 'NO']),
          side: z.enum(['BUY', 'SELL']),
          price: z.number().min(0).max(1).describe("the trade's own price of the outcome, dollars 0 to 1 (not cents)"),
          amount: z.number().describe('USD of the trade'),
        })
        .describe(who);
    const head = {
      type: z.literal('fade_finder_update'),
      alert_id: z.string().describe('the alert of the fade_finder message this one follows'),
      market_slug: z.string().describe("the venue's key of the market (ticker_name: the slug on venue_b)"),
      created_at: time('when the alert was raised'),
    };
    return z
      .object({
        ...head,
        channel: z.literal('fade_finder'),
        seq: stream.seq.describe('the seq of the fade_finder message of the same alert (the same event again)'),
        epoch: stream.epoch,
        ts: stream.ts,
        data: z.object({
          ...head,
          version: z.literal(1),
          platform: z.string().describe('venue slug'),
          market_id: z.string().describe('native market id'),
          title: z.string().describe('market title (market_slug when unknown)'),
          snapshot: z.literal(false),
          data: z.object({
            marketSlug: z.string().describe('= market_slug'),
            resolution_date: strOrNull("the market's close day, YYYY-MM-DD"),
            profitable_wallet: wallet(
              "the side to take: the other side of the faded trade, a SELL of the outcome the faded wallet bought at the trade's price",
            ),
            losing_wallet: wallet('the reliably wrong wallet and its trade'),
          }),
        }),
      })
      .describe(
        'hosted dialect only: each fade alert again, right after its fade_finder message, in the shape clients of the hosted API read (README "Clients of the hosted API")',
      );
  })(),
  WsNotice: z.object({
    ...notice,
    seq: stream.seq.optional(),
    epoch: stream.epoch.optional(),
    ts: stream.ts,
    data: z.object(notice).optional().describe('hosted dialect, on feed notices (streamed): the message body again'),
  }),
  WsPong: z.object({ type: z.literal('pong'), ts: stream.ts }),
  WsAuth: z
    .object({
      type: z.literal('auth'),
      status: z.literal('authenticated'),
      key_id: z.string().describe('public id of the key (key_…)'),
      plan: z.string(),
      ts: stream.ts,
    })
    .describe('the answer to an in-band login; the welcome message follows'),
  WsReplayStarted: z
    .object({
      type: z.literal('replay_started'),
      replay_id: z.string().describe('names the replay in its controls'),
      from: z.number().int().describe('start of the window, ms since epoch'),
      to: z.number().int().describe('end of the window (inclusive), ms since epoch'),
      speed: z.union([z.number(), z.literal('max')]),
      channels: z.array(z.string()),
      market_ids: z.array(z.string()).describe('the accepted market ids (unknown ones get an UNKNOWN_ID warning)'),
      event_ids: z.array(z.string()).optional().describe('live_games: the event ids replayed'),
      epoch: stream.epoch.describe("the epoch of the replay's messages (a seek starts another, with seqs from 1 again)"),
      ts: stream.ts,
    })
    .describe('the answer to a replay: its messages follow, each as the live channel sent it (venue_ts and recv_ts as recorded; ts: when live sent it)'),
  WsReplayControl: z
    .object({
      type: z
        .enum(['replay_paused', 'replay_resumed', 'replay_seeked', 'replay_stopped'])
        .describe('the acknowledgment of replay_pause, replay_resume, replay_seek, replay_stop'),
      replay_id: z.string(),
      position: z.number().int().describe('where the replay is (a seek: where it goes on from), receive time ms since epoch'),
      epoch: stream.epoch.optional().describe('replay_seeked: the epoch of the messages from the new position'),
      ts: stream.ts,
    })
    .describe('a replay control acknowledged'),
  WsReplayCompleted: z
    .object({
      type: z.literal('replay_completed'),
      replay_id: z.string(),
      from: z.number().int(),
      to: z.number().int(),
      messages: z.number().int().describe('messages sent by the replay (snapshots included)'),
      counts: z.record(z.string(), z.number().int()).describe('messages sent, by channel'),
      events: z.number().int().describe('normalized events the replay ran through the pipelines (the warm-up before from included)'),
      ts: stream.ts,
    })
    .describe('the replay reached the end of its window: nothing more follows for it'),
} as const;

/** The component name of a server message's schema, by its type. */
export function serverMessageSchema(type: string): keyof typeof SERVER_MESSAGES | undefined {
  const byType: Record<string, keyof typeof SERVER_MESSAGES> = {
    welcome: 'WsWelcome',
    subscribed: 'WsSubscribed',
    unsubscribed: 'WsSubscribed',
    price_update: 'WsPriceUpdate',
    orderbook_update: 'WsOrderbookUpdate',
    ticker: 'WsTicker',
    live_game: 'WsLiveGame',
    trade: 'WsTrade',
    arb: 'WsArb',
    ev: 'WsEv',
    arb_expired: 'WsExpired',
    ev_expired: 'WsExpired',
    smart_money: 'WsSmartMoney',
    fade_finder: 'WsFadeFinder',
    fade_finder_update: 'WsFadeFinderUpdate',
    warning: 'WsNotice',
    error: 'WsNotice',
    ready: 'WsNotice',
    pong: 'WsPong',
    auth: 'WsAuth',
    replay_started: 'WsReplayStarted',
    replay_paused: 'WsReplayControl',
    replay_resumed: 'WsReplayControl',
    replay_seeked: 'WsReplayControl',
    replay_stopped: 'WsReplayControl',
    replay_completed: 'WsReplayCompleted',
  };
  return byType[type];
}

/** Components of the document: the client message and every server message. */
export const WS_COMPONENTS: Readonly<Record<string, z.ZodType>> = { WsClientMessage: clientMessage, ...SERVER_MESSAGES };
