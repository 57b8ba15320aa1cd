import type * as UWS from 'uWebSockets.js';
import type { ServerFront } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import { HttpGuard, ListenError } from './guard.js';
import { redactPath, redactQuery } from './redact.js';
import { requestId } from './request-id.js';
import { loadUws } from './uws.js';

export { redactQuery } from './redact.js';

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
  /** The request headers the pipeline reads (the first field of each name; absent or empty: undefined). */
  readonly headers: RequestHeaders;
  readonly requestId: string;
  readonly startedAt: number;
  /** Response headers the request pipeline adds (rate-limit headers, …). */
  readonly responseHeaders: Record<string, string>;
  readonly log: Logger;
}

export type Handler = (ctx: RequestCtx) => Reply | Promise<Reply>;

/** Request headers copied into the context (lower-case). */
const READ_HEADERS = ['x-api-key', 'x-request-id', 'accept', 'user-agent', 'x-forwarded-for', 'connection'] as const;

/** The request headers a handler can read, by lower-case name. */
export type RequestHeaders = { readonly [K in HeaderName]: string | undefined };

type HeaderName = (typeof READ_HEADERS)[number];
type MutableHeaders = { -readonly [K in HeaderName]: string | undefined };

/** The path parameters of a route without any (shared: a handler only reads them). */
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

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
  431: '431 Request Header Fields Too Large',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
  505: '505 HTTP Version Not Supported',
};

/** A request's route and path parameters; 'method' when a route has the path and not the method. */
type Matched = { readonly route: Route; readonly params: Record<string, string> } | 'method' | 'post only' | undefined;

/** Distinct request paths whose route is remembered (all forgotten together when full). */
const MAX_MATCHED_PATHS = 4_096;

/** The methods every route answers (HEAD: the GET's status and headers, without the body). */
const ALLOW = 'GET, HEAD';

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
 *
 * Paths are canonical: no empty segment (`//api/v2/status`, `/api/v2/status/`) matches a route,
 * they answer 404 naming the canonical path. A path or query holding bytes that are not UTF-8
 * (raw, which uWS turns into U+FFFD, or percent-encoded) is a 400. `listen` puts `HttpGuard` in
 * front (see guard.ts), unless the configuration turns the front off.
 */
export class HttpServer {
  readonly uws = loadUws();
  readonly app: UWS.TemplatedApp;
  private readonly routes: Route[] = [];
  /** Matches by request path and method (paths repeat: the few endpoints a client polls). */
  private readonly matched = new Map<string, Matched>();
  /** The key and match of the last request routed (undefined: none since the routes changed). */
  private lastKey: string | undefined;
  private lastMatch: Matched;
  private listenSocket: UWS.us_listen_socket | undefined;
  private guard: HttpGuard | undefined;
  /** Front off: the router checks request framing (see `framingRefusal`). */
  private checkFraming = false;
  /**
   * Set by close(). uWebSockets.js 20.30 cannot close the keep-alive connections it holds (no
   * App.close), so a proxy's idle upstream connection can still bring a request while the service
   * shuts down and its stores close: it gets a 503 that closes the connection, not a 500.
   */
  private closing = false;
  port = 0;
  /** Runs before every routed handler (the access layer installs itself here). */
  before: ((ctx: RequestCtx) => Reply | undefined) | undefined;

  constructor(private readonly log: Logger) {
    this.app = this.uws.App();
    // GET on its own route: uWS prefers it to `any` for a GET, so dispatch need not ask the method.
    this.app.get('/*', (res, req) => this.dispatch(res, req, 'get'));
    this.app.any('/*', (res, req) => this.dispatch(res, req, req.getMethod()));
  }

  get(path: string, handler: Handler): void {
    this.add('get', path, handler);
  }

  /** A POST route (its request body, if any, is not read: the one POST route, /ws-token, takes none). */
  post(path: string, handler: Handler): void {
    this.add('post', path, handler);
  }

  private add(method: 'get' | 'post', path: string, handler: Handler): void {
    this.routes.push({ method, parts: path.split('/').filter(Boolean), handler });
    this.matched.clear();
    this.lastKey = undefined;
  }

