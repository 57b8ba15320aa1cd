import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { Worker } from 'node:worker_threads';

/**
 * The HTTP/1 front of the uWebSockets.js build in use (20.30). Its native parser only recognises a
 * request line ending in " HTTP/1.1\r\n"; anything else (HTTP/1.0, a bare LF, more than 48 header
 * fields, HTTP/1.1 without Host, an absolute-form target) reads as an incomplete request, so the
 * client hears nothing until the 10 s idle timeout, and a head split across reads is dropped past
 * 4 KB. It also takes the first of several Content-Length fields and ignores Transfer-Encoding,
 * so a second length or a chunked body runs as the next request (request smuggling). The parser
 * has no hook, so the guard sits in front of it: it owns the public port, checks each request head
 * and forwards good ones to uWS on a loopback port, byte for byte (HTTP/1.0 rewritten as
 * HTTP/1.1 with `Connection: close`, so uWS answers and closes). A bad head becomes one internal
 * request (see `GuardRoute`) that uWS answers with the error and `Connection: close`, so the error
 * is written in order after the responses to requests before it, and logged like any request.
 * After a 101 the connection is a WebSocket and is passed through untouched.
 */

/** The public port could not be taken (in use, not permitted): a start-up error, said in one line. */
export class ListenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ListenError';
  }
}

/** Longest request head accepted (request line and header fields): longer is a 431. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** Most header fields per request: uWS 20.30 holds 50 slots, the request line and an end marker included. */
export const MAX_HEADER_FIELDS = 48;
/**
 * Bytes held for a client that reads slower than uWS writes before uWS is made to wait. Node's own
 * 16 KB mark would pause uWS at every burst, and the WebSocket hub would coalesce even a client
 * that keeps up; a direct loopback connection buffers megabytes in the kernel.
 */
const RELAY_BUFFER_BYTES = 1024 * 1024;
/** Largest request body forwarded (no endpoint takes one): larger is a 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** A request head the guard refuses: the status and the error body's code and message. */
export interface Refusal {
  readonly status: 400 | 405 | 413 | 431 | 505;
  readonly code: string;
  readonly message: string;
}

/** A request head the guard forwards. */
export interface Accepted {
  /** The head to send upstream when it differs from the client's bytes (HTTP/1.0 rewritten). */
  readonly rewritten: string | undefined;
  readonly bodyLength: number;
  /** A WebSocket upgrade: the guard waits for uWS's answer before reading on. */
  readonly upgrade: boolean;
  /** The connection ends after this request (HTTP/1.0 or `Connection: close`). */
  readonly close: boolean;
}

// The HTTP grammar is about control characters: these classes name them on purpose.
// eslint-disable-next-line no-control-regex
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\/[^\x00-\x20\x7f]*) HTTP\/1\.([01])$/;
const ANY_VERSION = /^[^ ]+ [^ ]+ HTTP\/\d+(\.\d+)?$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * The field names uWS 20.30's parser reads: letters, digits and '-'. Any other token character
 * (`X_Foo`, `X.Foo`) makes it wait for more bytes until its idle timeout, so such a field (which
 * no part of crossbook reads) is left out of the head forwarded, as nginx does by default.
 */
const UWS_NAME = /^[0-9A-Za-z-]+$/;
/**
 * The methods uWS 20.30's parser reads (the router answers all but GET and HEAD 405, keeping the
 * connection). It closes on any other without a word, so the guard answers those itself: a known
 * method in the wrong case 400, any other 405.
 */
const UWS_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE']);
// eslint-disable-next-line no-control-regex
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;

/** Lengths of the field names `checkHead` reads (host, upgrade, connection, keep-alive, content-length, transfer-encoding, sec-websocket-key). */
const READ_LENGTHS = new Set([4, 7, 10, 14, 17]);

/** `line` from `from` without leading and trailing spaces and tabs (RFC 9110 OWS). */
function trimOws(line: string, from: number): string {
  let a = from;
  let b = line.length;
  while (a < b && (line.charCodeAt(a) === 32 || line.charCodeAt(a) === 9)) a++;
  while (b > a && (line.charCodeAt(b - 1) === 32 || line.charCodeAt(b - 1) === 9)) b--;
  return line.slice(a, b);
}

