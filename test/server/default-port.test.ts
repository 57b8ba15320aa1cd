import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/core/log.js';
import { ClientAddresses } from '../../src/server/client-address.js';
import { HttpServer, jsonReply } from '../../src/server/http.js';
import { bodyOf, CLOSE_GUARD_MS, exchange, statuses } from './raw.js';

/**
 * The public port as `npm start` gives it (config/default.json: `server.front` off, so uWS owns it):
 * hostile request heads sent raw, each refused by the router with a clear answer at once, and the
 * client address each request log line carries.
 */
let http: HttpServer;
let port: number;
const lines: string[] = [];

beforeAll(async () => {
  const config = loadConfig({ env: {} });
  expect(config.server.front).toBe('off');
  http = new HttpServer(createLogger('debug', { write: (s: string) => void lines.push(s) }), { trustProxy: config.server.trustProxy });
  http.get('/api/v2/status', () => jsonReply({ status: 'ok' }));
  http.get('/api/v2/echo', (ctx) =>
    jsonReply({ key: ctx.headers['x-api-key'] ?? null, accept: ctx.headers.accept ?? null, origin: ctx.headers.origin ?? null }),
  );
  port = await http.listen('127.0.0.1', 0, config.server.front);
});
afterAll(() => http.close());

const ask = (head: string): ReturnType<typeof exchange> => exchange(head, CLOSE_GUARD_MS, port);