  /** The route of a request, from the paths matched before when it is one of them. */
  private route(method: string, path: string): Matched {
    const key = method === 'get' ? path : `${method} ${path}`;
    // The previous request's path first: comparing it is cheaper than hashing a fresh string.
    if (key === this.lastKey) return this.lastMatch;
    let m = this.matched.get(key);
    if (m === undefined && !this.matched.has(key)) {
      m = this.match(method, path);
      if (this.matched.size >= MAX_MATCHED_PATHS) this.matched.clear();
      this.matched.set(key, m);
    }
    this.lastKey = key;
    this.lastMatch = m;
    return m;
  }

  private match(method: string, path: string): Matched {
    const parts = path.split('/').filter(Boolean);
    let wrongMethod: Matched = undefined;
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
      if (r.method !== method && !(method === 'head' && r.method === 'get')) {
        wrongMethod = r.method === 'post' ? 'post only' : 'method';
        continue;
      }
      return { route: r, params };
    }
    return wrongMethod;
  }

  private dispatch(res: UWS.HttpResponse, req: UWS.HttpRequest, method: string): void {
    const startedAt = performance.now();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const headers = noHeaders();
    // Front off: the framing check walks every header anyway, and reads the pipeline's on the way.
    const framing = this.checkFraming ? framingRefusal(req, headers) : undefined;
    // Only the headers the request pipeline reads: a native getHeader each beats walking them all.
    if (!this.checkFraming)
      for (const h of READ_HEADERS) {
        const v = req.getHeader(h);
        if (v !== '') headers[h] = v;
      }
    const given = headers['x-request-id'];
    const ctx: RequestCtx = {
      method,
      path,
      rawQuery,
      params: NO_PARAMS,
      headers,
      requestId: given !== undefined && UUID.test(given) ? given : requestId(),
      startedAt,
      responseHeaders: {},
      log: this.log,
    };
    if (framing) {
      // Answered on the next turn, not now: uWS runs a request pipelined behind one it has answered
      // even when that answer closes, but drops the connection instead while an answer is pending.
      ctx.responseHeaders['connection'] = 'close';
      const finish = this.later(res, ctx);
      setImmediate(() => finish(errorReply(400, 'bad_request', framing)));
      return;
    }
    // Answers given before this handler returns are written as they are: uWS corks the socket
    // around the handler, so neither `cork` nor `onAborted` is needed for them.
    const early = this.refusal(ctx);
    if (early) return this.write(res, ctx, early);
    const m = this.route(method, path);
    if (m === undefined || m === 'method' || m === 'post only')
      return this.write(
        res,
        ctx,
        m === undefined ? errorReply(404, 'not_found', `no route ${redactPath(path)}`) : notAllowed(method, path, m === 'post only' ? 'POST' : ALLOW),
      );
    (ctx as { params: Readonly<Record<string, string>> }).params = m.params;
    let out: Reply | Promise<Reply>;
    try {
      out = this.before?.(ctx) ?? m.route.handler(ctx);
    } catch (e) {
      out = this.crash(ctx, e);
    }
    if (out instanceof Promise) {
      const finish = this.later(res, ctx);
      out.then(finish, (e: unknown) => finish(this.crash(ctx, e)));
    } else this.write(res, ctx, out);
  }

  /** For an answer given after the handler returns: attaches onAborted now, and writes corked then (unless aborted). */
  private later(res: UWS.HttpResponse, ctx: RequestCtx): (reply: Reply) => void {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    return (reply) => {
      if (!aborted) res.cork(() => this.write(res, ctx, reply));
    };
  }

  /** What is answered before routing: a guard refusal, a non-canonical path, bytes that are not UTF-8. */
  private refusal(ctx: RequestCtx): Reply | undefined {
    if (this.closing) {
      ctx.responseHeaders['connection'] = 'close';
      return errorReply(503, 'shutting_down', 'the service is shutting down; retry on a new connection', {}, 1);
    }
    const refused = this.guard?.route.parse(ctx.path, ctx.rawQuery);
    if (refused) {
      (ctx as { path: string }).path = '(refused before routing)';
      (ctx as { rawQuery: string }).rawQuery = '';
      ctx.responseHeaders['connection'] = 'close';
      return errorReply(refused.status, refused.code, refused.message);
    }
    if (ctx.path.includes('\uFFFD')) return errorReply(400, 'validation.malformed_path', 'the path is not valid UTF-8');
    if (ctx.rawQuery.includes('\uFFFD')) return errorReply(400, 'validation.malformed_query', 'the query string is not valid UTF-8');
    if (ctx.path.includes('//') || (ctx.path.length > 1 && ctx.path.endsWith('/'))) {
      const canonical = `/${ctx.path.split('/').filter(Boolean).join('/')}`;
      return errorReply(404, 'not_found', `no route ${redactPath(ctx.path)}; paths have no empty segments (${redactPath(canonical)})`);
    }
    return undefined;
  }

  private crash(ctx: RequestCtx, e: unknown): Reply {
    ctx.log.error({ requestId: ctx.requestId, path: redactPath(ctx.path), err: e instanceof Error ? e.stack : String(e) }, 'request failed');
    return errorReply(500, 'internal_error', 'internal error', { request_id: ctx.requestId });
  }

  private write(res: UWS.HttpResponse, ctx: RequestCtx, reply: Reply): void {
    const extra = ctx.responseHeaders;
    const close = extra['connection'] === 'close' || ctx.headers.connection?.toLowerCase() === 'close';
    if (close || ctx.method === 'head') writeEach(res, ctx, reply, close);
    else {
      // The status line and every header in one native call: uWS writes the status as given, then
      // "\r\n", so the bytes are those of a writeHeader per header.
      let head = (reply.contentType === undefined ? JSON_HEAD[reply.status] : undefined) ?? headOf(reply);
      head += ctx.requestId;
      for (const k in extra) head += `\r\n${k}: ${extra[k]}`;
      if (reply.headers) for (const k in reply.headers) head += `\r\n${k}: ${reply.headers[k]}`;
      res.writeStatus(head);
      res.end(reply.body);
    }
    if (reply.status >= 500)
      this.log.warn({ requestId: ctx.requestId, path: redactPath(ctx.path), status: reply.status, ms: performance.now() - ctx.startedAt }, 'request');
    else if (this.log.isLevelEnabled('debug'))
      this.log.debug(
        {
          requestId: ctx.requestId,
          path: redactPath(ctx.path),
          query: redactQuery(ctx.rawQuery),
          status: reply.status,
          ms: performance.now() - ctx.startedAt,
          ...(ctx.headers['x-forwarded-for'] !== undefined ? { forwardedFor: ctx.headers['x-forwarded-for'] } : {}),
        },
        'request',
      );
  }

  /**
   * Listens on host:port; resolves with the port. `front` guard (the default): uWS on an ephemeral
   * loopback port of its own, `HttpGuard` on the address. Loopback TCP rather than a Unix socket:
   * its kernel buffers grow to megabytes, a Unix socket's stop at the system's default send
   * buffer (about 200 KB), and the hub would coalesce WebSocket clients that keep up. `front` off:
   * uWS on the address itself, for a deployment behind a proxy that speaks HTTP/1.1 to it and
   * normalizes request framing; the router then refuses Transfer-Encoding and a repeated
   * Content-Length itself, and HTTP/1.0 and heads uWS cannot parse get no answer (README: Deployment).
   */
  async listen(host: string, port: number, front: ServerFront = 'guard'): Promise<number> {
    if (front === 'off') {
      this.checkFraming = true;
      const sock = await new Promise<UWS.us_listen_socket | false>((resolve) => this.app.listen(host, port, resolve));
      if (!sock) throw new ListenError(`cannot listen on ${host}:${port} (in use, not permitted or not a local address)`);
      this.listenSocket = sock;
      this.port = this.uws.us_socket_local_port(sock);
      return this.port;
    }
    const inner = await new Promise<number>((resolve, reject) => {
      this.app.listen('127.0.0.1', 0, (sock) => {
        if (!sock) return reject(new Error('cannot listen on a loopback port for the HTTP server'));
        this.listenSocket = sock;
        resolve(this.uws.us_socket_local_port(sock));
      });
    });
    this.guard = new HttpGuard(inner);
    try {
      this.port = await this.guard.listen(host, port);
    } catch (e) {
      this.close();
      throw e;
    }
    return this.port;
  }

  close(): void {
    this.closing = true;
    this.guard?.close();
    this.guard = undefined;
    if (this.listenSocket) this.uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
  }
}

