import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCore, buildDomain, buildHttp, type Core, type Domain, type HttpLayer } from '../../src/compose.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import type { OpportunityRecord } from '../../src/signals/lifecycle/record.js';

const dir = mkdtempSync(join(tmpdir(), 'cb-hist-'));
let core: Core;
let domain: Domain;
let http: HttpLayer;
let base: string;
const keys: Record<string, string> = {};
const H = 3_600_000;
const NOW = Date.now();
const T = NOW - 10 * H;

const rec = (i: number, over: Partial<OpportunityRecord>): OpportunityRecord => ({
  opportunity_id: `arb_h${i}`,
  kind: 'arb',
  group_id: i,
  title: `group ${i}`,
  category: 'Sports',
  side: null,
  legs: [],
  platforms: ['venue_a', 'venue_b'],
  first_seen: T,
  last_seen: T + 1000,
  closed_at: T + 1000,
  duration_ms: 1000,
  close_reason: 'book_moved',
  open_roi: 1,
  peak_roi: 1,
  last_roi: 1,
  peak_size: 10,
  roi_weighted_size: 10,
  updates: 0,
  ...over,
});

const records: OpportunityRecord[] = [
  // venue_a/venue_b Sports: durations 1, 2, 3, 4, 10 s; peak ROI 1..5; opened at hour h of T's day
  ...[1, 2, 3, 4, 10].map((s, i) =>
    rec(i + 1, { first_seen: T + i * H, closed_at: T + i * H + s * 1000, duration_ms: s * 1000, peak_roi: i + 1, roi_weighted_size: 10 * (i + 1) }),
  ),
  rec(6, { platforms: ['venue_a', 'venue_h'], category: 'Politics', first_seen: T + 6 * H, closed_at: T + 6 * H + 60_000, duration_ms: 60_000, peak_roi: 8 }),
  { ...rec(7, { closed_at: T + 7 * H }), kind: 'ev', opportunity_id: 'ev_h7', side: 'yes', platforms: ['venue_e'] },
];

