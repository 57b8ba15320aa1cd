import { performance } from 'node:perf_hooks';
import type * as UWS from 'uWebSockets.js';
import type { ServerFront } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import { ClientAddresses } from './client-address.js';
import type { Cors } from './cors.js';
import { HttpGuard, ListenError, MAX_HEAD_BYTES, type Refusal } from './guard.js';
import { redactPath, redactQuery } from './redact.js';
import { requestId } from './request-id.js';
import { loadUws } from './uws.js';

/**
 * Bytes of a streamed answer written per cork: what uWS's cork buffer (16 KiB) holds with the chunk's
 * head. The uWS build in use (20.30) loses a chunk's data when a write does not fit in the cork
 * buffer and the corked bytes before it do not all go out at once (`AsyncSocket::uncork` returns
 * early when writing the cork buffer fails, before buffering the data passed to it; fixed upstream
 * by returning early only for optional writes): a client then sees a chunk head with no data behind
 * it ("Expected LF after chunk data"). A piece that fits is copied into the cork buffer and sent at
 * the cork's end by a write that buffers what the socket does not take, so nothing is lost.
 */
const STREAM_PIECE = 16 * 1024 - 512;

export { redactQuery } from './redact.js';

/** A response: a pre-serialized body (serialize once per state change, not per request). */
export interface Reply {
  readonly status: number;
  readonly body: string | Uint8Array;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly contentType?: string | undefined;
  /**
   * A streamed body instead of `body` (chunked): each chunk is written once the socket took the
   * one before, so a slow reader holds one chunk in memory; a client gone stops the iterator. A
   * chunk is the iterator's again once the next is asked for (the normalized cache's reader fills
   * its buffer anew): `pipe` has written it whole by then.
   */
  readonly stream?: AsyncIterable<string | Uint8Array> | undefined;
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
  /** Response headers the request pipeline adds (CORS, Allow, connection, …). */
  readonly responseHeaders: Record<string, string>;
  /**
   * The rate-limit headers the access layer sets (spec 8), per second and per month: each its
   * header lines, "\r\nName: value" joined ('' when none), written after the request id.
   */
  rateSecond: string;
  rateMonth: string;
  /**
   * What the access layer fills in (its ApiCtx: the validated query, decoded path parameters, key
   * and plan), declared on every context so each has one shape: added after the context is made,
   * they would cost it a property store of its own on every request.
   */
  readonly query?: unknown;
  readonly path_?: Readonly<Record<string, string>>;
  readonly key?: unknown;
  readonly plan?: unknown;
  readonly log: Logger;
}

export type Handler = (ctx: RequestCtx) => Reply | Promise<Reply>;