const refuse = (status: Refusal['status'], code: string, message: string): Refusal => ({ status, code, message });

/**
 * Checks one request head (latin1 text up to, not including, the blank line) against RFC 9112 as
 * far as a read-only API needs: an origin-form target, HTTP/1.1 or 1.0, well-formed fields, one
 * Host on HTTP/1.1, at most one Content-Length and no Transfer-Encoding (both are how requests are
 * smuggled), and no more fields than uWS can hold.
 */
export function checkHead(head: string): Accepted | Refusal {
  const lines = head.split('\r\n');
  const m = REQUEST_LINE.exec(lines[0]!);
  if (!m) {
    if (ANY_VERSION.test(lines[0]!) && !/ HTTP\/1\.[01]$/.test(lines[0]!))
      return refuse(505, 'http_version_not_supported', 'only HTTP/1.1 and HTTP/1.0 are served');
    return refuse(400, 'bad_request', 'malformed request line: expected "METHOD /path HTTP/1.1" with CRLF line ends');
  }
  if (!UWS_METHODS.has(m[1]!)) {
    if (UWS_METHODS.has(m[1]!.toUpperCase())) return refuse(400, 'bad_request', `method names are case-sensitive: ${m[1]!.toUpperCase()}, not ${m[1]}`);
    return refuse(405, 'method_not_allowed', `${m[1]} is not allowed; every endpoint answers GET, HEAD`);
  }
  const http10 = m[3] === '0';
  let hosts = 0;
  let lengths = 0;
  let bodyLength = 0;
  let connection = '';
  let upgrade = false;
  let dropped = false;
  const kept: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const c = line.indexOf(':');
    const name = c > 0 ? line.slice(0, c) : '';
    if (!TOKEN.test(name)) return refuse(400, 'bad_request', `malformed header field on line ${i + 1}`);
    const value = trimOws(line, c + 1);
    if (BAD_VALUE.test(value)) return refuse(400, 'bad_request', `control character in header field ${name}`);
    if (!UWS_NAME.test(name)) {
      dropped = true;
      continue;
    }
    // Only names as long as one the guard reads are lowercased (most fields are none of them).
    const lower = READ_LENGTHS.has(name.length) ? name.toLowerCase() : '';
    if (lower === 'host') hosts++;
    else if (lower === 'content-length') {
      lengths++;
      if (!/^\d{1,16}$/.test(value)) return refuse(400, 'bad_request', 'Content-Length must be a decimal number');
      bodyLength = Number(value);
    } else if (lower === 'transfer-encoding') return refuse(400, 'bad_request', 'Transfer-Encoding is not accepted (every endpoint is GET and takes no body)');
    else if (lower === 'connection') connection += `${value.toLowerCase()},`;
    else if (lower === 'upgrade') upgrade = true;
    // HTTP/1.0 has no upgrades (RFC 9110 7.8) and its connection options do not apply to the rewrite.
    if (http10 && (lower === 'connection' || lower === 'keep-alive' || lower === 'upgrade' || lower === 'sec-websocket-key')) continue;
    kept.push(line);
  }
  if (lengths > 1) return refuse(400, 'bad_request', 'more than one Content-Length header field');
  if (hosts > 1) return refuse(400, 'bad_request', 'more than one Host header field');
  if (hosts === 0 && !http10) return refuse(400, 'bad_request', 'HTTP/1.1 requests need a Host header field');
  if (bodyLength > MAX_BODY_BYTES) return refuse(413, 'payload_too_large', 'request body too large (no endpoint takes one)');
  if (http10) {
    // uWS answers only HTTP/1.1: forward as such, with the close HTTP/1.0 implies.
    if (hosts === 0) kept.push('Host: localhost');
    kept.push('Connection: close');
    if (kept.length > MAX_HEADER_FIELDS) return tooMany();
    return { rewritten: `${m[1]} ${m[2]} HTTP/1.1\r\n${kept.join('\r\n')}\r\n\r\n`, bodyLength, upgrade: false, close: true };
  }
  if (kept.length > MAX_HEADER_FIELDS) return tooMany();
  const tokens = connection.split(',').map((s) => s.trim());
  return {
    rewritten: dropped ? `${lines[0]}\r\n${kept.join('\r\n')}\r\n\r\n` : undefined,
    bodyLength,
    upgrade: upgrade && tokens.includes('upgrade'),
    close: tokens.includes('close'),
  };
}