/** Headers of a request before any is read: every name present, so each context's object has one shape. */
function noHeaders(): MutableHeaders {
  return { 'x-api-key': undefined, 'x-request-id': undefined, accept: undefined, 'user-agent': undefined, 'x-forwarded-for': undefined, connection: undefined };
}

/** The state of the head walk in progress (`framingRefusal`): one walk at a time, and no closure per request. */
let walked = noHeaders();
let lengths = 0;
let refused: string | undefined;

function walk(k: string, v: string): void {
  switch (k) {
    case 'x-api-key':
    case 'x-request-id':
    case 'accept':
    case 'user-agent':
    case 'x-forwarded-for':
    case 'connection':
      // The first field of a name, as getHeader would give it (kept when empty, dropped after the walk).
      walked[k] ??= v;
      break;
    case 'transfer-encoding':
      refused ??= 'Transfer-Encoding is not accepted (every endpoint is GET and takes no body)';
      break;
    case 'content-length':
      if (++lengths > 1) refused ??= 'more than one Content-Length header field';
  }
}

/**
 * Front off: reads the pipeline's request headers into `headers` (one walk of the head instead of
 * a getHeader each) and says what the guard's head check would refuse in a request's framing (any
 * Transfer-Encoding, more than one Content-Length), as the message of a 400 that closes the
 * connection; undefined when the framing is sound. uWS 20.30 takes the first Content-Length and
 * ignores Transfer-Encoding alone, so either would let the bytes after the head run as another
 * request (a malformed Content-Length, or one beside Transfer-Encoding, it refuses itself by closing).
 */
