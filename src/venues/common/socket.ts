import { realClock } from '../../core/clock.js';
import { Observable } from 'rxjs';
import WebSocket from 'ws';
import type { Logger } from '../../core/log.js';

export type SocketEvent =
  | { readonly kind: 'open'; readonly send: (data: string) => void; readonly attempt: number }
  /** `bytes`: what `data` was decoded from, as `ws` delivered it (the capture copies them instead of encoding the text again). */
  | { readonly kind: 'message'; readonly data: string; readonly localTimestamp: number; readonly bytes?: Buffer | undefined }
  /** stalled: we closed it because nothing (not even a pong) came for 2.5 heartbeats. */
  | { readonly kind: 'close'; readonly code: number; readonly reason: string; readonly retryInMs: number; readonly stalled: boolean };

export interface SocketOptions {
  readonly url: string;
  readonly log?: Logger;
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Ping this often; a connection silent (no frame, no pong) for 2.5× this is treated as stalled. */
  readonly heartbeatMs?: number;
  readonly headers?: Record<string, string>;
  /** Largest accepted frame; a larger one closes the connection (ws maxPayload). */
  readonly maxPayload?: number;
  /** Makes the WebSocket of each attempt (default: the `ws` client); tests hand in a scripted one. */
  readonly createWebSocket?: ((url: string, options: WebSocket.ClientOptions) => WebSocket) | undefined;
  /** Receive stamps and the stall check read this (the engine's clock; default wall time). */
  readonly now?: (() => number) | undefined;
}

/**
 * A WebSocket that reconnects with exponential backoff and jitter, as a cold Observable:
 * subscribing connects, unsubscribing closes. Emits `open` (with a `send`), every text
 * `message`, and `close` before each retry. A stalled connection (no frames and no pongs) is
 * terminated and counts as a close, so "stall without close" is never silent.
 */
export function reconnectingSocket(opts: SocketOptions): Observable<SocketEvent> {
  const min = opts.minBackoffMs ?? 250;
  const max = opts.maxBackoffMs ?? 15_000;
  const hb = opts.heartbeatMs ?? 10_000;
  const now = opts.now ?? realClock.now;
  return new Observable<SocketEvent>((sub) => {
    let ws: WebSocket | undefined;
    let attempt = 0;
    let closed = false;
    let retryTimer: NodeJS.Timeout | undefined;
    let hbTimer: NodeJS.Timeout | undefined;
    let lastSeen = 0;

    const clearHb = (): void => {
      if (hbTimer) clearInterval(hbTimer);
      hbTimer = undefined;
    };

    const connect = (): void => {
      if (closed) return;
      attempt++;
      const sock = (opts.createWebSocket ?? ((u, o) => new WebSocket(u, o)))(opts.url, {
        headers: opts.headers,
        maxPayload: opts.maxPayload ?? 16 * 1024 * 1024,
        handshakeTimeout: Math.max(2_000, hb),
      });
      ws = sock;
      let opened = false;
      let stalled = false;
      sock.on('open', () => {
        opened = true;
        lastSeen = now();
        const thisAttempt = attempt;
        attempt = 0;
        clearHb();
        const check = (): void => {
          if (ws !== sock || stalled) return;
          if (now() - lastSeen > hb * 2.5) {
            opts.log?.warn({ url: opts.url }, 'venue socket stalled; terminating');
            stalled = true;
            sock.terminate();
            return;
          }
          if (sock.readyState === WebSocket.OPEN) sock.ping();
        };
        let lastTick = now();
        hbTimer = setInterval(() => {
          // A timer that runs late means this process was busy (a long task, a GC pause), and
          // timers run before the poll phase reads what arrived meanwhile: judge the silence after
          // that read (setImmediate), so our own stall is never taken for the venue's.
          const t = now();
          const late = t - lastTick > hb * 1.5;
          lastTick = t;
          if (late) setImmediate(check);
          else check();
        }, hb);
        hbTimer.unref?.();
        sub.next({
          kind: 'open',
          attempt: thisAttempt,
          send: (data: string) => {
            if (sock.readyState === WebSocket.OPEN) sock.send(data);
          },
        });
      });
      sock.on('message', (data, isBinary) => {
        lastSeen = now();
        const text = isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString();
        sub.next({ kind: 'message', data: text, localTimestamp: lastSeen, bytes: Buffer.isBuffer(data) ? data : undefined });
      });
      sock.on('pong', () => {
        lastSeen = now();
      });
      sock.on('error', (err) => {
        opts.log?.debug({ url: opts.url, err: err.message }, 'venue socket error');
      });
      sock.on('close', (code, reasonBuf) => {
        clearHb();
        if (ws === sock) ws = undefined;
        if (closed) return;
        const exp = Math.min(max, min * 2 ** Math.min(attempt, 16));
        const retryInMs = Math.round(exp / 2 + Math.random() * (exp / 2));
        const reason = stalled ? `stalled: nothing for ${Math.round((hb * 2.5) / 1000)} s` : reasonBuf.toString() || (opened ? 'closed' : 'connect failed');
        sub.next({ kind: 'close', code, reason, retryInMs, stalled });
        retryTimer = setTimeout(connect, retryInMs);
      });
    };

    connect();
    return () => {
      closed = true;
      clearHb();
      if (retryTimer) clearTimeout(retryTimer);
      if (ws) {
        ws.removeAllListeners('message');
        ws.on('error', () => undefined);
        ws.terminate();
      }
    };
  });
}
