import { z } from 'zod';

/**
 * The WebSocket protocol of /api/v2/ws (spec section 6; the parts the spec leaves "not shown"
 * are ours and documented in README "WebSocket").
 *
 * Client → server: `{"type":"subscribe"|"unsubscribe","channel":"prices"|"orderbook"|"live_games"|"arb"|"ev"|"smart_money"|"fade_finder"|"<venue_a>_prices","market_ids":[…]}`
 * (`event_ids` for live_games), and `{"type":"ping"}`. `action` is accepted for `type` and
 * `heartbeat` for `ping`, as clients of the hosted API send them (`parseClientMessage`); a
 * connection that sends them is in the hosted dialect.
 * Server → client: `welcome`, `subscribed`, `unsubscribed`, `price_update`, `orderbook_update`,
 * `ticker`, `smart_money`, `fade_finder`, `warning` and `error` (each with a `code` and a
 * `message`), `ready`, `pong`. Streamed messages carry their `channel`, a per-topic `seq`, the
 * process `epoch` and `ts` (send time, ms); in the hosted dialect also their body again under `data`.
 */
export const clientMessage = z.discriminatedUnion('type', [
  z.object({
    type: z.enum(['subscribe', 'unsubscribe']),
    channel: z.string().min(1).max(64),
    market_ids: z.array(z.string().min(1).max(300)).max(10_000).optional(),
    event_ids: z.array(z.string().min(1).max(300)).max(1_000).optional(),
    all: z.boolean().optional(),
  }),
  z.object({ type: z.literal('ping') }),
]);
export type ClientMessage = z.infer<typeof clientMessage>;

/** Message kinds of `type` (or `action`): `heartbeat` is read as `ping`. */
const ACTIONS = ['subscribe', 'unsubscribe', 'ping', 'heartbeat'] as const;

/** The alert channels: alerts of the smart-money feed and of the fade-finder feed (spec 6 rule 7 leaves the names to us). */
export const ALERT_CHANNELS = ['smart_money', 'fade_finder'] as const;
export type AlertChannel = (typeof ALERT_CHANNELS)[number];

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
  FEED_READY: 'FEED_READY',
  FEED_DEGRADED: 'FEED_DEGRADED',
  COALESCED: 'COALESCED',
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
} as const;

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
    'Upgrade to a WebSocket. The key goes in the X-API-Key header or the api_key query parameter; a missing, invalid or revoked key is refused at the upgrade with HTTP 401 and a JSON body naming the reason, too many connections for the key with 429. The first message is {"type":"welcome","epoch","plan","channels"}.',
    '',
    'Client messages (JSON text): {"type":"subscribe"|"unsubscribe","channel":C,"market_ids":[…]} where market_ids are native ids or platform:market_id (the prefix is stripped); live_games takes "event_ids" instead; arb and ev take match-group ids, or none (or ["*"]) for every group; ' +
      `{"type":"subscribe","channel":"${ticker}","all":true} subscribes an Enterprise key to every market of the venue; smart_money and fade_finder take no market_ids (or ["*"]): every alert of the feed; {"type":"ping"} is answered with pong. "action" is accepted in place of "type" ({"action":"subscribe","channel":"smart_money"}) and {"action":"heartbeat"} (or {"type":"heartbeat"}) is a ping; an unknown type or action is an error with code BAD_REQUEST.`,
    '',
    `Channels: prices (price_update: native market_id, source = venue slug, yes_bid, yes_ask, no_bid, no_ask, last_price in cents 0–100, volume; a snapshot with "snapshot":true at once, then every change), orderbook (orderbook_update: yes/no bids and asks as [cents, size], no empty on yes-only venues), live_games (live_game price changes and trade messages of the games' matched markets), arb and ev (a group's opportunities as /arb and /ev give them, each leg with platform and source), smart_money (type smart_money: each alert of the smart-money feed, alert_type smart_money, insider or captain_hook, as /alerts/smart-money gives it) and fade_finder (type fade_finder: each fade alert, as /alerts/fade-finder gives it; both with the entitlement of those endpoints), ${ticker} (ticker: decimal-dollar strings yes_bid_dollars, yes_ask_dollars, price_dollars).`,
    '',
    'Server messages carry a type: subscribed / unsubscribed (one per venue of the request: the accepted native market_ids and their venue as source), price_update, orderbook_update, live_game, trade, ticker, arb, ev, arb_expired, ev_expired, smart_money, fade_finder, warning and error (with a code and a message), ready, pong. Every streamed message carries its channel, a per-topic seq, the process epoch and ts (server send time, ms since epoch): a seq gap or a new epoch means reconcile over REST (/prices/bulk). A connection that has sent a message with "action" (or a heartbeat) gets every streamed message with its fields both at the top level and again under data, the envelope clients of the hosted API read.',
    '',
    `Codes: UNKNOWN_ID (warning: a market id the venues do not list, event tickers included), UNKNOWN_EVENT_ID (warning: live_games), UNKNOWN_CHANNEL (warning), BAD_JSON and BAD_REQUEST (error: not JSON / not a valid message), NOT_ENTITLED (error: the plan does not include the channel), SUBSCRIPTION_LIMIT (error), RATE_LIMITED (error: more than 20 subscribe/unsubscribe messages a second, or more client messages of any kind than the connection's budget: ${MESSAGE_BUDGET.burst} at once, then ${MESSAGE_BUDGET.perSecond} a second; the refused message is not processed, and a client that goes on sending without a token is closed with ${CLOSE.POLICY}), FEED_INTERRUPTED (warning: the venue feed disconnected, stalled or lost sequence; prices may be stale), FEED_DEGRADED (warning: malformed frames dropped), FEED_READY (type ready: the feed is back; reconcile over REST), COALESCED (warning: you read slower than updates arrive and now get the latest per market).`,
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
        401: err,
        426: { ...err, description: 'A plain HTTP GET with a good key: upgrade to a WebSocket' },
        429: err,
      },
    },
  };
}
