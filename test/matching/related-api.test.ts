import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startService, type Service } from '../../src/service.js';

/**
 * GET /matching-markets/related on the running simulator (SYNTHETIC world, embedded default): the
 * crypto yearly-high ladders list "reach $140,000 by December 31" beside Kalshi's "above
 * $114,999.99 by Dec 31", a subset pair (the higher strike's YES implies the lower's). Bad input is
 * a 400, an unknown market a 404, and every answer agrees with the OpenAPI document's schema.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-related-'));
let svc: Service;
let key: string;

beforeAll(async () => {
  svc = await startService(
    loadConfig({
      env: {},
      overrides: { dataDir: dir, server: { host: '127.0.0.1', port: 0, baseUrl: null }, sim: { ticksPerSecond: 50, seed: 7 }, ingest: { pollMs: 300 } },
    }),
  );
  key = svc.demoKey!;
});

afterAll(async () => {
  await svc?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(query: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${svc.url}/api/v2/matching-markets/related${query}`, { headers: { 'x-api-key': key } });
  return { status: r.status, body: await r.json() };
}

interface Row {
  platform: string;
  market_id: string;
  title: string;
  relation: string;
  confidence: number;
  reasons: string[];
  group_id: number | null;
}

describe('GET /matching-markets/related on the running simulator', () => {
  it('answers a yearly-high strike with the higher strikes of other venues as a superset of its YES, and those with it as a subset', async () => {
    let ticker: string | undefined;
    let rows: Row[] = [];
    await vi.waitFor(
      async () => {
        // The lowest strike of Kalshi's ladder: every higher strike elsewhere implies it.
        const strike = (id: string): number => Number(id.slice(id.lastIndexOf('-') + 1));
        ticker = [...svc.state.catalog.venue('venue_a').keys()].filter((id) => id.startsWith('KXBTCMAXY-')).sort((x, y) => strike(x) - strike(y))[0];
        expect(ticker).toBeDefined();
        const r = await get(`?platform=venue_a&market_id=${encodeURIComponent(ticker!)}`);
        expect(r.status).toBe(200);
        rows = r.body.related as Row[];
        expect(rows.some((x) => x.relation === 'superset' && x.platform !== 'venue_a')).toBe(true);
      },
      { timeout: 30_000, interval: 250 },
    );
    const wider = rows.find((x) => x.relation === 'superset' && x.platform !== 'venue_a')!;
    expect(wider.title).toMatch(/Bitcoin reach \$[\d,]+ by/);
    expect(wider.reasons.join(' ')).toMatch(/threshold > \d+(\.\d+)? against >= \d+/);
    expect(wider.confidence).toBeGreaterThan(0);

    // The same pair asked from the other side: the higher strike is a subset of the Kalshi listing.
    const back = await get(`?platform=${wider.platform}&market_id=${encodeURIComponent(wider.market_id)}`);
    expect(back.status).toBe(200);
    expect(back.body.market.platform).toBe(wider.platform);
    const kalshi = (back.body.related as Row[]).find((x) => x.platform === 'venue_a' && x.market_id === ticker);
    expect(kalshi?.relation).toBe('subset');
    expect(back.body._meta.count).toBe(back.body.related.length);
  });

  it('refuses bad input with a 400 and an unknown market with a 404', async () => {
    for (const q of [
      '',
      '?market_id=KXBTCMAXY-26DEC31-114999.99',
      '?platform=venue_a',
      '?platform=nowhere&market_id=x',
      `?platform=venue_a&market_id=${'x'.repeat(301)}`,
    ]) {
      const r = await get(q);
      expect(r.status, q).toBe(400);
      expect(r.body.error?.code ?? r.body.code, q).toMatch(/validation/);
    }
    const r = await get('?platform=venue_a&market_id=KXNOSUCH-26-X');
    expect(r.status).toBe(404);
    expect(JSON.stringify(r.body)).toMatch(/not_found/);
  });

  it('is in the OpenAPI document with its parameters and its 400 and 404', async () => {
    const doc = (await (await fetch(`${svc.url}/api/v2/openapi.json`)).json()) as {
      paths: Record<string, { get: { parameters: { name: string; required?: boolean }[]; responses: Record<string, unknown> } }>;
    };
    const op = doc.paths['/matching-markets/related']!.get;
    expect(op.parameters.filter((x) => x.required).map((x) => x.name)).toEqual(expect.arrayContaining(['platform', 'market_id']));
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '404']));
  });
});
