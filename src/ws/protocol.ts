import { z } from 'zod';

/**
 * The WebSocket protocol of /api/v2/ws (spec section 6; the parts the spec leaves "not shown"
 * are ours and documented in README "WebSocket").
 *
 * Client → server: `{"type":"subscribe"|"unsubscribe","channel":"prices"|"orderbook"|"live_games"|"arb"|"ev"|"<venue_a>_prices","market_ids":[…]}`
 * (`event_ids` for live_games), and `{"type":"ping"}`.
 * Server → client: `welcome`, `subscribed`, `unsubscribed`, `price_update`, `orderbook_update`,
 * `ticker`, `warning` and `error` (each with a `code`), `ready`, `pong`. Streamed messages carry a
 * per-topic `seq`, the process `epoch` and `ts` (send time, ms).
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

/** Close codes (4000–4999 are ours). */
export const CLOSE = {
  BACKPRESSURE: 4008,
  CONNECTION_LIMIT: 4029,
  SHUTDOWN: 1001,
} as const;
