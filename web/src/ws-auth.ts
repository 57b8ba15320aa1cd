import type { WebSocketLike } from 'crossbook/client';

/** The in-band login a browser sends as its first message (it cannot set an X-API-Key header on a WebSocket). */
export function authMessage(key: string): string {
  return JSON.stringify({ action: 'auth', api_key: key });
}

/**
 * How the dashboard's WebSocket authenticates: the one place that knows the transport of the key.
 * The socket opens with no credential in its URL (a key in a URL ends up in logs) and sends
 * `{"action":"auth","api_key":…}` as its first message; the server answers `auth`/`authenticated`,
 * then `welcome`, on which the stream subscribes. A refused key is answered `AUTH_FAILED` and the
 * socket is closed (4001).
 */
export function wsConnector(key: string): (url: string) => WebSocketLike {
  return (url) => {
    const ws = new WebSocket(url);
    ws.addEventListener('open', () => ws.send(authMessage(key)));
    return ws;
  };
}