function framingRefusal(req: UWS.HttpRequest, headers: MutableHeaders): string | undefined {
  walked = headers;
  lengths = 0;
  refused = undefined;
  req.forEach(walk);
  for (const h of READ_HEADERS) if (headers[h] === '') headers[h] = undefined;
  return refused;
}

/** The status line and headers of an answer, up to the request id's value. */
function headOf(reply: Reply): string {
  return `${STATUS_TEXT[reply.status] ?? String(reply.status)}\r\ncontent-type: ${reply.contentType ?? 'application/json'}\r\nx-request-id: `;
}

/** `headOf` a JSON answer, by status. */
const JSON_HEAD: Readonly<Record<number, string>> = Object.fromEntries(Object.keys(STATUS_TEXT).map((s) => [s, headOf({ status: Number(s), body: '' })]));

/** An answer a header at a time: a HEAD's (its Content-Length written here), and one that closes the connection. */
function writeEach(res: UWS.HttpResponse, ctx: RequestCtx, reply: Reply, close: boolean): void {
  res.writeStatus(STATUS_TEXT[reply.status] ?? String(reply.status));
  res.writeHeader('content-type', reply.contentType ?? 'application/json');
  res.writeHeader('x-request-id', ctx.requestId);
  for (const k in ctx.responseHeaders) if (k !== 'connection') res.writeHeader(k, ctx.responseHeaders[k]!);
  if (reply.headers) for (const k in reply.headers) res.writeHeader(k, reply.headers[k]!);
  // uWS's end(body, true) writes "Connection: close" itself unless the request carried it; a second
  // one of ours would repeat the header. A HEAD answer (endWithoutBody) and a request that asked to
  // close get ours.
  if (close && (ctx.method === 'head' || uwsLeavesClose(ctx))) res.writeHeader('connection', 'close');
  if (ctx.method === 'head') {
    // The GET's headers, its length included, and no body (uWS 20.30's endWithoutBody writes no Content-Length).
    res.writeHeader('content-length', String(typeof reply.body === 'string' ? Buffer.byteLength(reply.body) : reply.body.byteLength));
    res.endWithoutBody();
  } else res.end(reply.body, close);
}

/** Whether the request itself asked to close, in which case uWS writes no "Connection: close" of its own. */
function uwsLeavesClose(ctx: RequestCtx): boolean {
  return ctx.headers.connection?.toLowerCase() === 'close';
}

/** 405 with the Allow header (RFC 9110 15.5.6). */
function notAllowed(method: string, path: string, allow = ALLOW): Reply {
  return {
    ...errorReply(405, 'method_not_allowed', `${method.toUpperCase()} is not allowed on ${redactPath(path)}; it answers ${allow}`),
    headers: { Allow: allow },
  };
}
