import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from '../../src/access/api.js';
import { KeyStore } from '../../src/access/keys.js';
import { exactlyOne, p } from '../../src/access/params.js';
import { loadPlans, type Plan, type PlanName } from '../../src/access/plans.js';
import { QuotaLedger } from '../../src/access/quota.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer, jsonReply } from '../../src/server/http.js';

const dir = mkdtempSync(join(tmpdir(), 'cb-access-'));
let persistence: Persistence;
let http: HttpServer;
let keys: KeyStore;
let quota: QuotaLedger;
let base: string;
const k: Record<string, string> = {};
const plans = loadPlans();
// A tight test plan so bursts are cheap to provoke; the shipped plans are tested for shape below.
const testPlans: Record<PlanName, Plan> = { ...plans, dev: { ...plans.dev, perSecond: 5, monthly: 1_000, groups: { ...plans.dev.groups, arb: 3 } } };

beforeAll(async () => {
  persistence = new Persistence(dir);
  keys = new KeyStore(persistence.db('keys'));
  quota = new QuotaLedger(persistence.db('quota'));
  http = new HttpServer(log);
  const api = new Api(http, '/api/v2', keys, quota, testPlans);
  api.route({ path: '/status', summary: 'status', auth: false, handler: () => jsonReply({ status: 'ok' }) });
  api.route({
    path: '/things',
    summary: 'things',
    query: z.object({
      limit: p.int({ min: 1, max: 2000, default: 50 }),
      status: p.enum(['active', 'closed', 'all'] as const, { default: 'active', retired: ['resolved', 'cancelled'] }),
      include_prices: p.bool({ default: true }),
      date: p.date(),
      from: p.isoTime(),
      platforms: p.list({ values: ['venue_a', 'venue_b'] as const }),
      min_roi: p.number({ min: 0, default: 0 }),
      q: p.string({ min: 3, max: 100 }),
    }),
    handler: (ctx) => jsonReply(ctx.query),
  });
  api.route({
    path: '/one-of',
    summary: 'exactly one',
    query: z.object({ q: p.string({ min: 3, max: 100 }), a_key: p.string(), b_key: p.string() }).superRefine(exactlyOne(['q', 'a_key', 'b_key'])),
    handler: (ctx) => jsonReply(ctx.query),
  });
  api.route({ path: '/arb', summary: 'arb', endpoint: 'arb', group: 'arb', handler: () => jsonReply({ data: [] }) });
  api.route({ path: '/item/:id', summary: 'item', pathParams: { id: 'the id' }, handler: (ctx) => jsonReply({ id: ctx.path_['id'] }) });
  api.serveOpenapi('http://x/api/v2');
  base = `http://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2`;
  for (const plan of ['free', 'dev', 'pro', 'enterprise'] as const) k[plan] = keys.create(plan, `acct-${plan}`).key;
});

