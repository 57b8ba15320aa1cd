import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { SimFault, SimServer } from './types.js';

/**
 * The small HTTP + WebSocket toolkit every simulated venue is built on: node:http for REST and the
 * `ws` server for streams (not uWebSockets.js: the simulator must be able to misbehave on purpose,
 * e.g. stop answering pings during a stall, which ws allows with autoPong:false).
 */

export type RestHandler = (query: URLSearchParams, params: Record<string, string>, req: IncomingMessage) => unknown | Promise<unknown>;

interface Route {
  readonly parts: string[];
  readonly handler: RestHandler;
}

/** Thrown by a handler to answer with a status and a JSON error body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(typeof body === 'string' ? body : JSON.stringify(body));
  }
}

export interface SimHttp {
  readonly server: Server;
  readonly wss: WebSocketServer;
  /** Registers GET `path` (segments starting with ':' are parameters). */
  get(path: string, handler: RestHandler): void;
  /** Accepts WebSocket upgrades on `path`. */
  ws(path: string, onConnection: (socket: WebSocket, req: IncomingMessage) => void): void;
  listen(host: string, port: number): Promise<{ host: string; port: number }>;
  /** Drops every open WebSocket abruptly (fault: disconnect). */
  dropAll(): void;
  /** While stalled nothing is answered: REST requests hang until the stall ends, pings go unanswered. */
  stallUntil: number;
  close(): Promise<void>;
}

export function createSimHttp(): SimHttp {
  const routes: Route[] = [];
  const wsRoutes = new Map<string, (socket: WebSocket, req: IncomingMessage) => void>();
  const wss = new WebSocketServer({ noServer: true, autoPong: false, maxPayload: 1 << 20 });

  const api: SimHttp = {
    server: createServer((req, res) => void handle(req, res)),
    wss,
    stallUntil: 0,
    get(path, handler) {
      routes.push({ parts: path.split('/').filter(Boolean), handler });
    },
    ws(path, onConnection) {
      wsRoutes.set(path, onConnection);
    },
    listen(host, port) {
      return new Promise((resolve, reject) => {
        api.server.once('error', reject);
        api.server.listen(port, host, () => {
          const a = api.server.address() as AddressInfo;
          resolve({ host, port: a.port });
        });
      });
    },
    dropAll() {
      for (const c of wss.clients) c.terminate();
    },
    close() {
      for (const c of wss.clients) c.terminate();
      return new Promise((resolve) => {
        wss.close();
        api.server.closeAllConnections?.();
        api.server.close(() => resolve());
      });
    },
  };

  api.server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://sim').pathname;
    const onConnection = wsRoutes.get(path);
    if (!onConnection) {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      // Answer pings ourselves so that a stall can withhold the pong.
      ws.on('ping', (data) => {
        if (Date.now() >= api.stallUntil) ws.pong(data);
      });
      onConnection(ws, req);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const wait = api.stallUntil - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const u = new URL(req.url ?? '/', 'http://sim');
    const parts = u.pathname.split('/').filter(Boolean);
    for (const r of routes) {
      if (r.parts.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length; i++) {
        const rp = r.parts[i]!;
        if (rp.startsWith(':')) params[rp.slice(1)] = decodeURIComponent(parts[i]!);
        else if (rp !== parts[i]) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      try {
        const body = await r.handler(u.searchParams, params, req);
        send(res, 200, body);
      } catch (e) {
        if (e instanceof HttpError) send(res, e.status, e.body);
        else send(res, 500, { error: (e as Error).message });
      }
      return;
    }
    send(res, 404, { error: 'not found' });
  }

  return api;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Gives a protocol server the `garbage` fault: for `ms`, its own `malformed` frames at `perSecond`
 * (in batches every 100 ms), then it stops by itself. Other faults pass through. `garbageFrames`
 * counts the bad frames sent so far to each connection.
 */
export function withGarbage(server: SimServer): SimServer {
  const timers = new Set<NodeJS.Timeout>();
  let sent = 0;
  return {
    ...server,
    get garbageFrames() {
      return sent;
    },
    fault(f: SimFault) {
      if (f.kind !== 'garbage') return server.fault(f);
      const end = Date.now() + f.ms;
      const batch = Math.max(1, Math.round((f.perSecond ?? 50) / 10));
      const t = setInterval(() => {
        if (Date.now() >= end) {
          clearInterval(t);
          timers.delete(t);
          return;
        }
        server.fault({ kind: 'malformed', count: batch });
        sent += batch;
      }, 100);
      t.unref?.();
      timers.add(t);
    },
    async close() {
      for (const t of timers) clearInterval(t);
      await server.close();
    },
  };
}

/**
 * The `reorder` fault on one connection: once armed, the next frame of a sequence is held back and
 * sent right after the following frame of the same sequence (or alone after 250 ms).
 */
export class Reorder {
  private armed = false;
  private held: { key: string; text: string; timer: NodeJS.Timeout } | undefined;

  arm(): void {
    this.armed = true;
  }

  /** Sends frame `text` of sequence `key` through `send`, out of order when armed. */
  send(key: string, text: string, send: (text: string) => void): void {
    const h = this.held;
    if (h && h.key === key) {
      this.held = undefined;
      clearTimeout(h.timer);
      send(text);
      send(h.text);
      return;
    }
    if (this.armed && !h) {
      this.armed = false;
      const timer = setTimeout(() => {
        const late = this.held;
        this.held = undefined;
        if (late) send(late.text);
      }, 250);
      timer.unref?.();
      this.held = { key, text, timer };
      return;
    }
    send(text);
  }
}
