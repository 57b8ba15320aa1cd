import net from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/core/log.js';
import { checkHead, GuardFront, GuardRoute, ListenError, MAX_HEADER_FIELDS, type HttpGuard as Guard } from '../../src/server/guard.js';
import { HttpServer, jsonReply } from '../../src/server/http.js';
import { redactPath, redactQuery } from '../../src/server/redact.js';
import { bodyOf, CLOSE_GUARD_MS, exchange as raw, statuses, type Exchange } from './raw.js';

/**
 * Hostile and old HTTP clients against the real server (guard + uWS), over raw sockets: each case
 * is an attack from issue 14 that once went unanswered for 10 s, reset the connection or ran as a
 * smuggled second request.
 */
let http: HttpServer;
let port: number;
const lines: string[] = [];
const KEY = 'pmx_AbCdEfGhIjKlMnOpQrStUvWxYz012345';

beforeAll(async () => {
  http = new HttpServer(createLogger('debug', { write: (s: string) => void lines.push(s) }));
  http.get('/api/v2/status', () => jsonReply({ status: 'ok' }));
  http.get('/api/v2/markets', () => jsonReply({ markets: [] }));
  port = await http.listen('127.0.0.1', 0, 'guard');
});
afterAll(() => http.close());

describe('the public port', () => {
  it('is taken exclusively: a second server on it is a ListenError naming host, port and cause', async () => {
    const other = new HttpServer(createLogger('silent'));
    const taken = other.listen('127.0.0.1', port, 'guard');
    await expect(taken).rejects.toBeInstanceOf(ListenError);
    await expect(taken).rejects.toThrow(`cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    other.close();
  });
});

/** A raw exchange with the guard's port unless told. */
const exchange = (bytes: string | Buffer, settleMs = CLOSE_GUARD_MS, to = port): Promise<Exchange> => raw(bytes, settleMs, to);
const fields = (n: number): string => Array.from({ length: n }, (_, i) => `X-F${i}: v\r\n`).join('');

describe('HTTP/1.0', () => {
  it('answers an HTTP/1.0 request and closes the connection', async () => {
    for (const req of ['GET /api/v2/status HTTP/1.0\r\n\r\n', 'GET /api/v2/status HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n']) {
      const r = await exchange(req);
      expect(r.closed).toBe(true);
      expect(statuses(r.text)).toEqual([200]);
      expect(r.text.toLowerCase()).toContain('connection: close');
      expect(bodyOf(r.text)).toEqual({ status: 'ok' });
    }
  });
});

describe('request smuggling', () => {
  it('answers conflicting Content-Length 400 and closes, without running the bytes after it', async () => {
    const second = 'GET /api/v2/markets HTTP/1.1\r\nHost: x\r\n\r\n';
    const r = await exchange(`GET /api/v2/status HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: ${second.length}\r\n\r\n${second}`);
    expect(r.closed).toBe(true);
    expect(statuses(r.text)).toEqual([400]);
    expect(bodyOf(r.text)).toMatchObject({ success: false, code: 'bad_request' });
    expect(r.text).not.toContain('markets');
  });

  it('answers Transfer-Encoding (with or without Content-Length) 400 and closes', async () => {
    for (const te of ['Content-Length: 5\r\nTransfer-Encoding: chunked\r\n', 'Transfer-Encoding: chunked\r\n']) {
      const r = await exchange(`POST /api/v2/status HTTP/1.1\r\nHost: x\r\n${te}\r\n0\r\n\r\nGET /api/v2/markets HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(r.closed).toBe(true);
      expect(statuses(r.text)).toEqual([400]);
    }
  });

  it('answers requests before a bad one first, in order', async () => {
    const r = await exchange(`GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v2/status HTTP/1.1\r\n\r\n`);
    expect(r.closed).toBe(true);
    expect(statuses(r.text)).toEqual([200, 400]);
  });

  it('forwards a request body by its length and reads the next request after it', async () => {
    const r = await exchange(
      `POST /api/v2/status HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /api/v2/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(statuses(r.text)).toEqual([405, 200]);
  });
});

describe('oversized and malformed heads', () => {
  it('answers a 1 MB header 431 and closes', async () => {
    const r = await exchange(`GET /api/v2/status HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(1 << 20)}\r\n\r\n`);
    expect(r.closed).toBe(true);
    expect(statuses(r.text)).toEqual([431]);
    expect(bodyOf(r.text)).toMatchObject({ success: false, code: 'headers_too_large' });
  });

  it(`serves ${MAX_HEADER_FIELDS} header fields and answers more 431`, async () => {
    const ok = await exchange(`GET /api/v2/status HTTP/1.1\r\nHost: x\r\n${fields(MAX_HEADER_FIELDS - 2)}Connection: close\r\n\r\n`);
    expect(statuses(ok.text)).toEqual([200]);
    const r = await exchange(`GET /api/v2/status HTTP/1.1\r\nHost: x\r\n${fields(MAX_HEADER_FIELDS)}\r\n`);
    expect(r.closed).toBe(true);
    expect(statuses(r.text)).toEqual([431]);
  });

  it('answers HTTP/1.1 without Host, bare LF line ends, an absolute target and a bad field name 400; HTTP/2.0 505', async () => {
    const cases: [string, number][] = [
      ['GET /api/v2/status HTTP/1.1\r\n\r\n', 400],
      ['GET /api/v2/status HTTP/1.1\r\nX-A: 1\r\n\r\n', 400],
      ['GET /api/v2/status HTTP/1.1\nHost: x\n\n', 400],
      ['GET http://x/api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['GET /api/v2/status HTTP/1.1\r\nHost: x\r\nX Y: 1\r\n\r\n', 400],
      ['GET /api/v2/status HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n', 400],
      ['GET /api/v2/status HTTP/2.0\r\nHost: x\r\n\r\n', 505],
    ];
    for (const [req, status] of cases) {
      const r = await exchange(req);
      expect(r.closed, JSON.stringify(req)).toBe(true);
      expect(statuses(r.text), JSON.stringify(req)).toEqual([status]);
    }
  });

  it('checks heads as a pure function', () => {
    expect(checkHead('GET / HTTP/1.1\r\nHost: a')).toMatchObject({ rewritten: undefined, close: false, upgrade: false });
    expect(checkHead('GET /ws HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket')).toMatchObject({ upgrade: true });
    expect(checkHead('GET /x?a=1 HTTP/1.0\r\nConnection: keep-alive')).toMatchObject({
      rewritten: 'GET /x?a=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
      close: true,
    });
    expect(checkHead('GET /ws HTTP/1.0\r\nHost: a\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==')).toMatchObject({
      rewritten: 'GET /ws HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
      upgrade: false,
    });
    expect(checkHead('GET / HTTP/1.1\r\nHost: a\r\nContent-Length: +5')).toMatchObject({ status: 400 });
    expect(checkHead('GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5')).toMatchObject({ status: 400 });
    expect(checkHead('GET / HTTP/1.1\r\nHost: a\r\n folded')).toMatchObject({ status: 400 });
  });
});

/** Issue 30's gaps in the front: each once got no answer, or 10–12 s of silence then a close. */
describe('answered at once, not after the idle timeout', () => {
  const status = '/api/v2/status';
  it('answers an unknown method 405 with Allow and a lowercase one 400, and closes', async () => {
    for (const [line, code] of [
      [`FOO ${status}`, 405],
      [`get ${status}`, 400],
      [`Get ${status}`, 400],
    ] as const) {
      const r = await exchange(`${line} HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect([r.closed, statuses(r.text)], line).toEqual([true, [code]]);
      if (code === 405) expect(r.text).toMatch(/\r\nAllow: GET, HEAD\r\n/);
    }
  });

  it('answers a TLS ClientHello, bare CR line ends and a head ending LF CR LF 400 and closes', async () => {
    // The first bytes of a TLS 1.2 ClientHello record (curl https:// against the plain port).
    const hello = Buffer.from('16030100a5010000a10303', 'hex');
    for (const req of [hello, `GET ${status} HTTP/1.1\rHost: x\r\r`, `GET ${status} HTTP/1.1\r\nHost: x\n\r\n`]) {
      const r = await exchange(req);
      expect([r.closed, statuses(r.text)], JSON.stringify(req.toString())).toEqual([true, [400]]);
    }
  });

  it('ignores an empty line before the request line (RFC 9112 2.2)', async () => {
    const r = await exchange(`\r\nGET ${status} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect([r.closed, statuses(r.text)]).toEqual([true, [200]]);
  });

  it('answers a request carrying header names uWS cannot read (X_Foo, X.Foo), leaving those fields out', async () => {
    const r = await exchange(`GET ${status} HTTP/1.1\r\nHost: x\r\nX_Foo: 1\r\nX.Bar: 2\r\nConnection: close\r\n\r\n`);
    expect([r.closed, statuses(r.text), bodyOf(r.text)]).toEqual([true, [200], { status: 'ok' }]);
    expect(checkHead('GET / HTTP/1.1\r\nHost: a\r\nX_Foo: 1\r\nAccept: */*')).toMatchObject({ rewritten: 'GET / HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n' });
  });

  it('answers a 7.6 KB head that arrives in 1,460-byte segments (a 100-id /prices/bulk)', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `venue_a:KXPRESPARTY-2028-CANDIDATE-${String(i).padStart(30, '0')}`).join(',');
    const head = `GET ${status}?ids=${encodeURIComponent(ids)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
    expect(head.length).toBeGreaterThan(7000);
    const r = await raw(head, CLOSE_GUARD_MS, port, 1460);
    expect([r.closed, statuses(r.text)]).toEqual([true, [200]]);
  });

  it('answers a request on a kept-alive connection after close() with 503 shutting_down, as uWS alone does', async () => {
    const s = new HttpServer(createLogger('silent'));
    s.get(status, () => jsonReply({ status: 'ok' }));
    const p = await s.listen('127.0.0.1', 0, 'guard');
    const c = net.connect(p, '127.0.0.1');
    let text = '';
    const got = (n: number): Promise<void> =>
      new Promise((resolve) => {
        const check = (): void => (statuses(text).length >= n ? resolve() : void c.once('data', check));
        c.on('data', (d: Buffer) => (text += d.toString('latin1')));
        check();
      });
    const closed = new Promise((resolve) => c.once('close', resolve));
    try {
      c.write(`GET ${status} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await got(1);
      s.close();
      c.write(`GET ${status} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await closed;
      expect(statuses(text)).toEqual([200, 503]);
      expect(bodyOf(text.slice(text.lastIndexOf('HTTP/1.1 ')))).toMatchObject({ success: false, code: 'shutting_down' });
    } finally {
      c.destroy();
      s.close();
    }
  });
});

describe('methods and paths', () => {
  it('answers HEAD with the GET status and headers and no body, and serves the next request', async () => {
    const r = await exchange('HEAD /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v2/markets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const [head, rest] = [r.text.slice(0, r.text.indexOf('\r\n\r\n') + 4), r.text.slice(r.text.indexOf('\r\n\r\n') + 4)];
    expect(statuses(head)).toEqual([200]);
    expect(head.toLowerCase()).toContain(`content-length: ${JSON.stringify({ status: 'ok' }).length}`);
    expect(head.toLowerCase()).toContain('content-type: application/json');
    expect(rest.startsWith('HTTP/1.1 200 OK')).toBe(true);
    expect(bodyOf(rest)).toEqual({ markets: [] });
  });

  it('answers other methods 405 with an Allow header', async () => {
    const r = await fetch(`http://127.0.0.1:${port}/api/v2/status`, { method: 'DELETE' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, HEAD');
    expect(await r.json()).toMatchObject({ success: false, code: 'method_not_allowed' });
  });

  it('answers non-canonical paths (empty segments) 404 naming the canonical one', async () => {
    for (const p of ['//api/v2/status', '/api/v2/status/', '/api//v2/status']) {
      const r = await exchange(`GET ${p} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(statuses(r.text), p).toEqual([404]);
      expect(String(bodyOf(r.text)['error'])).toContain('/api/v2/status)');
    }
  });

  it('answers raw invalid UTF-8 in the query or path 400, as %FF is', async () => {
    for (const target of ['/api/v2/status?a=\xff', '/api/v2/status\xfe']) {
      const r = await exchange(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(statuses(r.text), JSON.stringify(target)).toEqual([400]);
    }
  });
});

/**
 * `server.front` off: uWS itself on the public port, for a proxy that speaks HTTP/1.1 to it. The
 * router then refuses what the front would have refused in a request's framing (HTTP/1.0 and heads
 * uWS cannot parse go unanswered in this mode, which is what README says it gives up).
 */
describe('front off', () => {
  let off: HttpServer;
  let offPort = 0;
  beforeAll(async () => {
    off = new HttpServer(createLogger('silent'));
    off.get('/api/v2/status', () => jsonReply({ status: 'ok' }));
    off.get('/api/v2/markets', () => jsonReply({ markets: [] }));
    off.get('/api/v2/later', async (ctx) => {
      await new Promise((r) => setImmediate(r));
      return jsonReply({ key: ctx.headers['x-api-key'] ?? null });
    });
    off.get('/api/v2/headed', (ctx) => {
      ctx.responseHeaders['X-RateLimit-Limit-Second'] = '10';
      return { status: 429, body: '{"a":1}', headers: { 'Retry-After': '3' } };
    });
    offPort = await off.listen('127.0.0.1', 0, 'off');
  });
  afterAll(() => off.close());

  it('serves uWS on the public port, keep-alive and a body of one Content-Length included', async () => {
    const r = await exchange(
      'GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\nPOST /api/v2/status HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /api/v2/markets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      CLOSE_GUARD_MS,
      offPort,
    );
    expect(statuses(r.text)).toEqual([200, 405, 200]);
  });

  it('answers conflicting Content-Length or Transfer-Encoding 400 with the error body of the front, and closes', async () => {
    const cases: [string, string][] = [
      ['Content-Length: 0\r\nContent-Length: 47\r\n', 'more than one Content-Length header field'],
      ['Transfer-Encoding: chunked\r\n', 'Transfer-Encoding is not accepted (every endpoint is GET and takes no body)'],
    ];
    for (const [fieldLines, error] of cases) {
      const r = await exchange(`GET /api/v2/status HTTP/1.1\r\nHost: x\r\n${fieldLines}\r\n`, CLOSE_GUARD_MS, offPort);
      expect(r.closed).toBe(true);
      expect(statuses(r.text)).toEqual([400]);
      expect(r.text.toLowerCase()).toContain('connection: close');
      expect(bodyOf(r.text)).toEqual({ success: false, code: 'bad_request', error });
    }
  });

  it('never runs the bytes after such a head: with them in the same read, or beside Content-Length, uWS closes unanswered', async () => {
    const second = 'GET /api/v2/markets HTTP/1.1\r\nHost: x\r\n\r\n';
    const heads = [
      `Content-Length: 0\r\nContent-Length: ${second.length}\r\n`,
      'Transfer-Encoding: chunked\r\n',
      'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n',
    ];
    for (const fieldLines of heads) {
      const r = await exchange(
        `GET /api/v2/status HTTP/1.1\r\nHost: x\r\n${fieldLines}\r\n${fieldLines.startsWith('T') ? '0\r\n\r\n' : ''}${second}`,
        CLOSE_GUARD_MS,
        offPort,
      );
      expect(r.closed).toBe(true);
      expect(statuses(r.text)).not.toContain(200);
      expect(r.text).not.toContain('markets');
    }
  });

  it('reads the request headers in the same walk (key, request id, Connection) and answers after an await', async () => {
    const id = '0b7c9f3e-2a41-4d5e-9c6b-8f1a2b3c4d5e';
    const r = await exchange(
      `GET /api/v2/later HTTP/1.1\r\nHost: x\r\nX-API-Key: k1\r\nX-Request-ID: ${id}\r\nConnection: close\r\n\r\n`,
      CLOSE_GUARD_MS,
      offPort,
    );
    expect([statuses(r.text), bodyOf(r.text), r.closed]).toEqual([[200], { key: 'k1' }, true]);
    expect(r.text.toLowerCase()).toContain(`x-request-id: ${id}`);
  });

  it('writes the same head when it writes the status and headers in one call as when it writes a header at a time', async () => {
    // The first answer keeps the connection (one call), the second closes it (a header at a time).
    const req = (close: boolean): string =>
      `GET /api/v2/headed HTTP/1.1\r\nHost: x\r\nX-Request-ID: 0b7c9f3e-2a41-4d5e-9c6b-8f1a2b3c4d5e\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
    const r = await exchange(req(false) + req(true), CLOSE_GUARD_MS, offPort);
    expect(r.closed).toBe(true);
    const [kept, closed] = r.text.split(/(?=HTTP\/1\.1 )/);
    const same = (text: string): string => text.replace(/\r\nDate: [^\r]*/, '').replace(/\r\nconnection: close/gi, '');
    expect(same(kept!)).toBe(
      'HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nx-request-id: 0b7c9f3e-2a41-4d5e-9c6b-8f1a2b3c4d5e\r\nX-RateLimit-Limit-Second: 10\r\nRetry-After: 3\r\nuWebSockets: 20\r\nContent-Length: 7\r\n\r\n{"a":1}',
    );
    expect(same(closed!)).toBe(same(kept!));
    expect(closed).toContain('\r\nconnection: close\r\n');
  });

  it('reports a taken port as a ListenError', async () => {
    const other = new HttpServer(createLogger('silent'));
    await expect(other.listen('127.0.0.1', offPort, 'off')).rejects.toBeInstanceOf(ListenError);
    other.close();
  });

  it('is chosen by server.front, and a bad value stops start-up naming the key', () => {
    expect(loadConfig({ env: {} }).server.front).toBe('off');
    expect(loadConfig({ env: { CROSSBOOK__server__front: 'guard' } }).server.front).toBe('guard');
    expect(loadConfig({ env: { CROSSBOOK__server__front: 'off' } }).server.front).toBe('off');
    expect(() => loadConfig({ env: { CROSSBOOK__server__front: 'none' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { CROSSBOOK__server__front: 'none' } })).toThrow(/server\.front: must be "guard" .* or "off"/);
  });
});

describe('key redaction', () => {
  it('redacts api_key however its name is spelled, and key-shaped values anywhere', () => {
    for (const name of ['api_key', 'API_KEY', 'api%5Fkey', '%61pi_key', 'api%5fKEY', '%61%70%69%5f%6b%65%79'])
      expect(redactQuery(`limit=1&${name}=${KEY}`), name).toBe(`limit=1&${name}=[redacted]`);
    expect(redactQuery(`limit=1&x=${KEY}`)).not.toContain(KEY.slice(4));
    expect(redactQuery(`limit=1&x=%70mx_${KEY.slice(4)}`)).not.toContain(KEY.slice(4));
    expect(redactQuery('api_key=%zz')).toBe('api_key=[redacted]');
    expect(redactPath(`/api/v2/markets/${KEY}`)).toBe('/api/v2/markets/[redacted]');
  });

  it('keeps the key out of every debug log line, 2xx, 4xx and refusals alike', async () => {
    lines.length = 0;
    const targets = [
      `/api/v2/markets?limit=1&api%5Fkey=${KEY}`,
      `/api/v2/markets?limit=1&%61pi_key=${KEY}`,
      `/api/v2/nope?api%5Fkey=${KEY}`,
      `/api/v2/markets/${KEY}`,
      `/api/v2/markets/?api_key=${KEY}`,
    ];
    for (const t of targets) await exchange(`GET ${t} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    await exchange(`GET /api/v2/markets?api_key=${KEY} HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n`);
    expect(lines.length).toBeGreaterThanOrEqual(targets.length + 1);
    expect(lines.filter((l) => l.includes(KEY.slice(4)))).toEqual([]);
  });
});

/**
 * The built guard (dist/) runs its front on a worker thread, which the TypeScript sources under
 * vitest cannot start: this loads the compiled module, so that thread, its start-up message and
 * the refusal route both threads must agree on are tested. Upstream is a plain TCP server in
 * uWS's place that records what reaches it and answers each request with a fixed response.
 */
describe('the HTTP front on its worker thread (needs dist/: npx tsc -p tsconfig.json)', () => {
  let guard: Guard;
  let upstream: net.Server;
  let port = 0;
  const received: string[] = [];

  beforeAll(async () => {
    const url = pathToFileURL(join(import.meta.dirname, '../../dist/src/server/guard.js')).href;
    const { HttpGuard } = (await import(url)) as { HttpGuard: typeof Guard };
    upstream = net.createServer((s) =>
      s.on('data', (d) => {
        received.push(d.toString('latin1'));
        s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      }),
    );
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    guard = new HttpGuard((upstream.address() as net.AddressInfo).port);
    port = await guard.listen('127.0.0.1', 0);
  });

  afterAll(() => {
    guard.close();
    upstream.close();
  });

  /**
   * Sends `bytes` and resolves with what came back once the answer is complete or the connection
   * ended; 30 s of silence is the failure guard (it was 1 s, which a starved worker thread can miss).
   */
  const exchange = (bytes: string): Promise<string> =>
    new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => c.write(bytes, 'latin1'));
      let got = '';
      c.on('data', (d) => {
        got += d.toString('latin1');
        if (got.endsWith('ok')) c.end();
      });
      c.on('close', () => resolve(got));
      c.setTimeout(30_000, () => c.destroy());
    });

  it('reports a taken port from its worker as a ListenError', async () => {
    const { HttpGuard } = (await import(pathToFileURL(join(import.meta.dirname, '../../dist/src/server/guard.js')).href)) as { HttpGuard: typeof Guard };
    const second = new HttpGuard((upstream.address() as net.AddressInfo).port);
    await expect(second.listen('127.0.0.1', port)).rejects.toMatchObject({ name: 'ListenError', message: `cannot listen on 127.0.0.1:${port} (EADDRINUSE)` });
    second.close();
  });

  it('forwards a good head byte for byte and relays the answer', async () => {
    const head = 'GET /api/v2/status HTTP/1.1\r\nHost: x\r\nX-API-Key: k\r\n\r\n';
    expect(await exchange(head)).toBe('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    expect(received.at(-1)).toBe(head);
  });

  it('sends a refused head upstream on the route the main thread parses', async () => {
    await exchange('GET /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
    const line = received.at(-1)!.split('\r\n')[0]!;
    expect(line.startsWith(`GET ${guard.route.prefix}400/bad_request?m=`)).toBe(true);
    const [path, query] = line.slice(4, line.lastIndexOf(' ')).split('?');
    expect(guard.route.parse(path!, query!)).toMatchObject({ status: 400, code: 'bad_request' });
  });
});

/**
 * The relay reads uWS's bytes into a buffer it reuses, and a write the client's socket leaves pending
 * points into it: a client that stops reading while 16 MB stream through (more than loopback's
 * socket buffers hold) makes those writes pend and queue, and every byte must still arrive once, in
 * order. Upstream is a plain TCP server in uWS's place.
 */
describe('relaying to a client that reads slower than upstream writes', () => {
  const TOTAL = 16 * 1024 * 1024;
  /** Word i of the stream holds i, so a byte overwritten, lost or repeated shows. */
  const expected = Buffer.alloc(TOTAL);
  for (let i = 0; i < TOTAL / 4; i++) expected.writeUInt32LE(i, i * 4);

  it('delivers every byte once and in order', async () => {
    const upstream = net.createServer((s) =>
      s.once('data', () => {
        // Uneven chunk sizes, so reads end at any offset of the reused buffer.
        let off = 0;
        const more = (): void => {
          while (off < TOTAL) {
            const n = Math.min(TOTAL - off, 1000 + (off % 70_000));
            const ok = s.write(expected.subarray(off, off + n));
            off += n;
            if (!ok) return void s.once('drain', more);
          }
          s.end();
        };
        more();
      }),
    );
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const front = new GuardFront((upstream.address() as net.AddressInfo).port, new GuardRoute());
    const frontPort = await front.listen('127.0.0.1', 0);
    const chunks: Buffer[] = [];
    let got = 0;
    await new Promise<void>((resolve, reject) => {
      const c = net.connect(frontPort, '127.0.0.1', () => c.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n'));
      c.on('error', reject);
      // Stop reading at every 2 MB for a few event-loop turns, so the front's writes back up.
      let nextStop = 2 * 1024 * 1024;
      c.on('data', (d: Buffer) => {
        chunks.push(d);
        got += d.length;
        if (got < nextStop) return;
        nextStop += 2 * 1024 * 1024;
        c.pause();
        setTimeout(() => c.resume(), 20);
      });
      c.on('end', () => {
        c.end();
        resolve();
      });
    });
    front.close();
    upstream.close();
    const all = Buffer.concat(chunks);
    expect(all.length).toBe(TOTAL);
    expect(all.equals(expected)).toBe(true);
  });
});
