import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/core/log.js';
import { startService, type Service } from '../../src/service.js';
import { exchange } from '../server/raw.js';

/**
 * The real nginx on loopback in front of the real service (embedded simulator): the shipped
 * deploy/nginx.conf (TLS with a certificate made here, WebSocket upgrades, X-Forwarded-For and
 * X-Request-ID) in front of a service as shipped (HTTP front off, server.trustProxy 127.0.0.1),
 * also with the shipped upstream settings on plain HTTP; and a stock proxy_pass with nginx's
 * default upstream settings (HTTP/1.0, which once got a 502 after 10 s) in front of a second
 * service that keeps the HTTP front (`server.front` guard). Skips when nginx or openssl is not installed.
 */
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
const OPENSSL = ['/usr/bin/openssl', '/usr/local/bin/openssl'].find((p) => existsSync(p));
const missing = [!NGINX && 'nginx', !OPENSSL && 'openssl'].filter(Boolean).join(' and ');
if (missing) console.warn(`test/deploy/nginx.test.ts skipped: ${missing} not installed (apt-get install -y nginx openssl)`);

const dir = mkdtempSync(join(tmpdir(), 'cb-nginx-'));
const lines: string[] = [];
let svc: Service | undefined;
/** A second service with its HTTP front off, behind nginx's HTTP/1.1 keep-alive upstream (README: Deployment). */
let off: Service | undefined;
const offLines: string[] = [];
let nginx: ChildProcess | undefined;
let nginxLog = '';
const ports = { tls: 0, plain: 0, stock: 0, off: 0 };
let cert = '';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

/** The shipped site file with only ports, certificate paths and the log path replaced (each must match). */
function site(upstreamPort: number): string {
  let text = readFileSync(join(import.meta.dirname, '../../deploy/nginx.conf'), 'utf8');
  const swaps: [string, string][] = [
    ['listen 80;', `listen 127.0.0.1:${ports.plain};`],
    ['listen 443 ssl;', `listen 127.0.0.1:${ports.tls} ssl;`],
    ['server 127.0.0.1:8080;', `server 127.0.0.1:${upstreamPort};`],
    ['/etc/ssl/crossbook/fullchain.pem', join(dir, 'cert.pem')],
    ['/etc/ssl/crossbook/privkey.pem', join(dir, 'key.pem')],
    ['/var/log/nginx/crossbook.access.log', join(dir, 'access.log')],
  ];
  for (const [from, to] of swaps) {
    expect(text.includes(from), `deploy/nginx.conf no longer has "${from}"`).toBe(true);
    text = text.replace(from, to);
  }
  return text;
}

async function startNginx(upstreamPort: number, offPort: number): Promise<void> {
  execFileSync(
    OPENSSL!,
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
  writeFileSync(join(dir, 'site.conf'), site(offPort));
  for (const t of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, t));
  const main = `
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  include ${join(dir, 'site.conf')};
  # Stock: nginx's default upstream settings (proxy_http_version 1.0, Connection: close).
  server {
    listen 127.0.0.1:${ports.stock};
    location / { proxy_pass http://127.0.0.1:${upstreamPort}; }
  }
  # The shipped upstream settings (HTTP/1.1, idle connections kept) in front of the service with its front off.
  upstream crossbook_off {
    server 127.0.0.1:${offPort};
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${ports.off};
    location / {
      proxy_pass http://crossbook_off;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
  writeFileSync(join(dir, 'nginx.conf'), main);
  nginx = spawn(NGINX!, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  nginx.stderr!.on('data', (d) => (nginxLog += d));
  // Ready when all three ports accept connections; nginx exiting fails at once, and the hook's
  // timeout is the failure guard (a count of 100 tries, ~5 s, could run out on a busy machine).
  for (const p of Object.values(ports)) {
    for (;;) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = net.connect(p, '127.0.0.1', () => resolve(true));
        s.on('error', () => resolve(false));
        s.on('connect', () => s.destroy());
      });
      if (ok) break;
      if (nginx.exitCode !== null) throw new Error(`nginx did not start: ${nginxLog}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function get(url: string, opts: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : (undefined as never);
    const req = (mod ?? https).request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers, ca: cert, servername: 'localhost', ...(u.protocol === 'http:' ? { agent: false } : {}) },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function plainGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: Headers }> {
  const r = await fetch(url, { headers, redirect: 'manual' });
  return { status: r.status, body: await r.text(), headers: r.headers };
}

