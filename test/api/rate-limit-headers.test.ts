import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from '../../src/access/api.js';
import { KeyStore } from '../../src/access/keys.js';
import { p } from '../../src/access/params.js';
import { loadPlans } from '../../src/access/plans.js';
import { QuotaLedger } from '../../src/access/quota.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer, jsonReply } from '../../src/server/http.js';

/** Spec 8's four headers, which clients read on every keyed response. */
const FOUR = ['x-ratelimit-limit-second', 'x-ratelimit-remaining-second', 'x-ratelimit-limit-month', 'x-ratelimit-remaining-month'];

const dir = mkdtempSync(join(tmpdir(), 'cb-rlh-'));
let persistence: Persistence;
let http: HttpServer;
let keys: KeyStore;
let quota: QuotaLedger;
let base: string;
let clock = Date.UTC(2026, 10, 24, 12);

beforeAll(async () => {
  persistence = new Persistence(dir);
  keys = new KeyStore(persistence.db('keys'));
  // A clock that stands still: the per-second bucket refills only when the test says so.
  quota = new QuotaLedger(persistence.db('quota'), () => clock);
  http = new HttpServer(log);
  // The shipped plans: Free is 1 request a second, 1,000 a month, and blocked from arb.
  const api = new Api(http, '/api/v2', keys, quota, loadPlans());
  api.route({ path: '/things', summary: 'things', query: z.object({ limit: p.int({ min: 1, max: 10, default: 5 }) }), handler: (c) => jsonReply(c.query) });
  api.route({ path: '/arb', summary: 'arb', endpoint: 'arb', group: 'arb', handler: () => jsonReply({ data: [] }) });
  base = `http://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2`;
});

afterAll(async () => {
  http.close();
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, key: string): Promise<Response> => fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
const headers = (r: Response): Record<string, string | null> => Object.fromEntries(FOUR.map((h) => [h, r.headers.get(h)]));

describe('rate-limit headers on every keyed response (spec 8)', () => {
  it('a per-second 429 carries the month headers too, with the month count it did not use', async () => {
    const { key, record } = keys.create('free', 'burst');
    const ok = await get('/things', key);
    expect(ok.status).toBe(200);
    const limited = await get('/things', key);
    expect(limited.status).toBe(429);
    expect(headers(limited)).toEqual({
      'x-ratelimit-limit-second': '1',
      'x-ratelimit-remaining-second': '0',
      'x-ratelimit-limit-month': '1000',
      'x-ratelimit-remaining-month': '999',
    });
    expect(quota.used(record.id)?.count).toBe(1);
  });

  it('a 403 for a blocked endpoint carries all four (and the group pair) without using a token or the month', async () => {
    const { key, record } = keys.create('free', 'blocked');
    const r = await get('/arb', key);
    expect(r.status).toBe(403);
    expect(headers(r)).toEqual({
      'x-ratelimit-limit-second': '1',
      'x-ratelimit-remaining-second': '1',
      'x-ratelimit-limit-month': '1000',
      'x-ratelimit-remaining-month': '1000',
    });
    expect(r.headers.get('x-ratelimit-limit-arb-month')).toBe('unlimited');
    expect(quota.used(record.id)?.count ?? 0).toBe(0);
    // The token is still there; the clock has not moved.
    expect((await get('/things', key)).status).toBe(200);
    expect((await get('/things', key)).status).toBe(429);
    clock += 1000;
    expect((await get('/things', key)).status).toBe(200);
  });

  it('a 400 carries all four; a 401 (no key) carries none', async () => {
    const { key } = keys.create('dev', 'bad-input');
    const r = await get('/things?limit=99', key);
    expect(r.status).toBe(400);
    for (const [h, v] of Object.entries(headers(r))) expect(v, h).toBeTruthy();
    expect(r.headers.get('x-ratelimit-remaining-month')).toBe('1000000');
    const anon = await fetch(`${base}/things`);
    expect(anon.status).toBe(401);
    expect(Object.values(headers(anon)).every((v) => v === null)).toBe(true);
  });

  it('each answer carries its own headers and request id when heads repeat, change and interleave', async () => {
    // The router writes a head that repeats the one before (but for the request id) from bytes it
    // keeps: an unlimited key's heads repeat, a limited key's count down; interleaved, each must
    // still get its own lines, and a head with other headers (a 429's Retry-After) its own too.
    const unlimited = keys.create('enterprise', 'heads-e').key;
    const limited = keys.create('pro', 'heads-p').key;
    const none = {
      'x-ratelimit-limit-second': 'unlimited',
      'x-ratelimit-remaining-second': 'unlimited',
      'x-ratelimit-limit-month': 'unlimited',
      'x-ratelimit-remaining-month': 'unlimited',
    };
    const pro = (second: number, month: number): Record<string, string> => ({
      'x-ratelimit-limit-second': '100',
      'x-ratelimit-remaining-second': String(second),
      'x-ratelimit-limit-month': '5000000',
      'x-ratelimit-remaining-month': String(month),
    });
    const ids = new Set<string>();
    const expectHead = (r: Response, status: number, lines: Record<string, string>): void => {
      expect(r.status).toBe(status);
      expect(headers(r)).toEqual(lines);
      expect(r.headers.get('content-type')).toBe('application/json');
      const id = r.headers.get('x-request-id')!;
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(ids.has(id)).toBe(false);
      ids.add(id);
    };
    for (let i = 0; i < 3; i++) expectHead(await get('/things', unlimited), 200, none);
    expectHead(await get('/things', limited), 200, pro(99, 4_999_999));
    expectHead(await get('/things', unlimited), 200, none);
    expectHead(await get('/things', limited), 200, pro(98, 4_999_998));
    expectHead(await get('/things', limited), 200, pro(97, 4_999_997));
    expectHead(await get('/things?limit=99', unlimited), 400, none);
    expectHead(await get('/things?limit=99', unlimited), 400, none);
    expectHead(await get('/things', unlimited), 200, none);
    const echoed = await fetch(`${base}/things`, { headers: { 'x-api-key': unlimited, 'x-request-id': '3F2C1D4E-5A6B-4C7D-8E9F-0A1B2C3D4E5F' } });
    expect([echoed.status, echoed.headers.get('x-request-id'), headers(echoed)]).toEqual([200, '3F2C1D4E-5A6B-4C7D-8E9F-0A1B2C3D4E5F', none]);
    const arb = await get('/arb', unlimited);
    expectHead(arb, 200, none);
    expect([arb.headers.get('x-ratelimit-limit-arb-month'), arb.headers.get('x-ratelimit-remaining-arb-month')]).toEqual(['unlimited', 'unlimited']);
    const free = keys.create('free', 'heads-f').key;
    expectHead(await get('/things', free), 200, { ...FREE, 'x-ratelimit-remaining-second': '0', 'x-ratelimit-remaining-month': '999' });
    const refused = await get('/things', free);
    expectHead(refused, 429, { ...FREE, 'x-ratelimit-remaining-second': '0', 'x-ratelimit-remaining-month': '999' });
    expect(refused.headers.get('retry-after')).toBe('1');
    expectHead(await get('/things', unlimited), 200, none);
  });
});

const FREE = { 'x-ratelimit-limit-second': '1', 'x-ratelimit-limit-month': '1000' };
