import { z } from 'zod';
import { typedReply, type Api } from '../access/api.js';
import { time } from '../views/schemas.js';
import type { WsHub } from './hub.js';

/** The answer of POST /ws-token. */
export const WsTokenBody = z
  .object({
    token: z.string().describe('opens one WebSocket connection as ?token=… in the URL, once, until expires_at'),
    expires_at: time('when the token stops opening connections'),
    expires_in: z.number().int().describe('seconds from now until expires_at'),
  })
  .strict();

/**
 * POST /api/v2/ws-token: a key (X-API-Key header) buys a short-lived, single-use token for the
 * WebSocket URL, for clients that cannot set a header on a WebSocket (a browser) and should not
 * put the key itself in a URL that ends up in logs. Through the access layer like every route
 * (401 without a good key, the per-second and monthly limits).
 */
export function registerWsToken(api: Api, hub: WsHub): void {
  api.route({
    path: '/ws-token',
    method: 'post',
    summary: 'A short-lived token for the WebSocket URL',
    description:
      "Returns a token that opens one WebSocket connection (`/api/v2/ws?token=…`) within its lifetime (config websocket.tokenTtlSec, default 5 minutes), once; the connection is the key's as if it had sent the key. An expired, used or unknown token is refused at the upgrade with 401 auth.invalid_token. Tokens are held in memory: a restart forgets them. The request takes no body and no query parameters.",
    tags: ['websocket'],
    query: z.object({}).strict(),
    response: WsTokenBody,
    handler: ({ key }) => {
      const t = hub.issueToken(key!);
      return typedReply(WsTokenBody, { token: t.token, expires_at: new Date(t.expiresAt).toISOString(), expires_in: Math.round(t.ttlMs / 1000) });
    },
  });
}