beforeAll(async () => {
  if (missing) return;
  const config = loadConfig({
    env: {},
    overrides: { dataDir: join(dir, 'data'), server: { host: '127.0.0.1', port: 0, baseUrl: null, front: 'guard' }, sim: { ticksPerSecond: 100, seed: 11 } },
  });
  svc = await startService(config, { log: createLogger('debug', { write: (s: string) => void lines.push(s) }) });
  // /status is 503 until most venues are live; the tests below read it as a healthy service's.
  for (let i = 0; (await fetch(`http://127.0.0.1:${svc.port}/api/v2/status`)).status !== 200; i++) {
    if (i > 200) throw new Error('the service did not report ok within 40 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  off = await startService(
    loadConfig({
      env: {},
      overrides: {
        dataDir: join(dir, 'data-off'),
        server: { host: '127.0.0.1', port: 0, baseUrl: null, front: 'off', trustProxy: ['127.0.0.1'] },
        sim: { process: 'inline', ticksPerSecond: 20, seed: 12 },
      },
    }),
    { log: createLogger('debug', { write: (s: string) => void offLines.push(s) }) },
  );
  for (let i = 0; (await fetch(`http://127.0.0.1:${off.port}/api/v2/status`)).status !== 200; i++) {
    if (i > 200) throw new Error('the front-off service did not report ok within 40 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  await startNginx(svc.port, off.port);
  // A failure guard: two services and nginx starting on a busy machine.
}, 120_000);

afterAll(async () => {
  nginx?.kill('SIGTERM');
  if (nginx && nginx.exitCode === null) await new Promise((r) => nginx!.once('exit', r));
  await svc?.close();
  await off?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(missing !== '')('behind nginx', () => {
  it('answers HTTP/1.0 on crossbook itself (curl -0, ab, health checkers) and closes', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const s = net.connect(svc!.port, '127.0.0.1');
      let out = '';
      const guard = setTimeout(() => reject(new Error(`no close after HTTP/1.0 request; got ${JSON.stringify(out)}`)), 30_000);
      s.on('data', (d) => (out += d));
      s.on('close', () => {
        clearTimeout(guard);
        resolve(out);
      });
      s.write('GET /api/v2/status HTTP/1.0\r\n\r\n');
    });
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: expect.any(String) });
  });

  it('serves REST through the shipped TLS config, with X-Request-ID and X-Forwarded-For passed on', async () => {
    const base = `https://localhost:${ports.tls}/api/v2`;
    const s = await get(`${base}/status`);
    expect(s.status).toBe(200);
    expect(JSON.parse(s.body)).toMatchObject({ status: expect.any(String) });
    // nginx's own id, written as a UUID, reaches crossbook and comes back
    expect(String(s.headers['x-request-id'])).toMatch(UUID);
    const id = '5b0e1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d';
    const m = await get(`${base}/markets?limit=1`, { headers: { 'x-api-key': off!.demoKey!, 'x-request-id': id } });
    expect(m.status).toBe(200);
    expect(m.headers['x-request-id']).toBe(id);
    const logged = offLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['requestId'] === id);
    expect(logged).toMatchObject({ path: '/api/v2/markets', status: 200, client: '127.0.0.1' });
    // Any method but GET and HEAD is answered by nginx (uWS closes on one it does not know).
    for (const method of ['POST', 'FOO']) {
      const refused = await get(`${base}/status`, { method });
      expect(refused.status, method).toBe(405);
      expect(refused.headers['allow'], method).toBe('GET, HEAD');
    }
    const head = await get(`${base}/status`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    const bad = await get(`${base}/markets?limit=1`);
    expect(bad.status).toBe(401);
    expect(JSON.parse(bad.body)).toMatchObject({ success: false });
  });

  it('redirects plain HTTP to HTTPS', async () => {
    const r = await plainGet(`http://127.0.0.1:${ports.plain}/api/v2/status`);
    expect(r.status).toBe(308);
    expect(r.headers.get('location')).toBe(`https://127.0.0.1/api/v2/status`);
  });

  it('passes WebSocket upgrades through the shipped TLS config', async () => {
    const ws = new WebSocket(`wss://localhost:${ports.tls}/api/v2/ws`, { headers: { 'x-api-key': off!.demoKey! }, ca: cert });
    const msgs: Record<string, unknown>[] = [];
    const got = (type: string): Promise<void> =>
      new Promise((resolve) => {
        const check = (): void => {
          if (msgs.some((m) => m['type'] === type)) resolve();
          else setTimeout(check, 20);
        };
        check();
      });
    ws.on('message', (d) => msgs.push(JSON.parse(d.toString()) as Record<string, unknown>));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    await got('welcome');
    ws.send(JSON.stringify({ type: 'ping' }));
    await got('pong');
    ws.close();
  });

  it("serves REST through a stock proxy_pass with nginx's default upstream settings (HTTP/1.0)", async () => {
    const base = `http://127.0.0.1:${ports.stock}/api/v2`;
    const s = await plainGet(`${base}/status`);
    expect(s.status).toBe(200);
    const m = await plainGet(`${base}/markets?limit=1`, { 'x-api-key': svc!.demoKey! });
    expect(m.status).toBe(200);
    expect(JSON.parse(m.body)).toBeTruthy();
    for (let i = 0; i < 20; i++) expect((await plainGet(`${base}/status`)).status).toBe(200);
    // HTTP/1.0 has no upgrades: through a stock config the WebSocket path says so (426) instead of a 502.
    const ws = await new Promise<number>((resolve, reject) => {
      const req = http.get(
        `${base}/ws`,
        {
          headers: {
            'x-api-key': svc!.demoKey!,
            upgrade: 'websocket',
            connection: 'upgrade',
            'sec-websocket-version': '13',
            'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('upgrade', () => resolve(101));
      req.on('error', reject);
    });
    expect(ws).toBe(426);
    expect(readFileSync(join(dir, 'error.log'), 'utf8')).not.toMatch(/upstream prematurely closed|upstream timed out/);
  });

  it('answers, in front of uWS, a 7.6 KB head sent in 1,460-byte segments, a header name with _ and an HTTP/1.0 client', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `venue_a:KXPRESPARTY-2028-CANDIDATE-${String(i).padStart(30, '0')}`).join(',');
    const head = `GET /api/v2/prices/bulk?ids=${encodeURIComponent(ids)} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${off!.demoKey!}\r\nConnection: close\r\n\r\n`;
    expect(head.length).toBeGreaterThan(7000);
    const cases: [string, number][] = [
      [head, 1460],
      [`GET /api/v2/status HTTP/1.1\r\nHost: x\r\nX_Foo: 1\r\nConnection: close\r\n\r\n`, 0],
      ['GET /api/v2/status HTTP/1.0\r\n\r\n', 0],
    ];
    for (const [req, segment] of cases) {
      const r = await exchange(req, 10_000, ports.off, segment);
      expect(r.closed, req.slice(0, 60)).toBe(true);
      expect(r.text.slice(0, 12), req.slice(0, 60)).toMatch(/^HTTP\/1\.[01] 200/);
    }
  });

  it('serves a service with its front off over the kept-alive upstream, and answers 503, not 500, on it while that service shuts down', async () => {
    const base = `http://127.0.0.1:${ports.off}/api/v2`;
    for (let i = 0; i < 5; i++) expect((await plainGet(`${base}/markets?limit=1`, { 'x-api-key': off!.demoKey! })).status).toBe(200);
    // nginx now holds an idle connection to it; the service stops listening and closes its stores
    const closing = off!.close();
    const late = await plainGet(`${base}/trades?limit=1`, { 'x-api-key': off!.demoKey! });
    await closing;
    off = undefined;
    expect(late.status).toBe(503);
    expect(JSON.parse(late.body)).toMatchObject({ success: false, code: 'shutting_down' });
    expect(late.headers.get('retry-after')).toBe('1');
    expect(offLines.filter((l) => l.includes('request failed'))).toEqual([]);
  });
});