afterAll(async () => {
  http.close();
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, key?: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${base}${path}`, { headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });

describe('authentication (spec 5)', () => {
  it('creates pmx_ keys of at least 128 random bits and stores only hashes', () => {
    expect(k['dev']).toMatch(/^pmx_[A-Za-z0-9_-]{32}$/);
    const stored = JSON.stringify([...persistence.db('keys').getRange()].map((e) => e.value));
    for (const key of Object.values(k)) expect(stored).not.toContain(key.slice(4));
  });

  it('401 for a missing, malformed, unknown or revoked key; /status needs none', async () => {
    expect((await get('/status')).status).toBe(200);
    for (const [key, code] of [
      [undefined, 'auth.missing_key'],
      ['nope', 'auth.invalid_key'],
      ['pmx_' + 'A'.repeat(32), 'auth.invalid_key'],
    ] as const) {
      const r = await get('/things', key);
      expect(r.status).toBe(401);
      expect(await r.json()).toMatchObject({ success: false, code });
    }
    const { key, record } = keys.create('dev', 'to-revoke');
    expect((await get('/things', key)).status).toBe(200);
    // revoke from "another process": a second KeyStore on the same LMDB
    new KeyStore(persistence.db('keys')).revoke(record.id);
    keys.reload();
    const r = await get('/things', key);
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ code: 'auth.revoked_key' });
  });

  it('accepts the api_key query parameter', async () => {
    const r = await fetch(`${base}/things?api_key=${k['pro']}&limit=5`);
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ limit: 5 });
  });
});

describe('plans and quotas (spec 5, 8)', () => {
  it('403 auth.endpoint_blocked for arb on Free', async () => {
    const r = await get('/arb', k['free']);
    expect(r.status).toBe(403);
    expect(await r.json()).toMatchObject({ success: false, code: 'auth.endpoint_blocked' });
  });

  it('sends the rate-limit headers, and the group headers on group routes', async () => {
    const r = await get('/arb', k['pro']);
    expect(r.status).toBe(200);
    for (const h of [
      'x-ratelimit-limit-second',
      'x-ratelimit-remaining-second',
      'x-ratelimit-limit-month',
      'x-ratelimit-remaining-month',
      'x-ratelimit-limit-arb-month',
      'x-ratelimit-remaining-arb-month',
    ])
      expect(r.headers.get(h), h).toBeTruthy();
    expect(r.headers.get('x-ratelimit-limit-second')).toBe('100');
    const plain = await get('/things', k['pro']);
    expect(plain.headers.get('x-ratelimit-limit-arb-month')).toBeNull();
    const ent = await get('/things', k['enterprise']);
    expect(ent.headers.get('x-ratelimit-limit-second')).toBe('unlimited');
  });

  it('a burst past the per-second limit gets 429 with Retry-After', async () => {
    const { key } = keys.create('dev', 'burst');
    const rs = await Promise.all(Array.from({ length: 12 }, () => get('/things', key)));
    const limited = rs.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(rs.filter((r) => r.status === 200).length).toBeLessThanOrEqual(6);
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await limited[0]!.json()).toMatchObject({ success: false, code: 'rate_limit.second' });
  });

  it('a group quota is counted separately and 429s when spent', async () => {
    const { key } = keys.create('dev', 'arb-group');
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await get('/arb', key)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const r = await get('/things', key);
    expect(r.status).toBe(200);
  });

  it('monthly counters survive a restart and cannot be reset by the client', async () => {
    const { key, record } = keys.create('dev', 'monthly');
    for (let i = 0; i < 3; i++) await get('/things', key);
    await quota.flush();
    const reopened = new QuotaLedger(persistence.db('quota'));
    expect(reopened.used(record.id)?.count).toBe(3);
    // headers a client could send do nothing to the counters
    await get('/things', key, { 'x-ratelimit-remaining-month': '1000000' });
    expect(quota.used(record.id)?.count).toBe(4);
  });

  it('ships Free/Dev/Pro/Enterprise with Free blocked from arb, ev, replay and as_of reads, Enterprise uncapped', () => {
    expect(plans.free.blocked).toEqual(['arb', 'ev', 'replay', 'as_of']);
    expect(plans.enterprise.perSecond).toBe(0);
    expect(plans.dev.perSecond).toBeGreaterThan(plans.free.perSecond);
  });
});

describe('validation (spec 7: 400s)', () => {
  const bad: [string, RegExp][] = [
    ['limit=0', /"limit": must be an integer from 1 to 2000, got 0/],
    ['limit=2001', /limit/],
    ['limit=ten', /limit/],
    ['limit=1.5', /limit/],
    ['status=resolved', /no longer accepted/],
    ['status=cancelled', /no longer accepted/],
    ['status=active,closed', /single value/],
    ['status=ACTIVE', /one of active, closed, all/],
    ['include_prices=maybe', /true\/false, 1\/0 or yes\/no/],
    ['date=2026-02-30', /YYYY-MM-DD/],
    ['date=22-11-2026', /YYYY-MM-DD/],
    ['from=yesterday', /ISO 8601/],
    ['from=2026-02-30T00:00:00Z', /not a valid time/],
    ['platforms=venue_a,,venue_b', /empty items/],
    ['platforms=venue_z', /unknown value "venue_z"/],
    ['min_roi=-1', /min_roi/],
    ['q=ab', /3 to 100 characters/],
    [`q=${'x'.repeat(101)}`, /3 to 100/],
    ['q=%E0%A4%A', /malformed percent-encoding/],
    ['limit=5&limit=6', /more than once/],
  ];
  for (const [qs, msg] of bad) {
    it(`400 for ${qs.slice(0, 40)}`, async () => {
      const r = await get(`/things?${qs}`, k['pro']);
      expect(r.status).toBe(400);
      const body = (await r.json()) as { error: string; success: boolean; code: string };
      expect(body.success).toBe(false);
      expect(body.error).toMatch(msg);
      expect(body.code).toMatch(/^validation\./);
      expect(r.headers.get('x-ratelimit-remaining-second')).toBeTruthy();
    });
  }

  it('accepts every spelling of a boolean and applies defaults', async () => {
    for (const [v, want] of [
      ['true', true],
      ['1', true],
      ['YES', true],
      ['false', false],
      ['0', false],
      ['no', false],
    ] as const) {
      const r = await get(`/things?include_prices=${v}`, k['pro']);
      expect(((await r.json()) as { include_prices: boolean }).include_prices).toBe(want);
    }
    expect(await (await get('/things', k['pro'])).json()).toMatchObject({ limit: 50, status: 'active', include_prices: true, min_roi: 0 });
  });

  it('enforces exactly-one-of', async () => {
    expect((await get('/one-of', k['pro'])).status).toBe(400);
    const two = await get('/one-of?q=abc&a_key=X', k['pro']);
    expect(two.status).toBe(400);
    expect(((await two.json()) as { error: string }).error).toMatch(/exactly one of q, a_key, b_key/);
    expect((await get('/one-of?a_key=X', k['pro'])).status).toBe(200);
  });

  it('decodes path parameters strictly', async () => {
    expect(await (await get('/item/a%20b', k['pro'])).json()).toEqual({ id: 'a b' });
    expect((await get('/item/%E0%A4', k['pro'])).status).toBe(400);
  });
});

it('answers each query string its own parse, however many are polled in turn (same lengths included)', async () => {
  // Six query strings of one length, more than the recently-seen list holds, polled round-robin
  // twice, with a 400 among them: each answer is the one of its own string.
  const limits = ['10', '11', '12', '13', '14', 'xx'];
  for (let round = 0; round < 2; round++)
    for (const l of limits) {
      const r = await get(`/things?limit=${l}`, k['pro']);
      if (l === 'xx') expect([r.status, ((await r.json()) as { error: string }).error]).toEqual([400, expect.stringMatching(/limit/)]);
      else expect(((await r.json()) as { limit: number }).limit).toBe(Number(l));
    }
});

describe('OpenAPI document', () => {
  it('is served without a key, version 2.x, and lists every declared route with its parameters', async () => {
    const r = await fetch(`${base}/openapi.json`);
    expect(r.status).toBe(200);
    const doc = (await r.json()) as {
      openapi: string;
      info: { version: string };
      paths: Record<string, { get: { parameters: { name: string; schema: Record<string, unknown> }[] } }>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toMatch(/^2\./);
    expect(Object.keys(doc.paths).sort()).toEqual(['/arb', '/item/{id}', '/one-of', '/status', '/things']);
    const limit = doc.paths['/things']!.get.parameters.find((x) => x.name === 'limit')!;
    expect(limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 2000, default: 50 });
  });
});