const tooMany = (): Refusal => refuse(431, 'headers_too_large', `more than ${MAX_HEADER_FIELDS} header fields`);

/**
 * The internal route a refusal travels on: `GET <prefix><status>/<code>?m=<message>`. The prefix
 * holds a per-process random token, so no client can reach it through the guard.
 */
export class GuardRoute {
  /** `prefix`: another thread's route, so that both sides agree on it. */
  constructor(readonly prefix = `/.crossbook-guard/${randomBytes(12).toString('hex')}/`) {}

  /** The request line and fields that make uWS answer `r` and close. */
  request(r: Refusal): Buffer {
    return Buffer.from(
      `GET ${this.prefix}${r.status}/${r.code}?m=${encodeURIComponent(r.message)} HTTP/1.1\r\nHost: guard\r\nConnection: close\r\n\r\n`,
      'latin1',
    );
  }

  /** The refusal a routed request stands for, or undefined when `path` is not the guard's. */
  parse(path: string, rawQuery: string): Refusal | undefined {
    if (!path.startsWith(this.prefix)) return undefined;
    const [status, code] = path.slice(this.prefix.length).split('/');
    const message = decodeURIComponent(rawQuery.startsWith('m=') ? rawQuery.slice(2) : '');
    return { status: Number(status) as Refusal['status'], code: code ?? 'bad_request', message };
  }
}

const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/** Bytes that may start a request line: a method's token characters. */
const TOKEN_BYTES = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TOKEN_BYTES[c.charCodeAt(0)] = 1;

/**
 * What is wrong, at once, with the head (complete or not) in `b` from `off` to `end`: a first byte
 * that cannot start a method (a TLS ClientHello's 0x16, binary), a bare LF or a bare CR. uWS would
 * read each as an incomplete head and answer nothing until its idle timeout. Undefined: nothing yet.
 */
export function headFraming(b: Buffer, off: number, end: number): string | undefined {
  if (TOKEN_BYTES[b[off]!] !== 1)
    return b[off] === 0x16
      ? 'TLS sent to a plain HTTP port: use http://, or https:// through the proxy in front'
      : 'malformed request line: expected "METHOD /path HTTP/1.1"';
  for (let i = b.indexOf(10, off); i >= 0 && i <= end; i = b.indexOf(10, i + 1)) if (b[i - 1] !== 13) return 'header lines must end in CRLF';
  for (let i = b.indexOf(13, off); i >= 0 && i < end; i = b.indexOf(13, i + 1))
    if (i + 1 < b.length && b[i + 1] !== 10) return 'header lines must end in CRLF (a bare CR)';
  return undefined;
}

/**
 * Bytes read from uWS at a time (Node's own read size): a response of up to 64 KB is one read and
 * one write to the client.
 */
const READ_BYTES = 64 * 1024;

/**
 * One client connection and its upstream connection to uWS. Bytes from uWS are read into a buffer
 * of the connection's own (the socket's `onread` option) and written to the client from there: a
 * client that keeps up takes each write whole, so nothing is allocated or copied per read. A write
 * the client's socket leaves pending still points into that buffer, so the next read gets a new one;
 * bytes queued behind a pending write are copied into the queue.
 */
class GuardedConnection {
  private readonly upstream: net.Socket;
  private readBuf = Buffer.allocUnsafeSlow(READ_BYTES);
  private pending: Buffer | undefined;
  private body = 0;
  /** http: checking heads; upgrading: waiting for uWS's answer to an upgrade; tunnel: a WebSocket; done: reading no more. */
  private mode: 'http' | 'upgrading' | 'tunnel' | 'done' = 'http';

