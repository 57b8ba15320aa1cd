import type { WebSocketLike } from 'crossbook/client';

/** Whether the server took an unkeyed upgrade (false once it refused one: remembered for the page's life). */
let inBand = true;

/** The in-band login a browser sends as its first message (it cannot set an X-API-Key header on a WebSocket). */
export function authMessage(key: string): string {
  return JSON.stringify({ action: 'auth', api_key: key });
}

/**
 * How the dashboard's WebSocket authenticates: the one place that knows the transport of the key.
 *
 * First the in-band login: the socket opens with no credential in its URL and sends
 * `{"action":"auth","api_key":…}` as its first message; the server answers `auth`/`authenticated`,
 * then `welcome`, on which the stream subscribes.
 *
 * Until the server accepts a WebSocket without a key at the upgrade (branch `ws`), that upgrade is
 * refused (HTTP 401: the socket closes without opening), and every later connection of this
 * page falls back to the `api_key` query parameter, which the upgrade accepts today.
 * AT MERGE of `ws`: delete the two lines marked FALLBACK (the in-band login is then the only way,
 * and no key goes into a URL); or, for short-lived tokens, fetch `POST /api/v2/ws-token` first and
 * open `${url}?token=${token}` here instead of sending the message.
 */
export function wsConnector(key: string): (url: string) => WebSocketLike {
  return (url) => {
    // FALLBACK (remove at merge of branch ws): the upgrade refused an unkeyed socket before.
    if (!inBand) return new WebSocket(`${url}?api_key=${encodeURIComponent(key)}`);
    const ws = new WebSocket(url);
    let opened = false;
    ws.addEventListener('open', () => {
      opened = true;
      ws.send(authMessage(key));
    });
    // FALLBACK (remove at merge of branch ws): closed before it opened = the upgrade was refused.
    ws.addEventListener('close', () => (inBand = opened));
    return ws;
  };
}
