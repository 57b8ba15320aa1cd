import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { persistChanges } from '../../pipelines/persistence.js';
import { arbFlow, matchingFlow } from '../../pipelines/signals.js';
import { buildCore, buildDomain, buildHttp, type Core, type Domain, type HttpLayer } from '../../src/compose.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { PAYOUT } from '../../src/core/price.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { OverrideStore } from '../../src/matching/overrides.js';
import { applyEvent } from '../../src/state/engine.js';

/**
 * The settlement audit through the service as it is composed (buildCore/buildDomain/buildHttp on a
 * real DATA_DIR) and the flows of pipelines/signals.ts. Groups are fixed by operator links so the
 * test does not depend on what the matcher makes of the titles:
 * - FED: venue_a and venue_b, both settle yes (agreement);
 * - GAME: venue_a and venue_c settle on different sides while grouped as the same side
 *   (contradiction), venue_h and venue_b are still trading with an arbitrage between them;
 * - CPI: venue_a settles, venue_b has not yet (pending).
 */
const T = Date.now();
const e = { timestamp: T, localTimestamp: T };
const market = (venue: string, marketId: string, title: string, category: string): NormalizedEvent => ({
  ...e,
  type: 'market',
  venue,
  marketId,
  title,
  category,
  status: 'active',
});
const settle = (venue: string, marketId: string, result: 'yes' | 'no'): NormalizedEvent => ({
  ...e,
  type: 'market_status',
  venue,
  marketId,
  status: 'finalized',
  result,
  settlementValue: result === 'yes' ? PAYOUT : 0,
});

let dir: string;
let config: Config;
let core: Core;
let domain: Domain;
let layer: HttpLayer;
let flows: Subscription;
let base: string;
let key: string;

async function start(): Promise<void> {
  core = buildCore(config);
  domain = buildDomain(core);
  layer = buildHttp(core, domain);
  flows = new Subscription();
  flows.add(persistChanges(core.state, core.persistence));
  flows.add(matchingFlow(core.state, domain.matching, domain.signals));
  flows.add(arbFlow(core.state, domain.signals));
  base = `http://127.0.0.1:${await layer.http.listen('127.0.0.1', 0)}/api/v2`;
  key = core.keys.create('enterprise', 'tests').key;
}

async function stop(): Promise<void> {
  flows.unsubscribe();
  await core.persistence.snapshot(core.state, true);
  layer.http.close();
  domain.matching.close();
  await core.persistence.close();
}

async function get(path: string): Promise<{ status: number; body: any; text: string }> {
  const r = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
  const text = await r.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: r.status, body, text };
}