  constructor(
    private readonly client: net.Socket,
    upstreamPort: number,
    private readonly route: GuardRoute,
  ) {
    const upstream = net.connect({
      host: '127.0.0.1',
      port: upstreamPort,
      allowHalfOpen: true,
      noDelay: true,
      onread: { buffer: () => this.readBuf, callback: (n) => this.fromUpstream(n) },
    });
    this.upstream = upstream;
    client.on('data', (d: Buffer) => this.fromClient(d));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    const destroy = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', destroy);
    upstream.on('error', destroy);
    client.on('close', destroy);
    upstream.on('close', () => (client.writableLength > 0 ? client.end() : client.destroy()));
  }

  private fromClient(d: Buffer): void {
    if (this.mode === 'tunnel') return this.send(d);
    if (this.mode === 'done') {
      // The body of the last request still goes through; anything after it is dropped.
      const n = Math.min(this.body, d.length);
      this.body -= n;
      if (n > 0) this.send(d.subarray(0, n));
      return;
    }
    this.pending = this.pending ? Buffer.concat([this.pending, d]) : d;
    if (this.mode === 'http') this.scan();
  }

  /** Forwards every complete request in `pending` (heads checked, bodies counted), keeps the rest. */
  private scan(): void {
    const b = this.pending!;
    const out: Buffer[] = [];
    let off = 0;
    while (off < b.length && this.mode === 'http') {
      if (this.body > 0) {
        const n = Math.min(this.body, b.length - off);
        out.push(b.subarray(off, off + n));
        off += n;
        this.body -= n;
        continue;
      }
      // RFC 9112 2.2: empty lines before a request line are ignored (uWS would wait on them).
      while (b[off] === 13 && b[off + 1] === 10) off += 2;
      if (off >= b.length || (b[off] === 13 && off + 1 === b.length)) break;
      const end = b.indexOf(HEAD_END, off);
      const framing = headFraming(b, off, end < 0 ? b.length : end);
      if (framing) {
        this.refuse(out, refuse(400, 'bad_request', framing));
        break;
      }
      if (end < 0) {
        if (b.length - off > MAX_HEAD_BYTES) this.refuse(out, refuse(431, 'headers_too_large', `request head over ${MAX_HEAD_BYTES} bytes`));
        break;
      }
      if (end - off > MAX_HEAD_BYTES) {
        this.refuse(out, refuse(431, 'headers_too_large', `request head over ${MAX_HEAD_BYTES} bytes`));
        break;
      }
      const v = checkHead(b.toString('latin1', off, end));
      if ('status' in v) {
        this.refuse(out, v);
        break;
      }
      out.push(v.rewritten === undefined ? b.subarray(off, end + 4) : Buffer.from(v.rewritten, 'latin1'));
      off = end + 4;
      this.body = v.bodyLength;
      if (v.upgrade) {
        this.mode = 'upgrading';
        this.client.pause();
      } else if (v.close) {
        // Forward its body, then read no more: uWS answers and closes.
        const n = Math.min(this.body, b.length - off);
        out.push(b.subarray(off, off + n));
        this.body -= n;
        this.mode = 'done';
      }
    }
    this.pending = this.mode === 'done' || off >= b.length ? undefined : b.subarray(off);
    if (out.length === 1) this.send(out[0]!);
    else if (out.length > 1) this.send(Buffer.concat(out));
  }

  private refuse(out: Buffer[], r: Refusal): void {
    out.push(this.route.request(r));
    this.mode = 'done';
  }

  private send(d: Buffer): void {
    if (!this.upstream.write(d) && this.mode !== 'done') {
      this.client.pause();
      this.upstream.once('drain', () => {
        if (this.mode !== 'upgrading') this.client.resume();
      });
    }
  }