/** Request headers copied into the context (lower-case). */
const READ_HEADERS = ['x-api-key', 'x-request-id', 'accept', 'user-agent', 'x-forwarded-for', 'x-real-ip', 'connection', 'origin'] as const;

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
  204: '204 No Content',
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
  /** The last path that passed every check of the path alone (`refusal`). */
  private soundPath: string | undefined;
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
  /** Cross-origin access for the configured origins (`server.corsOrigins`); undefined: none. */
  cors: Cors | undefined;
  /** Runs before every routed handler (the access layer installs itself here). */
  before: ((ctx: RequestCtx) => Reply | undefined) | undefined;
  private readonly clients: ClientAddresses;
  /** The answer heads that repeat, as bytes (see HeadBytes). */
  private readonly heads = new HeadBytes();

  /** `trustProxy`: the proxies whose X-Forwarded-For / X-Real-IP are believed (`server.trustProxy`). */
  constructor(
    private readonly log: Logger,
    opts: { readonly trustProxy?: readonly string[] } = {},
  ) {
    this.clients = new ClientAddresses(opts.trustProxy);
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

  /**
   * The client's address for a request being handled (a route's or a WebSocket upgrade's: call it
   * before the handler returns or the response ends): the TCP peer, or the address a trusted proxy
   * forwarded (`server.trustProxy`; see client-address.ts).
   */
  clientAddress(res: UWS.HttpResponse, req: UWS.HttpRequest): string {
    return this.clients.resolve(peerOf(res), req.getHeader('x-forwarded-for') || undefined, req.getHeader('x-real-ip') || undefined);
  }

  /** `clientAddress` from a request's copied headers. */
  private clientOf(res: UWS.HttpResponse, ctx: RequestCtx): string {
    return this.clients.resolve(peerOf(res), ctx.headers['x-forwarded-for'], ctx.headers['x-real-ip']);
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
    // From perf_hooks: the global `performance` is a lazy getter Node runs on every read.
    const startedAt = performance.now();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const headers = noHeaders();
    // Front off: the framing check walks every header anyway, and reads the pipeline's on the way.
    const framing = this.checkFraming ? framingRefusal(req, headers, path.length + rawQuery.length) : undefined;
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
      rateSecond: '',
      rateMonth: '',
      query: undefined,
      path_: NO_PARAMS,
      key: undefined,
      plan: undefined,
      log: this.log,
    };
    if (framing) {
      // Answered on the next turn, not now: uWS runs a request pipelined behind one it has answered
      // even when that answer closes, but drops the connection instead while an answer is pending.
      ctx.responseHeaders['connection'] = 'close';
      const finish = this.later(res, ctx);
      setImmediate(() => finish(errorReply(framing.status, framing.code, framing.message)));
      return;
    }
    // Answers given before this handler returns are written as they are: uWS corks the socket
    // around the handler, so neither `cork` nor `onAborted` is needed for them.
    const early = this.refusal(ctx);
    if (early) return this.write(res, ctx, early);
    // A preflight from an allowed origin is answered before the method check (OPTIONS is not an API method).
    if (this.cors && headers.origin !== undefined) {
      const preflight = method === 'options' ? this.cors.preflight(ctx) : undefined;
      if (preflight) return this.write(res, ctx, preflight);
      this.cors.decorate(ctx);
    }
    // The API serves GET and HEAD, and POST on its few POST routes (ws-token): any other method is a 405, on every path.
    if (method !== 'get' && method !== 'head' && method !== 'post') return this.write(res, ctx, notAllowed(method, path));
    const m = this.route(method, path);
    if (m === undefined || m === 'method' || m === 'post only')
      return this.write(
        res,
        ctx,
        // A POST where no POST route is: the 405 any other method gets (the API is GET and HEAD but a few POST routes).
        m === undefined
          ? method === 'post'
            ? notAllowed(method, path)
            : errorReply(404, 'not_found', `no route ${redactPath(path)}`)
          : notAllowed(method, path, m === 'post only' ? 'POST' : ALLOW),
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
      if (refused.status === 405) ctx.responseHeaders['Allow'] = ALLOW;
      return errorReply(refused.status, refused.code, refused.message);
    }
    // The previous sound path again (clients poll the same few): only its query is left to check.
    if (ctx.path === this.soundPath) return ctx.rawQuery.includes('\uFFFD') ? MALFORMED_QUERY() : undefined;
    // uWS 20.30 answers no absolute-form target itself; should one reach the router, it is refused.
    if (ctx.path.charCodeAt(0) !== 47 /* / */) return errorReply(400, 'bad_request', 'the request target must be a path (origin-form: "/api/v2/…")');
    if (ctx.path.includes('\uFFFD')) return errorReply(400, 'validation.malformed_path', 'the path is not valid UTF-8');
    if (ctx.rawQuery.includes('\uFFFD')) return MALFORMED_QUERY();
    if (ctx.path.includes('//') || (ctx.path.length > 1 && ctx.path.endsWith('/'))) {
      const canonical = `/${ctx.path.split('/').filter(Boolean).join('/')}`;
      return errorReply(404, 'not_found', `no route ${redactPath(ctx.path)}; paths have no empty segments (${redactPath(canonical)})`);
    }
    this.soundPath = ctx.path;
    return undefined;
  }

  private crash(ctx: RequestCtx, e: unknown): Reply {
    ctx.log.error({ requestId: ctx.requestId, path: redactPath(ctx.path), err: e instanceof Error ? e.stack : String(e) }, 'request failed');
    return errorReply(500, 'internal_error', 'internal error', { request_id: ctx.requestId });
  }

  private write(res: UWS.HttpResponse, ctx: RequestCtx, reply: Reply): void {
    this.logRequest(res, ctx, reply.status);
    const extra = ctx.responseHeaders;
    const close = extra['connection'] === 'close' || ctx.headers.connection?.toLowerCase() === 'close';
    if (reply.stream !== undefined && ctx.method !== 'head') this.pipe(res, ctx, reply, reply.stream);
    else if (close || ctx.method === 'head') {
      writeEach(res, ctx, reply, close);
      void reply.stream?.[Symbol.asyncIterator]().return?.();
    } else {
      const head = this.heads.of(reply, ctx);
      if (head === undefined) res.writeStatus(fullHead(reply, ctx));
      else {
        if (reply.status !== 200) res.writeStatus(STATUS_BYTES[reply.status]!);
        res.writeHeader(head, ctx.requestId);
      }
      res.end(reply.body);
    }
  }

  /** The request's log line (a 5xx at warn, any other at debug), with the client's address: read before the answer is written. */
  private logRequest(res: UWS.HttpResponse, ctx: RequestCtx, status: number): void {
    if (status >= 500)
      this.log.warn(
        { requestId: ctx.requestId, client: this.clientOf(res, ctx), path: redactPath(ctx.path), status, ms: performance.now() - ctx.startedAt },
        'request',
      );
    else if (this.log.isLevelEnabled('debug'))
      this.log.debug(
        {
          requestId: ctx.requestId,
          client: this.clientOf(res, ctx),
          path: redactPath(ctx.path),
          query: redactQuery(ctx.rawQuery),
          status,
          ms: performance.now() - ctx.startedAt,
        },
        'request',
      );
  }

  /**
   * A streamed answer, as the uWS streaming examples do it: `onAborted` first, the head now, then
   * each chunk corked, in pieces of at most STREAM_PIECE bytes; when `write` reports backpressure
   * (false: uWS kept what it could not send) the next piece waits for `onWritable`, so a slow reader
   * never grows memory past one chunk. A
   * client gone ends the iterator (its readers close their files); an iterator that throws ends
   * the answer where it is (the route writes its own error line first).
   */
  private pipe(res: UWS.HttpResponse, ctx: RequestCtx, reply: Reply, stream: AsyncIterable<string | Uint8Array>): void {
    const it = stream[Symbol.asyncIterator]();
    const st: { aborted: boolean; wake: (() => void) | undefined } = { aborted: false, wake: undefined };
    res.onAborted(() => {
      st.aborted = true;
      const wake = st.wake;
      if (wake !== undefined) setImmediate(wake);
    });
    res.writeStatus(fullHead(reply, ctx));
    const drained = (): Promise<void> =>
      new Promise<void>((resolve) => {
        st.wake = resolve;
        res.onWritable(() => {
          st.wake = undefined;
          // On the next turn: uWS calls back outside Node's callback scope, so a promise settled
          // here would wait for some other event to run what awaits it.
          setImmediate(resolve);
          return true;
        });
      });
    const pump = async (): Promise<void> => {
      for (;;) {
        const n = await it.next();
        if (st.aborted) return;
        if (n.done === true) return void res.cork(() => res.end());
        const bytes = typeof n.value === 'string' ? Buffer.from(n.value) : n.value;
        // One piece per cork, each small enough for uWS's cork buffer (see STREAM_PIECE).
        for (let off = 0; off < bytes.length;) {
          const piece = bytes.subarray(off, Math.min(bytes.length, off + STREAM_PIECE));
          off += piece.length;
          let ok = true;
          res.cork(() => {
            ok = res.write(piece);
          });
          if (!ok) await drained();
          if (st.aborted) return;
        }
      }
    };
    pump().then(
      () => (st.aborted ? it.return?.() : undefined),
      (e: unknown) => {
        ctx.log.error({ requestId: ctx.requestId, path: redactPath(ctx.path), err: e instanceof Error ? e.message : String(e) }, 'streamed answer failed');
        if (!st.aborted) res.cork(() => res.end());
      },
    );
  }

  /**
   * Listens on host:port; resolves with the port. `front` guard: uWS on an ephemeral
   * loopback port of its own, `HttpGuard` on the address. Loopback TCP rather than a Unix socket:
   * its kernel buffers grow to megabytes, a Unix socket's stop at the system's default send
   * buffer (about 200 KB), and the hub would coalesce WebSocket clients that keep up. `front` off
   * (the default): uWS on the address itself, for a deployment behind a proxy that speaks HTTP/1.1 to it and
   * normalizes request framing; the router then refuses Transfer-Encoding and a repeated
   * Content-Length itself, and HTTP/1.0 and heads uWS cannot parse get no answer (README: Deployment).
   */
  async listen(host: string, port: number, front: ServerFront = 'off'): Promise<number> {
    if (front === 'off') {
      this.checkFraming = true;
      if (!isLoopback(host))
        this.log.warn(
          { host },
          'uWebSockets.js is listening on a non-loopback address: put a proxy in front of it (deploy/nginx.conf; README: Deployment), as it leaves HTTP/1.0, heads over 4 KB that arrive in pieces and some malformed requests unanswered',
        );
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

/** The TCP peer of a request, as uWS writes it (IPv6 in full, IPv4 as itself). */
function peerOf(res: UWS.HttpResponse): string {
  return Buffer.from(res.getRemoteAddressAsText()).toString('latin1');
}

/** Whether `host` is a loopback address or name (the service is then reached from this machine only). */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** Headers of a request before any is read: every name present, so each context's object has one shape. */
function noHeaders(): MutableHeaders {
  return {
    'x-api-key': undefined,
    'x-request-id': undefined,
    accept: undefined,
    'user-agent': undefined,
    'x-forwarded-for': undefined,
    'x-real-ip': undefined,
    connection: undefined,
    origin: undefined,
  };
}

/** The state of the head walk in progress (`framingRefusal`): one walk at a time, and no closure per request. */
let walked = noHeaders();
let lengths = 0;
let hosts = 0;
let fieldBytes = 0;
let refused: string | undefined;
/** Whether a header the pipeline reads came empty (then dropped after the walk, as getHeader's '' is). */
let empty = false;

function walk(k: string, v: string): void {
  // "name: value\r\n" (uWS gives names lowercased and values without the spaces around them).
  fieldBytes += k.length + v.length + 4;
  // The first field of a name the pipeline reads, as getHeader would give it (kept when empty,
  // dropped after the walk). Each name stored as a constant: a name from uWS is a fresh string,
  // which as a computed key would be looked up in V8's string table on every store.
  if (v === '') empty = true;
  switch (k) {
    case 'x-api-key':
      walked['x-api-key'] ??= v;
      break;
    case 'x-request-id':
      walked['x-request-id'] ??= v;
      break;
    case 'accept':
      walked.accept ??= v;
      break;
    case 'user-agent':
      walked['user-agent'] ??= v;
      break;
    case 'x-forwarded-for':
      walked['x-forwarded-for'] ??= v;
      break;
    case 'x-real-ip':
      walked['x-real-ip'] ??= v;
      break;
    case 'connection':
      walked.connection ??= v;
      break;
    case 'origin':
      walked.origin ??= v;
      break;
    case 'transfer-encoding':
      refused ??= 'Transfer-Encoding is not accepted (every endpoint is GET and takes no body)';
      break;
    case 'content-length':
      if (++lengths > 1) refused ??= 'more than one Content-Length header field';
      break;
    case 'host':
      if (++hosts > 1) refused ??= 'more than one Host header field';
  }
}

/**
 * Front off: reads the pipeline's request headers into `headers` (one walk of the head instead of
 * a getHeader each) and says what the guard's head check would refuse in a request's framing (any
 * Transfer-Encoding, more than one Content-Length), as the message of a 400 that closes the
 * connection; undefined when the framing is sound. uWS 20.30 takes the first Content-Length and
 * ignores Transfer-Encoding alone, so either would let the bytes after the head run as another
 * request (a malformed Content-Length, or one beside Transfer-Encoding, it refuses itself by closing).
 * A head over the guard's MAX_HEAD_BYTES (request line and fields, as uWS hands them over) is a 431
 * as there: uWS 20.30 reads a longer one when it arrives in one read, and the API bounds it the same
 * whichever front is on (README: Deployment).
 */
function framingRefusal(req: UWS.HttpRequest, headers: MutableHeaders, targetBytes: number): Refusal | undefined {
  walked = headers;
  lengths = 0;
  hosts = 0;
  fieldBytes = 0;
  refused = undefined;
  empty = false;
  req.forEach(walk);
  if (hosts === 0) refused ??= 'HTTP/1.1 requests need a Host header field';
  if (empty) for (const h of READ_HEADERS) if (headers[h] === '') headers[h] = undefined;
  // "METHOD target HTTP/1.1\r\n" with a method of up to 7 bytes, and the blank line.
  if (refused === undefined && targetBytes + fieldBytes + 21 > MAX_HEAD_BYTES)
    return { status: 431, code: 'headers_too_large', message: `request head over ${MAX_HEAD_BYTES} bytes` };
  return refused === undefined ? undefined : { status: 400, code: 'bad_request', message: refused };
}

/** A query string holding bytes that are not UTF-8 (uWS turns them into U+FFFD). */
const MALFORMED_QUERY = (): Reply => errorReply(400, 'validation.malformed_query', 'the query string is not valid UTF-8');

/** The status line and headers of an answer, up to the request id's value. */
function headOf(reply: Reply): string {
  return `${STATUS_TEXT[reply.status] ?? String(reply.status)}\r\ncontent-type: ${reply.contentType ?? 'application/json'}\r\nx-request-id: `;
}

/** The status line and every header of an answer in one string for one native call (uWS writes the status as given, then "\r\n"). */
function fullHead(reply: Reply, ctx: RequestCtx): string {
  const extra = ctx.responseHeaders;
  let head = (reply.contentType === undefined ? JSON_HEAD[reply.status] : undefined) ?? headOf(reply);
  head += ctx.requestId + ctx.rateSecond + ctx.rateMonth;
  for (const k in extra) head += `\r\n${k}: ${extra[k]}`;
  if (reply.headers) for (const k in reply.headers) head += `\r\n${k}: ${reply.headers[k]}`;
  return head;
}

/**
 * The headers of a JSON answer as bytes, when they are those of a recent answer but for the
 * request id: no header but the rate-limit lines, and those lines seen before (a plan without
 * limits and a keyless answer: always; a limited plan's count down, and those heads go as strings). The bytes are the name of
 * one `writeHeader` whose value is the request id: "content-type: application/json", the
 * rate-limit lines and "x-request-id", to which uWS adds ": ", the id and "\r\n". A head passed as
 * a string is flattened, measured and encoded to UTF-8 on every call; these bytes are made once,
 * and the id (36 characters) is the only string uWS encodes.
 */
class HeadBytes {
  /** The lines whose bytes are made, most recent first. */
  private readonly made: { readonly second: string; readonly month: string; readonly bytes: Buffer }[] = [];
  /** The lines of the last heads that had none: bytes are made for lines seen again among them. */
  private readonly missed: { readonly second: string; readonly month: string }[] = [];

  /** The header bytes of `reply` up to the request id's name, or undefined: write the head as a string. */
  of(reply: Reply, ctx: RequestCtx): Buffer | undefined {
    if (reply.contentType !== undefined || reply.headers !== undefined || STATUS_BYTES[reply.status] === undefined || !isEmpty(ctx.responseHeaders))
      return undefined;
    const second = ctx.rateSecond;
    const month = ctx.rateMonth;
    for (const h of this.made) if (h.second === second && h.month === month) return h.bytes;
    let seen = false;
    for (const m of this.missed) if (m.second === second && m.month === month) seen = true;
    if (!seen) {
      this.missed.unshift({ second, month });
      if (this.missed.length > HEADS_KEPT) this.missed.pop();
      return undefined;
    }
    const bytes = Buffer.from(`content-type: application/json${second}${month}\r\nx-request-id`, 'latin1');
    this.made.unshift({ second, month, bytes });
    if (this.made.length > HEADS_KEPT) this.made.pop();
    return bytes;
  }
}

/** Heads kept as bytes (and misses remembered): the plans without limits, keyless answers, a few more. */
const HEADS_KEPT = 4;

/** Each status line uWS can be given as bytes ("200 OK": uWS writes that one itself before the first header). */
const STATUS_BYTES: Readonly<Record<number, Buffer>> = Object.fromEntries(Object.entries(STATUS_TEXT).map(([s, t]) => [s, Buffer.from(t, 'latin1')]));

/** Whether an object has no own enumerable property. */
function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/** `headOf` a JSON answer, by status. */
const JSON_HEAD: Readonly<Record<number, string>> = Object.fromEntries(Object.keys(STATUS_TEXT).map((s) => [s, headOf({ status: Number(s), body: '' })]));

/** An answer a header at a time: a HEAD's (its Content-Length written here), and one that closes the connection. */
function writeEach(res: UWS.HttpResponse, ctx: RequestCtx, reply: Reply, close: boolean): void {
  // The rate-limit lines ride on the status (uWS writes it as given, then "\r\n").
  res.writeStatus((STATUS_TEXT[reply.status] ?? String(reply.status)) + ctx.rateSecond + ctx.rateMonth);
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