beforeAll(async () => {
  const config = loadConfig({ env: {} });
  core = buildCore(config, { persistence: new Persistence(dir), log });
  domain = buildDomain(core);
  http = buildHttp(core, domain);
  const port = await http.http.listen('127.0.0.1', 0);
  base = `http://127.0.0.1:${port}/api/v2`;
  for (const p of ['free', 'dev'] as const) keys[p] = core.keys.create(p).key;
  for (const r of records) domain.history.append(r);
  await core.persistence.flushed();
});
afterAll(async () => {
  http.ws?.close();
  http.http.close();
  domain.matching.close();
  await core.persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(path: string, key = keys['dev']!): Promise<{ status: number; body: any; headers: Headers }> {
  const r = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
  return { status: r.status, body: await r.json(), headers: r.headers };
}

describe('GET /arb/history and /ev/history', () => {
  it('lists closed opportunities newest first with lifetimes and peaks, paging by next_cursor', async () => {
    const p1 = await get('/arb/history?limit=4');
    expect(p1.status).toBe(200);
    expect(p1.body.opportunities.map((o: { opportunity_id: string }) => o.opportunity_id)).toEqual(['arb_h6', 'arb_h5', 'arb_h4', 'arb_h3']);
    expect(p1.body.opportunities[1]).toMatchObject({
      duration_ms: 10_000,
      peak_roi: 5,
      close_reason: 'book_moved',
      first_seen: new Date(T + 4 * H).toISOString(),
      closed_at: new Date(T + 4 * H + 10_000).toISOString(),
    });
    expect(p1.headers.get('x-ratelimit-remaining-arb-month')).not.toBeNull();
    const p2 = await get(`/arb/history?limit=4&cursor=${p1.body.next_cursor}`);
    expect(p2.body.opportunities.map((o: { opportunity_id: string }) => o.opportunity_id)).toEqual(['arb_h2', 'arb_h1']);
    expect(p2.body.next_cursor).toBeNull();
    const ev = await get('/ev/history');
    expect(ev.body.opportunities.map((o: { opportunity_id: string }) => o.opportunity_id)).toEqual(['ev_h7']);
  });

  it('filters by time, venues, category, ROI and lifetime', async () => {
    const ids = async (q: string): Promise<string[]> => (await get(`/arb/history?${q}`)).body.opportunities.map((o: { group_id: number }) => o.group_id);
    expect(await ids(`from=${new Date(T + 2 * H).toISOString()}&to=${new Date(T + 4 * H).toISOString()}`)).toEqual([4, 3]);
    expect(await ids('platforms=venue_h')).toEqual([6]);
    expect(await ids('category=Sports&min_roi=3')).toEqual([5, 4, 3]);
    expect(await ids('min_duration=3.5')).toEqual([6, 5, 4]);
  });

  it('answers bad input with a 400 naming the parameter, and Free plans with a 403', async () => {
    for (const [q, name] of [
      ['min_roi=-1', 'min_roi'],
      ['min_duration=abc', 'min_duration'],
      ['limit=0', 'limit'],
      ['from=yesterday', 'from'],
      ['platforms=venue_z', 'platforms'],
      [`from=${new Date(T + H).toISOString()}&to=${new Date(T).toISOString()}`, 'from'],
      ['cursor=notacursor', 'cursor'],
      [`cursor=${Buffer.from('{"t":"x"}').toString('base64url')}`, 'cursor'],
    ] as const) {
      const r = await get(`/arb/history?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toContain(`"${name}"`);
    }
    expect((await get('/arb/history', keys['free'])).status).toBe(403);
    expect((await get('/ev/history', keys['free'])).status).toBe(403);
    expect((await get('/arb/stats', keys['free'])).status).toBe(403);
  });
});

describe('GET /arb/stats', () => {
  it('gives per venue pair and category: count, median and p90 lifetime, median peak ROI, size, openings per hour', async () => {
    const r = await get(`/arb/stats?from=${new Date(T - H).toISOString()}`);
    expect(r.status).toBe(200);
    expect(r.body._meta).toMatchObject({ count: 6, truncated: false });
    const [ab, ah] = r.body.pairs;
    expect(ab).toMatchObject({
      venues: ['venue_a', 'venue_b'],
      category: 'Sports',
      count: 5,
      median_duration_ms: 3000,
      p90_duration_ms: 4000 + 0.6 * 6000,
      median_peak_roi: 3,
      total_executable_size: 150,
    });
    const hours = new Array(24).fill(0);
    for (let i = 0; i < 5; i++) hours[new Date(T + i * H).getUTCHours()]++;
    expect(ab.by_hour).toEqual(hours);
    expect(ah).toMatchObject({ venues: ['venue_a', 'venue_h'], category: 'Politics', count: 1, median_duration_ms: 60_000 });
    expect((await get('/arb/stats?category=Politics')).body.pairs).toHaveLength(1);
    expect((await get('/arb/stats?to=2026-02-30T00:00:00Z')).status).toBe(400);
  });

  it('is in the OpenAPI document with response schemas', async () => {
    const doc = http.api.openapi('http://x/api/v2') as { paths: Record<string, { get: any }> };
    for (const path of ['/arb/history', '/ev/history', '/arb/stats']) {
      const op = doc.paths[path]!.get;
      expect(op.responses[400]).toBeDefined();
      expect(op.responses[403]).toBeDefined();
      expect(op['x-quota-group']).toBe(path.startsWith('/ev') ? 'ev' : 'arb');
      expect(op.responses[200].content['application/json'].schema.properties).toBeDefined();
    }
    expect(doc.paths['/arb/history']!.get.parameters.map((p: { name: string }) => p.name)).toEqual([
      'from',
      'to',
      'platforms',
      'category',
      'min_roi',
      'min_duration',
      'limit',
      'cursor',
    ]);
  });
});
