import { randomUUID } from 'node:crypto';
import type * as UWS from 'uWebSockets.js';
import type { Logger } from '../core/log.js';
import { loadUws } from './uws.js';

/** A response: a pre-serialized body (serialize once per state change, not per request). */
export interface Reply {
  readonly status: number;
  readonly body: string | Uint8Array;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly contentType?: string | undefined;
}

/** What a handler sees of a request: copied out of uWS's request object, which dies after the handler returns. */
export interface RequestCtx {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly params: Readonly<Record<string, string>>;
  /** The request headers the pipeline reads (x-api-key, x-request-id, accept, user-agent, x-forwarded-for), lower-case names. */
  readonly headers: ReadonlyMap<string, string>;
  readonly requestId: string;
  readonly startedAt: number;
  /** Response headers the request pipeline adds (rate-limit headers, …). */
  readonly responseHeaders: Record<string, string>;
  readonly log: Logger;
}

export type Handler = (ctx: RequestCtx) => Reply | Promise<Reply>;

interface Route {
  readonly method: string;
  readonly parts: readonly string[];
  readonly handler: Handler;
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  414: '414 URI Too Long',
  422: '422 Unprocessable Entity',
  426: '426 Upgrade Required',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

/** Request headers copied into the context (lower-case). */
const READ_HEADERS = ['x-api-key', 'x-request-id', 'accept', 'user-agent', 'x-forwarded-for'] as const;

/**
 * A UUID in its canonical 8-4-4-4-12 hex form, whatever its version and variant bits (the nil UUID,
 * v0/v9+ and non-RFC variants included): a client's correlation id is echoed as long as it is a UUID.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The spec's error body (section 7), with a machine-readable code and the request id. */
export function errorReply(status: number, code: string, message: string, extra: Record<string, unknown> = {}, retryAfterSec?: number): Reply {
  return {
    status,
    body: JSON.stringify({ error: message, success: false, code, ...extra }),
    ...(retryAfterSec !== undefined ? { headers: { 'Retry-After': String(retryAfterSec) } } : {}),
  };
}

export function jsonReply(body: unknown, status = 200): Reply {
  return { status, body: JSON.stringify(body) };
}

/**
 * The HTTP front: uWebSockets.js behind a small interface (routes of method + path with `:param`
 * segments, handlers returning a Reply), so the server library stays swappable and handlers stay
 * testable. Copies what it needs from `req` up front, attaches onAborted before any await, corks
 * writes that happen after async work, assigns the request id (spec 4: echo a UUID X-Request-ID,
 * replace anything else), logs each request, and turns a throw into a 500 without a stack trace.
 */
export class HttpServer {
  readonly uws = loadUws();
  readonly app: UWS.TemplatedApp;
  private readonly routes: Route[] = [];
  private listenSocket: UWS.us_listen_socket | undefined;
  port = 0;
  /** Runs before every routed handler (the access layer installs itself here). */
  before: ((ctx: RequestCtx) => Reply | undefined) | undefined;

  constructor(private readonly log: Logger) {
    this.app = this.uws.App();
    this.app.any('/*', (res, req) => this.dispatch(res, req));
  }

  get(path: string, handler: Handler): void {
    this.routes.push({ method: 'get', parts: path.split('/').filter(Boolean), handler });
  }

  private match(method: string, path: string): { route: Route; params: Record<string, string> } | 'method' | undefined {
    const parts = path.split('/').filter(Boolean);
    let wrongMethod = false;
    for (const r of this.routes) {
      if (r.parts.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length; i++) {
        const rp = r.parts[i]!;
        if (rp.charCodeAt(0) === 58 /* : */) params[rp.slice(1)] = parts[i]!;
        else if (rp !== parts[i]) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      if (r.method !== method) {
        wrongMethod = true;
        continue;
      }
      return { route: r, params };
    }
    return wrongMethod ? 'method' : undefined;
  }

  private dispatch(res: UWS.HttpResponse, req: UWS.HttpRequest): void {
    const startedAt = performance.now();
    const method = req.getMethod();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    // Only the headers the request pipeline reads: a native getHeader each beats walking them all.
    const headers = new Map<string, string>();
    for (const h of READ_HEADERS) {
      const v = req.getHeader(h);
      if (v !== '') headers.set(h, v);
    }
    const given = headers.get('x-request-id');
    const requestId = given && UUID.test(given) ? given : randomUUID();
    const ctx: RequestCtx = {
      method,
      path,
      rawQuery,
      params: {},
      headers,
      requestId,
      startedAt,
      responseHeaders: {},
      log: this.log,
    };
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const finish = (reply: Reply): void => {
      if (aborted) return;
      res.cork(() => this.write(res, ctx, reply));
    };
    const m = this.match(method, path);
    if (m === undefined || m === 'method') {
      finish(
        m === 'method'
          ? errorReply(405, 'method_not_allowed', `${method.toUpperCase()} is not allowed on ${path}; all endpoints are GET`)
          : errorReply(404, 'not_found', `no route ${path}`),
      );
      return;
    }
    (ctx as { params: Record<string, string> }).params = m.params;
    try {
      const early = this.before?.(ctx);
      if (early) return finish(early);
      const out = m.route.handler(ctx);
      if (out instanceof Promise) out.then(finish, (e: unknown) => finish(this.crash(ctx, e)));
      else finish(out);
    } catch (e) {
      finish(this.crash(ctx, e));
    }
  }

  private crash(ctx: RequestCtx, e: unknown): Reply {
    ctx.log.error({ requestId: ctx.requestId, path: ctx.path, err: e instanceof Error ? e.stack : String(e) }, 'request failed');
    return errorReply(500, 'internal_error', 'internal error', { request_id: ctx.requestId });
  }

  private write(res: UWS.HttpResponse, ctx: RequestCtx, reply: Reply): void {
    res.writeStatus(STATUS_TEXT[reply.status] ?? String(reply.status));
    res.writeHeader('content-type', reply.contentType ?? 'application/json');
    res.writeHeader('x-request-id', ctx.requestId);
    for (const k in ctx.responseHeaders) res.writeHeader(k, ctx.responseHeaders[k]!);
    if (reply.headers) for (const k in reply.headers) res.writeHeader(k, reply.headers[k]!);
    res.end(reply.body);
    const ms = performance.now() - ctx.startedAt;
    if (reply.status >= 500) this.log.warn({ requestId: ctx.requestId, path: ctx.path, status: reply.status, ms }, 'request');
    else if (this.log.isLevelEnabled('debug'))
      this.log.debug({ requestId: ctx.requestId, path: ctx.path, query: redactQuery(ctx.rawQuery), status: reply.status, ms }, 'request');
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (sock) => {
        if (!sock) return reject(new Error(`cannot listen on ${host}:${port} (in use or not permitted)`));
        this.listenSocket = sock;
        this.port = this.uws.us_socket_local_port(sock);
        resolve(this.port);
      });
    });
  }

  close(): void {
    if (this.listenSocket) this.uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
  }
}

/** Query string with api_key redacted, for logs (spec 5.3: keys in query strings leak into logs). */
export function redactQuery(q: string): string {
  return q.replace(/(^|&)(api_key=)[^&]*/gi, '$1$2[redacted]');
}