const groupOf = (venue: string, id: string) => domain.matching.servedGroup(domain.matching.groupIdOf(venue, id)!)!;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cb-quality-'));
  config = loadConfig({ env: {}, overrides: { dataDir: dir } });
  await start();
  const s = core.state;
  for (const ev of [
    market('venue_a', 'FED-A', 'Will the Federal Reserve cut rates by 25bps at their April 2026 meeting?', 'Economics'),
    market('venue_b', 'FED-B', 'Will the Fed decrease interest rates by 25 bps after the April 2026 meeting?', 'Economics'),
    market('venue_a', 'GAME-A', 'Seattle at Denver Winner?', 'Sports'),
    market('venue_c', 'GAME-C', 'Broncos to beat the Seahawks', 'Sports'),
    market('venue_h', 'GAME-H', 'Seahawks vs Broncos: Seahawks', 'Sports'),
    market('venue_b', 'GAME-B', 'Seahawks vs. Broncos', 'Sports'),
    market('venue_a', 'CPI-A', 'Will CPI rise more than 0.3% in March 2026?', 'Economics'),
    market('venue_b', 'CPI-B', 'March 2026 CPI above 0.3%?', 'Economics'),
    // YES at 49.50 on venue_h and its NO at 50 on venue_b: an arbitrage while the group is trusted.
    { ...e, type: 'book_snapshot', venue: 'venue_h', marketId: 'GAME-H', instrument: 'GAME-H', bids: [], asks: [[4950, 100]] },
    { ...e, type: 'book_snapshot', venue: 'venue_b', marketId: 'GAME-B', instrument: 'GAME-B', bids: [[5000, 100]], asks: [] },
  ] satisfies NormalizedEvent[])
    applyEvent(s, ev);
  const overrides = new OverrideStore(core.persistence.db('matching'));
  overrides.link('venue_a:FED-A', 'venue_b:FED-B', false);
  // A linked listing must not contradict any member: every pair of the game group is linked.
  const game = ['venue_a:GAME-A', 'venue_h:GAME-H', 'venue_b:GAME-B', 'venue_c:GAME-C'];
  for (let i = 0; i < game.length; i++) for (let j = i + 1; j < game.length; j++) overrides.link(game[i]!, game[j]!, false);
  overrides.link('venue_a:CPI-A', 'venue_b:CPI-B', false);
  await vi.waitFor(
    () => {
      expect(groupOf('venue_a', 'GAME-A').members).toHaveLength(4);
      expect(groupOf('venue_a', 'FED-A').members).toHaveLength(2);
      expect(groupOf('venue_a', 'CPI-A').members).toHaveLength(2);
    },
    { timeout: 10_000, interval: 20 },
  );
});

