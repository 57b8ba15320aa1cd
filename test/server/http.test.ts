import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { log } from '../../src/core/log.js';
import { HttpServer, jsonReply, redactQuery } from '../../src/server/http.js';
import { isNative } from '../../src/server/uws.js';

let http: HttpServer;
let base: string;

beforeAll(async () => {
  http = new HttpServer(log);
  http.get('/ok', () => jsonReply({ ok: true }));
  http.get('/async/:id', async (ctx) => {
    await new Promise((r) => setTimeout(r, 5));
    return jsonReply({ id: ctx.params['id'] });
  });
  http.get('/boom', () => {
    throw new Error('secret internals');
  });
  http.get('/boom-async', async () => {
    throw new Error('secret internals');
  });
  const port = await http.listen('127.0.0.1', 0);
  base = `http://127.0.0.1:${port}`;
});
afterAll(() => http.close());

describe('HttpServer', () => {
  it('runs on the native uWebSockets.js, and would refuse the JS fallback', () => {
    expect(isNative(http.uws)).toBe(true);
    expect(isNative({ App: function App() {} })).toBe(false);
  });

  it('echoes a UUID X-Request-ID and replaces anything else', async () => {
    const id = '3f2c1d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
    const r1 = await fetch(`${base}/ok`, { headers: { 'x-request-id': id } });
    expect(r1.headers.get('x-request-id')).toBe(id);
    const r2 = await fetch(`${base}/ok`, { headers: { 'x-request-id': 'not-a-uuid; drop table' } });
    expect(r2.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const r3 = await fetch(`${base}/ok`);
    expect(r3.headers.get('x-request-id')).toBeTruthy();
    // Any UUID is echoed, whatever its version and variant bits (spec 4).
    for (const u of ['00000000-0000-0000-0000-000000000000', '11111111-1111-1111-1111-111111111111', '3F2C1D4E-5A6B-0C7D-CE9F-0A1B2C3D4E5F']) {
      const r = await fetch(`${base}/ok`, { headers: { 'x-request-id': u } });
      expect(r.headers.get('x-request-id')).toBe(u);
    }
  });

  it('serves params from async handlers', async () => {
    expect(await (await fetch(`${base}/async/abc`)).json()).toEqual({ id: 'abc' });
  });

  it('answers unknown routes 404 and other methods 405 with the error body', async () => {
    const r = await fetch(`${base}/nope`);
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ success: false, code: 'not_found' });
    const p = await fetch(`${base}/ok`, { method: 'POST' });
    expect(p.status).toBe(405);
    expect(await p.json()).toMatchObject({ success: false });
  });

  it('turns a throw into a 500 with the request id and no stack, and keeps serving', async () => {
    for (const path of ['/boom', '/boom-async']) {
      const r = await fetch(`${base}${path}`);
      expect(r.status).toBe(500);
      const text = await r.text();
      expect(text).not.toContain('secret');
      expect(JSON.parse(text)).toMatchObject({ success: false, error: 'internal error', request_id: r.headers.get('x-request-id') });
    }
    expect((await fetch(`${base}/ok`)).status).toBe(200);
  });

  it('redacts api keys from logged query strings', () => {
    expect(redactQuery('a=1&api_key=pmx_secret&b=2')).toBe('a=1&api_key=[redacted]&b=2');
    expect(redactQuery('API_KEY=pmx_x')).toBe('API_KEY=[redacted]');
  });
});

describe('HttpServer closing connections (front off)', () => {
  it('sends one Connection: close with an answer that closes, whether or not the request asked to close', async () => {
    const { connect } = await import('node:net');
    const s = new HttpServer(log);
    s.get('/ok', () => jsonReply({ ok: true }));
    const port = await s.listen('127.0.0.1', 0, 'off');
    const raw = (head: string): Promise<string> =>
      new Promise((resolve) => {
        const c = connect(port, '127.0.0.1', () => c.write(head));
        let got = '';
        c.on('data', (d: Buffer) => (got += d.toString()));
        c.on('close', () => resolve(got));
      });
    const closes = (text: string): number => text.split('\r\n').filter((l) => /^connection:\s*close$/i.test(l)).length;
    try {
      // refused framing: the server closes (uWS writes the header itself)
      const te = await raw('GET /ok HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
      expect(te).toMatch(/^HTTP\/1.1 400/);
      expect(closes(te)).toBe(1);
      // the client asked to close (uWS writes none: ours), in either case of the value
      for (const v of ['close', 'Close']) {
        const asked = await raw(`GET /ok HTTP/1.1\r\nHost: x\r\nConnection: ${v}\r\n\r\n`);
        expect(asked).toMatch(/^HTTP\/1.1 200/);
        expect(closes(asked)).toBe(1);
      }
    } finally {
      s.close();
    }
  });
});

describe('HttpServer shutting down (front off, behind a proxy that keeps connections alive)', () => {
  it('answers a request on a kept-alive connection after close() with a 503 that closes it, and takes no new connection', async () => {
    const { Agent, get } = await import('node:http');
    const s = new HttpServer(log);
    s.get('/ok', () => jsonReply({ ok: true }));
    const port = await s.listen('127.0.0.1', 0, 'off');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    type Got = { status: number; headers: Record<string, string | string[] | undefined>; body: string; reused: boolean };
    const ask = (): Promise<Got> =>
      new Promise((resolve, reject) => {
        const req = get(`http://127.0.0.1:${port}/ok`, { agent }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, reused: req.reusedSocket }));
        });
        req.on('error', reject);
      });
    try {
      expect(await ask()).toMatchObject({ status: 200, reused: false });
      s.close();
      const late = await ask();
      expect(late.reused).toBe(true); // the connection opened before close()
      expect(late.status).toBe(503);
      expect(late.headers['connection']).toBe('close');
      expect(late.headers['retry-after']).toBe('1');
      expect(JSON.parse(late.body)).toMatchObject({ success: false, code: 'shutting_down' });
      await expect(ask()).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      agent.destroy();
      s.close();
    }
  });
});