describe('the default public port refuses what uWS would let through', () => {
  it('answers Transfer-Encoding, a repeated Content-Length and a repeated Host 400 and closes', async () => {
    const cases: [string, string][] = [
      ['Host: x\r\nTransfer-Encoding: chunked\r\n', 'Transfer-Encoding is not accepted (every endpoint is GET and takes no body)'],
      ['Host: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n', 'more than one Content-Length header field'],
      ['Host: x\r\nHost: y\r\n', 'more than one Host header field'],
    ];
    for (const [fieldLines, error] of cases) {
      const r = await ask(`GET /api/v2/status HTTP/1.1\r\n${fieldLines}\r\n`);
      expect(r.closed, fieldLines).toBe(true);
      expect(statuses(r.text), fieldLines).toEqual([400]);
      expect(bodyOf(r.text)).toEqual({ success: false, code: 'bad_request', error });
    }
  });

  it('answers every method the API does not serve 405 with Allow, on any path, and keeps the connection', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT']) {
      for (const path of ['/api/v2/status', '/api/v2/nope']) {
        const r = await ask(
          `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\nGET /api/v2/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
        );
        expect(statuses(r.text), `${method} ${path}`).toEqual([405, 200]);
        expect(r.text, method).toMatch(/\r\nAllow: GET, HEAD\r\n/);
        expect(bodyOf(r.text.split(/(?=HTTP\/1\.1 200)/)[0]!)).toMatchObject({ success: false, code: 'method_not_allowed' });
      }
    }
  });

  it('answers a head under 4 KB sent in 1,460-byte segments, reads a 7.6 KB one that arrives whole, and refuses one over 16 KB 431', async () => {
    const ids = (n: number): string => Array.from({ length: n }, (_, i) => `venue_a:KXPRESPARTY-2028-CANDIDATE-${String(i).padStart(30, '0')}`).join(',');
    const head = (n: number): string => `GET /api/v2/status?ids=${encodeURIComponent(ids(n))} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
    expect(head(45).length).toBeLessThan(4096);
    expect(head(100).length).toBeGreaterThan(7000);
    const segmented = await exchange(head(45), CLOSE_GUARD_MS, port, 1460);
    expect([segmented.closed, statuses(segmented.text)]).toEqual([true, [200]]);
    const whole = await ask(head(100));
    expect([whole.closed, statuses(whole.text)]).toEqual([true, [200]]);
    const over = await ask(head(240));
    expect(head(240).length).toBeGreaterThan(16 * 1024);
    expect([over.closed, statuses(over.text)]).toEqual([true, [431]]);
    expect(bodyOf(over.text)).toEqual({ success: false, code: 'headers_too_large', error: 'request head over 16384 bytes' });
  });

  it('checks each request on a connection afresh: a bad query or path after a sound request on the same path', async () => {
    const get = (target: string): string => `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`;
    const r = await ask(
      get('/api/v2/status') +
        get('/api/v2/status?a=\xff') +
        get('/api/v2/status') +
        get('/api/v2/status/') +
        get('/api/v2//status') +
        'GET /api/v2/status?b=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(statuses(r.text)).toEqual([200, 400, 200, 404, 404, 200]);
    expect(r.text).toContain('"code":"validation.malformed_query"');
  });

  it('reads the first field of each header the pipeline uses, an empty one as absent, as getHeader does', async () => {
    const echo = async (fields: string): Promise<unknown> =>
      bodyOf((await ask(`GET /api/v2/echo HTTP/1.1\r\nHost: x\r\n${fields}Connection: close\r\n\r\n`)).text);
    expect(await echo('X-API-Key: pmx_first\r\nX-API-Key: pmx_second\r\nAccept: text/csv\r\n')).toEqual({ key: 'pmx_first', accept: 'text/csv', origin: null });
    expect(await echo('X-API-Key:\r\nX-API-Key: pmx_second\r\nOrigin: http://a.example\r\n')).toEqual({ key: null, accept: null, origin: 'http://a.example' });
    expect(await echo('Accept:\r\nX-API-Key: pmx_only\r\n')).toEqual({ key: 'pmx_only', accept: null, origin: null });
  });

  it('never answers a head without Host, nor a lowercase or unknown method: uWS 20.30 closes those itself, at once (README: Deployment)', async () => {
    for (const head of [
      'GET /api/v2/status HTTP/1.1\r\nAccept: */*\r\n\r\n',
      'get /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n',
      'FOO /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n',
    ]) {
      const r = await ask(head);
      expect(r, head).toEqual({ closed: true, text: '' });
    }
  });
});

describe('client addresses', () => {
  const clientOf = (id: string): unknown => {
    const line = lines.find((l) => l.includes(id));
    return line === undefined ? undefined : (JSON.parse(line) as { client?: string }).client;
  };

  it('logs the peer and ignores a forged X-Forwarded-For / X-Real-IP from a peer not in server.trustProxy', async () => {
    const id = '6a1f0c2e-1b3d-4e5f-8a9b-0c1d2e3f4a5b';
    const r = await ask(
      `GET /api/v2/status HTTP/1.1\r\nHost: x\r\nX-Request-ID: ${id}\r\nX-Forwarded-For: 203.0.113.9\r\nX-Real-IP: 203.0.113.8\r\nConnection: close\r\n\r\n`,
    );
    expect(statuses(r.text)).toEqual([200]);
    expect(clientOf(id)).toBe('127.0.0.1');
  });

  it('believes a trusted proxy, taking the rightmost hop it does not trust', async () => {
    const trusting = new HttpServer(createLogger('debug', { write: (s: string) => void lines.push(s) }), { trustProxy: ['127.0.0.0/8', '10.0.0.2'] });
    trusting.get('/api/v2/status', () => jsonReply({ status: 'ok' }));
    const p = await trusting.listen('127.0.0.1', 0);
    try {
      const cases: [string, string][] = [
        ['X-Forwarded-For: 198.51.100.7, 203.0.113.9, 10.0.0.2\r\n', '203.0.113.9'],
        ['X-Real-IP: 203.0.113.8\r\n', '203.0.113.8'],
        ['X-Forwarded-For: not-an-address, 10.0.0.2\r\n', '10.0.0.2'],
      ];
      for (const [i, [field, client]] of cases.entries()) {
        const id = `6a1f0c2e-1b3d-4e5f-8a9b-0c1d2e3f4a6${i}`;
        const r = await exchange(`GET /api/v2/status HTTP/1.1\r\nHost: x\r\nX-Request-ID: ${id}\r\n${field}Connection: close\r\n\r\n`, CLOSE_GUARD_MS, p);
        expect(statuses(r.text)).toEqual([200]);
        expect(clientOf(id), field).toBe(client);
      }
    } finally {
      trusting.close();
    }
  });

  it('resolves chains and IPv6 forms without a socket', () => {
    const c = new ClientAddresses(['10.0.0.0/8', '::1']);
    expect(c.resolve('10.1.2.3', '1.2.3.4, 10.9.9.9', undefined)).toBe('1.2.3.4');
    expect(c.resolve('0000:0000:0000:0000:0000:ffff:0a00:0001', '1.2.3.4', undefined)).toBe('1.2.3.4');
    expect(c.resolve('0000:0000:0000:0000:0000:0000:0000:0001', '2001:db8::1', undefined)).toBe('2001:db8::1');
    expect(c.resolve('192.0.2.1', '1.2.3.4', '5.6.7.8')).toBe('192.0.2.1');
    expect(c.resolve('10.0.0.1', '10.0.0.2, 10.0.0.3', undefined)).toBe('10.0.0.2');
    expect(new ClientAddresses().resolve('10.0.0.1', '1.2.3.4', '5.6.7.8')).toBe('10.0.0.1');
  });

  it('takes server.trustProxy as addresses and CIDRs, and stops start-up on anything else naming the key', () => {
    expect(loadConfig({ env: { CROSSBOOK__server__trustProxy: '["127.0.0.1","10.0.0.0/8","::1","fd00::/8"]' } }).server.trustProxy).toHaveLength(4);
    for (const bad of ['["localhost"]', '["10.0.0.0/33"]', '"127.0.0.1"', '["1.2.3.4/8/9"]'])
      expect(() => loadConfig({ env: { CROSSBOOK__server__trustProxy: bad } }), bad).toThrow(/server\.trustProxy/);
  });

  it('says in one line that a proxy belongs in front when uWS listens on a non-loopback address', async () => {
    const warned: string[] = [];
    const s = new HttpServer(createLogger('info', { write: (l: string) => void warned.push(l) }));
    // 0.0.0.0 on an ephemeral port: bound on this machine's interfaces, no traffic is sent to it.
    await s.listen('0.0.0.0', 0);
    s.close();
    expect(warned.filter((l) => l.includes('put a proxy in front'))).toHaveLength(1);
    const quiet: string[] = [];
    const q = new HttpServer(createLogger('info', { write: (l: string) => void quiet.push(l) }));
    await q.listen('127.0.0.1', 0);
    q.close();
    expect(quiet.filter((l) => l.includes('put a proxy in front'))).toEqual([]);
  });
});