afterAll(async () => {
  await stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('settlement audit through the service', () => {
  it('before any settlement: the game group trades (an arbitrage) and nothing is counted', async () => {
    const game = groupOf('venue_a', 'GAME-A');
    await vi.waitFor(() => expect(domain.signals.get(game.group_id)?.arbs).toHaveLength(1), { timeout: 30_000, interval: 20 });
    const r = await get('/matching-markets/quality');
    expect(r.status).toBe(200);
    expect(r.body.summary).toEqual({ agreements: 0, contradictions: 0, voided: 0, pending: 0, precision: null, pending_groups: 0, suspect_groups: 0 });
    expect(r.body.suspect_groups).toEqual([]);
  });

  it('counts the agreement, the contradiction and the pending pairs; the contradicted group is suspect and its arbitrage stops', async () => {
    const s = core.state;
    for (const ev of [
      settle('venue_a', 'FED-A', 'yes'),
      settle('venue_b', 'FED-B', 'yes'),
      settle('venue_a', 'GAME-A', 'yes'),
      settle('venue_c', 'GAME-C', 'no'),
      settle('venue_a', 'CPI-A', 'no'),
    ])
      applyEvent(s, ev);
    const game = groupOf('venue_a', 'GAME-A').group_id;
    await vi.waitFor(() => expect(domain.matching.servedGroup(game)!.suspect).toBeDefined(), { timeout: 30_000, interval: 20 });
    expect(domain.signals.get(game)).toBeUndefined();
    expect(groupOf('venue_a', 'FED-A').suspect).toBeUndefined();

    const r = await get('/matching-markets/quality');
    expect(r.status).toBe(200);
    // GAME: A and C judged; each of them pending against H and B. CPI: one pending pair.
    expect(r.body.summary).toEqual({ agreements: 1, contradictions: 1, voided: 0, pending: 5, precision: 0.5, pending_groups: 2, suspect_groups: 1 });
    expect(r.body.pairs).toContainEqual({
      category: 'Economics',
      platforms: ['venue_a', 'venue_b'],
      agreements: 1,
      contradictions: 0,
      voided: 0,
      pending: 1,
      precision: 1,
    });
    expect(r.body.pairs).toContainEqual({
      category: 'Sports',
      platforms: ['venue_a', 'venue_c'],
      agreements: 0,
      contradictions: 1,
      voided: 0,
      pending: 0,
      precision: 0,
    });
    expect(r.body.suspect_groups).toEqual([
      {
        group_id: game,
        title: expect.any(String),
        category: 'Sports',
        platforms: ['venue_a', 'venue_b', 'venue_c', 'venue_h'],
        reason: 'settlements contradict the match: venue_a:GAME-A settled yes and venue_c:GAME-C settled no, but the group holds them as the same side',
      },
    ]);

    const rec = await get('/matching-markets?venue_a_key=GAME-A');
    expect(rec.body.groups[0]).toMatchObject({ group_id: game, suspect: true, suspect_reason: expect.stringMatching(/^settlements contradict/) });
    const fed = await get('/matching-markets?venue_a_key=FED-A');
    expect(fed.body.groups[0]).not.toHaveProperty('suspect');
  });

  it('filters by category and by one venue or a venue pair', async () => {
    const sports = await get('/matching-markets/quality?category=sports');
    expect(sports.body.summary).toMatchObject({ agreements: 0, contradictions: 1, suspect_groups: 1 });
    const pair = await get('/matching-markets/quality?platforms=venue_c,venue_a');
    expect(pair.body.pairs.map((p: { platforms: string[] }) => p.platforms)).toEqual([['venue_a', 'venue_c']]);
    const one = await get('/matching-markets/quality?platforms=venue_b');
    expect(one.body.summary).toMatchObject({ agreements: 1, contradictions: 0, pending: 3 });
    expect((await get('/matching-markets/quality?category=Weather')).body).toMatchObject({ pairs: [], suspect_groups: [], summary: { precision: null } });
  });

  it('400 for bad query input', async () => {
    for (const qs of [
      'platforms=venue_zz',
      'platforms=venue_a,venue_b,venue_c',
      'platforms=venue_a,',
      'category=',
      `category=${'x'.repeat(101)}`,
      'category=a&category=b',
    ]) {
      const r = await get(`/matching-markets/quality?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.error, qs).toBeTruthy();
    }
  });

  it('is documented with its parameters, response schema and quota group', () => {
    const doc = layer.api.openapi('http://x/api/v2') as { paths: Record<string, { get: any }> };
    const op = doc.paths['/matching-markets/quality']!.get;
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(['category', 'platforms']);
    expect(op['x-quota-group']).toBe('matched_markets');
    expect(op.responses[400]).toBeDefined();
    expect(Object.keys(op.responses[200].content['application/json'].schema.properties)).toEqual(['summary', 'pairs', 'suspect_groups', '_meta']);
  });

  it('exports the counts in /metrics', async () => {
    const r = await get('/metrics');
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/^crossbook_matching_settlement_pairs\{category="Economics",venues="venue_a,venue_b",verdict="agree"\} 1$/m);
    expect(r.text).toMatch(/^crossbook_matching_settlement_pairs\{category="Sports",venues="venue_a,venue_c",verdict="contradict"\} 1$/m);
    expect(r.text).toMatch(/^crossbook_matching_suspect_groups 1$/m);
    expect(r.text).toMatch(/^crossbook_matching_settlement_pending_groups 2$/m);
    expect(r.text).toMatch(/^crossbook_matching_settlement_precision 0.5$/m);
  });

  it('keeps the counts and the suspect mark across a restart, and counts nothing twice', async () => {
    const before = (await get('/matching-markets/quality')).body;
    await stop();
    await start();
    const game = groupOf('venue_a', 'GAME-A');
    expect(game.suspect).toBeDefined();
    domain.signals.recompute(game.group_id);
    expect(domain.signals.get(game.group_id)).toBeUndefined();
    const after = (await get('/matching-markets/quality')).body;
    expect(after.summary).toEqual(before.summary);
    expect(after.pairs).toEqual(before.pairs);
    // The last partner settles after the restart: judged once, added to what was kept.
    applyEvent(core.state, settle('venue_b', 'CPI-B', 'no'));
    await vi.waitFor(
      async () => expect((await get('/matching-markets/quality')).body.summary).toMatchObject({ agreements: 2, pending: 4, pending_groups: 1 }),
      {
        timeout: 30_000,
        interval: 20,
      },
    );
  });
});