  /** `n` bytes from uWS in `readBuf`; false stops reading until the client drains. */
  private fromUpstream(n: number): boolean {
    const d = this.readBuf.subarray(0, n);
    if (this.mode === 'upgrading') {
      this.mode = d.toString('latin1', 0, 13) === 'HTTP/1.1 101 ' ? 'tunnel' : 'http';
      if (this.mode === 'tunnel') this.client.setTimeout(0);
      this.client.resume();
      const rest = this.pending;
      this.pending = undefined;
      if (rest) queueMicrotask(() => this.fromClient(rest));
    }
    const client = this.client;
    if (client.writableLength === 0) {
      client.write(d);
      if (client.writableLength === 0) return true;
      // The kernel took part of it: the rest is written from readBuf later.
      this.readBuf = Buffer.allocUnsafeSlow(READ_BYTES);
    } else client.write(Buffer.from(d));
    if (client.writableLength <= RELAY_BUFFER_BYTES) return true;
    client.once('drain', () => this.upstream.resume());
    return false;
  }
}

/**
 * Listens on the public address and guards each connection into uWS on 127.0.0.1:`upstreamPort`,
 * on the thread that creates it (`HttpGuard` runs it on a thread of its own).
 */
export class GuardFront {
  private readonly server: net.Server;

  constructor(
    private readonly upstreamPort: number,
    readonly route: GuardRoute,
  ) {
    this.server = net.createServer({ allowHalfOpen: true, noDelay: true }, (client) => this.accept(client));
  }

  private accept(client: net.Socket): void {
    new GuardedConnection(client, this.upstreamPort, this.route);
  }

  /** Starts listening; resolves with the port. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const fail = (e: Error): void => reject(new ListenError(`cannot listen on ${host}:${port} (${(e as NodeJS.ErrnoException).code ?? e.message})`));
      this.server.once('error', fail);
      this.server.listen({ host, port, exclusive: true }, () => {
        this.server.off('error', fail);
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  /**
   * Stops listening. Open connections stay until uWS closes them: a request on one kept alive then
   * gets uWS's `503 shutting_down` that closes it (as with no front), not a dropped connection.
   */
  close(): void {
    this.server.close();
  }
}

/** What the guard's thread posts once: the port it listens on, or why it cannot. */
export type GuardReady = { readonly port: number } | { readonly error: string };

/**
 * The guard as the HTTP server uses it. Built (dist/), the front runs on a worker thread
 * (guard-worker.js), so relaying every request's bytes costs the main event loop nothing and uWS
 * on the main thread pays only for its own side; from TypeScript sources (the test runner, which
 * cannot start a .ts worker) it runs on the calling thread, the same `GuardFront`.
 */
export class HttpGuard {
  readonly route = new GuardRoute();
  private front: GuardFront | undefined;
  private worker: Worker | undefined;

  constructor(private readonly upstreamPort: number) {}

  /** Starts listening; resolves with the port. */
  listen(host: string, port: number): Promise<number> {
    const script = new URL('./guard-worker.js', import.meta.url);
    if (!import.meta.url.endsWith('.js') || !existsSync(script)) {
      this.front = new GuardFront(this.upstreamPort, this.route);
      return this.front.listen(host, port);
    }
    const worker = new Worker(script, { workerData: { upstreamPort: this.upstreamPort, prefix: this.route.prefix, host, port } satisfies GuardWorkerData });
    this.worker = worker;
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.once('message', (m: GuardReady) => {
        ready = true;
        if ('port' in m) resolve(m.port);
        else reject(new ListenError(m.error));
      });
      worker.on('error', (e) => {
        if (!ready) return reject(e);
        // Nothing is served without the front: fail loudly rather than listen on nothing.
        throw e;
      });
      worker.once('exit', (code) => {
        if (!ready) reject(new Error(`the HTTP front's thread exited (${code}) before listening`));
      });
    });
  }

  /** Stops listening (open connections end as `GuardFront.close` says). */
  close(): void {
    this.front?.close();
    this.front = undefined;
    this.worker?.postMessage('close');
    this.worker?.unref();
    this.worker = undefined;
  }
}

/** What the guard's thread starts from. */
export interface GuardWorkerData {
  readonly upstreamPort: number;
  readonly prefix: string;
  readonly host: string;
  readonly port: number;
}
