import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startService, type Service } from '../../src/service.js';

/** Client faults against the whole service: no crash, no state change, the right 4xx. */
const dir = mkdtempSync(join(tmpdir(), 'cb-clients-'));
let svc: Service;
let base: string;
let key: string;

beforeAll(async () => {
  svc = await startService(
    loadConfig({
      env: {},
      overrides: { dataDir: dir, logLevel: 'silent', server: { host: '127.0.0.1', port: 0, baseUrl: null }, sim: { ticksPerSecond: 100, seed: 3 } },
    }),
  );
  base = `${svc.url}/api/v2`;
  key = svc.demoKey!;
  // /status is 503 (status unknown) until the venues report; the test's last check reads it as a healthy service's.
  for (let i = 0; (await fetch(`${base}/status`)).status !== 200; i++) {
    if (i > 300) throw new Error('the service did not report its health within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}, 90_000);
afterAll(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Resolves once `done()` holds, checking after each turn of the event loop's timers (the server
 * state it reads has no event of its own); the test's timeout is the failure guard.
 */
function until(done: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => (done() ? resolve() : void setTimeout(check, 10));
    check();
  });
}

const get = (path: string): Promise<Response> => fetch(`${base}${path}`, { headers: { 'x-api-key': key } });

describe('REST clients sending garbage', () => {
  it('answers huge query strings, invalid UTF-8 and path traversal with 4xx, and keeps serving', async () => {
    const huge = await get(`/markets?q=${'x'.repeat(60_000)}`);
    expect(huge.status).toBeGreaterThanOrEqual(400);
    expect(huge.status).toBeLessThan(500);
    const utf = await get('/markets?q=%FF%FE%FD');
    expect(utf.status).toBe(400);
    expect(((await utf.json()) as { success: boolean }).success).toBe(false);
    for (const p of [
      '/venue_a/markets/..%2F..%2Fetc%2Fpasswd',
      '/venue_a/markets/%2e%2e%2f%2e%2e%2f',
      '/../../etc/passwd',
      '/venue_b/market-price/..%2F..%2Fsecret',
    ]) {
      const r = await get(p);
      expect(r.status, p).toBeGreaterThanOrEqual(400);
      expect(r.status, p).toBeLessThan(500);
    }
    const before = svc.state.catalog.size;
    for (const qs of ['limit=-1', 'limit=1e9', 'status=%00', 'platform=%00', 'cursor=%ZZ', 'q=' + '%'.repeat(10)])
      expect((await get(`/markets?${qs}`)).status, qs).toBe(400);
    expect(svc.state.catalog.size).toBeGreaterThanOrEqual(before);
    expect((await fetch(`${base}/status`)).status).toBe(200);
  });
});

describe('WebSocket clients sending garbage', () => {
  const open = (k = key): Promise<WebSocket> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}/ws`, { headers: { 'x-api-key': k } });
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });

  it('closes a connection that sends a 10 MB frame, and serves the next one', async () => {
    const ws = await open();
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    ws.send('x'.repeat(10 * 1024 * 1024));
    expect(await closed).toBeGreaterThanOrEqual(1000);
    const ok = await open();
    const pong = new Promise<string>((r) => ok.on('message', (d) => (String(d).includes('pong') ? r(String(d)) : undefined)));
    ok.send(JSON.stringify({ type: 'ping' }));
    expect(await pong).toContain('pong');
    ok.close();
  });

  it('rate-limits a subscribe flood and survives a connect/disconnect storm', async () => {
    const ws = await open();
    const codes: string[] = [];
    // Resolves at the first RATE_LIMITED, or with what came when the server closed the socket first.
    const limited = new Promise<void>((resolve) => {
      ws.on('message', (d) => {
        const m = JSON.parse(String(d)) as { code?: string };
        if (m.code) codes.push(m.code);
        if (m.code === 'RATE_LIMITED') resolve();
      });
      ws.once('close', () => resolve());
    });
    for (let i = 0; i < 200; i++) ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: ['nope'] }));
    await limited;
    expect(codes).toContain('RATE_LIMITED');
    ws.close();
    // the demo key's plan (pro) caps concurrent connections: the 26th is refused with 429
    const capped = await Promise.allSettled(Array.from({ length: 30 }, () => open()));
    expect(capped.filter((r) => r.status === 'rejected').length).toBeGreaterThan(0);
    for (const r of capped) if (r.status === 'fulfilled') r.value.terminate();
    const ent = svc.keys.create('enterprise', 'storm').key;
    for (let round = 0; round < 10; round++) {
      const socks = await Promise.all(Array.from({ length: 50 }, () => open(ent)));
      for (const s of socks) s.terminate();
    }
    expect((await fetch(`${base}/status`)).status).toBe(200);
    // Every socket terminated above: the hub counts each out when its close reaches the server.
    await until(() => svc.ws.connections() === 0);
    expect(svc.ws.connections()).toBe(0);
  });
});
