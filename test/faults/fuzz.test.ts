import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startService, type Service } from '../../src/service.js';

/**
 * Issue 14, fuzz: property-based requests generated from the service's own OpenAPI document
 * (every GET path, its parameters with valid and invalid values, extra parameters, odd encodings)
 * and WebSocket messages shaped after src/ws/protocol.ts. Bounded in count. No 5xx, every 4xx
 * carries the Error body the document defines, and the service still answers /status.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-fuzz-'));
let svc: Service;
let key: string;
let doc: OpenApi;

interface Param {
  name: string;
  in: 'query' | 'path' | 'header';
  schema?: { type?: string; enum?: unknown[]; minimum?: number; maximum?: number };
}
interface OpenApi {
  paths: Record<string, Record<string, { parameters?: Param[] }>>;
}

beforeAll(async () => {
  svc = await startService(
    loadConfig({
      env: {},
      overrides: { dataDir: dir, logLevel: 'silent', server: { host: '127.0.0.1', port: 0, baseUrl: null }, sim: { ticksPerSecond: 100, seed: 3 } },
    }),
  );
  key = svc.keys.create('enterprise', 'fuzz').key;
  doc = (await (await fetch(`${svc.url}/api/v2/openapi.json`)).json()) as OpenApi;
}, 60_000);
afterAll(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

const odd = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('', ' ', '%', '%FF', '%00', '..', '../..', '*', '-1', '1e309', 'NaN', '[]', '{}', 'null', 'a'.repeat(5000), '\u0000', '😀', '%2F'),
  fc.integer().map(String),
  fc.double().map(String),
);
const valueFor = (p: Param): fc.Arbitrary<string> => {
  const s = p.schema ?? {};
  const valid: fc.Arbitrary<string>[] = [];
  if (s.enum?.length) valid.push(fc.constantFrom(...s.enum.map(String)));
  if (s.type === 'integer' || s.type === 'number') valid.push(fc.integer({ min: s.minimum ?? -10, max: s.maximum ?? 100_000 }).map(String));
  if (s.type === 'boolean') valid.push(fc.constantFrom('true', 'false'));
  return valid.length ? fc.oneof(...valid, odd) : odd;
};

/** Percent-encodes, or leaves raw what URL syntax tolerates, or double-encodes. */
const encodings = fc.constantFrom(
  (v: string) => encodeURIComponent(v),
  (v: string) => encodeURIComponent(encodeURIComponent(v)),
  (v: string) => v.replace(/[#?&/\s%]/g, (c) => encodeURIComponent(c)),
);

const request = (): fc.Arbitrary<{ path: string; query: string; withKey: boolean }> =>
  fc
    .constantFrom(...Object.entries(doc.paths).filter(([, ops]) => ops['get'] && !ops['get'].parameters?.some((p) => p.in === 'header')))
    .chain(([tpl, ops]) => {
      const params = ops['get']!.parameters ?? [];
      const pathParams = params.filter((p) => p.in === 'path');
      const query = params.filter((p) => p.in === 'query');
      return fc.record({
        path: fc.tuple(...pathParams.map(valueFor), encodings).map((xs) => {
          const enc = xs.at(-1) as (v: string) => string;
          let path = tpl;
          pathParams.forEach((p, i) => (path = path.replace(`{${p.name}}`, enc(xs[i] as string) || 'x')));
          return path;
        }),
        query: fc
          .tuple(
            fc.tuple(...query.map((p) => fc.option(valueFor(p), { nil: undefined }))),
            fc.array(fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), odd), { maxLength: 3 }),
            encodings,
          )
          .map(([vals, extra, enc]) =>
            [...query.map((p, i) => [p.name, vals[i]] as const).filter((x): x is readonly [string, string] => x[1] !== undefined), ...extra]
              .map(([k, v]) => `${enc(k)}=${enc(v)}`)
              .join('&'),
          ),
        withKey: fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
      });
    });

describe('fuzzing the REST API from its OpenAPI document', () => {
  it('never answers 5xx, and every 4xx has the Error body', async () => {
    expect(Object.keys(doc.paths).length).toBeGreaterThan(10);
    await fc.assert(
      fc.asyncProperty(request(), async ({ path, query, withKey }) => {
        const url = `${svc.url}${path}${query ? `?${query}` : ''}`;
        const r = await fetch(url, { headers: withKey ? { 'x-api-key': key } : {} });
        const text = await r.text();
        expect(r.status, `${r.status} for ${url}: ${text.slice(0, 200)}`).toBeLessThan(500);
        if (r.status >= 400) {
          const body = JSON.parse(text) as { error: unknown; success: unknown };
          expect(typeof body.error, url).toBe('string');
          expect(body.success, url).toBe(false);
        }
      }),
      { numRuns: 300, seed: 14 },
    );
    expect((await fetch(`${svc.url}/api/v2/status`)).status).toBe(200);
  }, 120_000);
});

const clientMessage = fc.oneof(
  fc
    .record(
      {
        type: fc.constantFrom('subscribe', 'unsubscribe', 'ping', 'pong', 'SUBSCRIBE', ''),
        channel: fc.oneof(fc.constantFrom('prices', 'orderbook', 'live_games', 'arb', 'ev', 'venue_a_prices', 'status'), fc.string()),
        market_ids: fc.oneof(fc.array(fc.oneof(fc.string(), fc.constantFrom('*', 'venue_a:', ':x')), { maxLength: 20 }), fc.anything()),
        event_ids: fc.array(fc.string(), { maxLength: 5 }),
        all: fc.oneof(fc.boolean(), fc.anything()),
      },
      { requiredKeys: [] },
    )
    .map((m) => JSON.stringify(m)),
  fc.json(),
  fc.string(),
  fc.constant('{"type":"ping"}'),
);

describe('fuzzing the WebSocket protocol', () => {
  it('answers every message with JSON, keeps the server up, and /status still answers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(clientMessage, { minLength: 1, maxLength: 30 }), async (msgs) => {
        const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/api/v2/ws`, { headers: { 'x-api-key': key } });
        const got: unknown[] = [];
        ws.on('message', (d) => got.push(JSON.parse(d.toString())));
        await new Promise((r, j) => {
          ws.once('open', r);
          ws.once('error', j);
        });
        for (const m of msgs) ws.send(m);
        ws.send('{"type":"ping"}');
        // Every message is answered (at least an error), so a pong once as many answers arrived
        // as messages were sent means the final ping was reached; a connection that closes fails.
        await new Promise<void>((resolve, reject) => {
          let quiet = setTimeout(resolve, 3000);
          ws.on('message', (d) => {
            clearTimeout(quiet);
            quiet = setTimeout(resolve, 3000);
            if ((JSON.parse(d.toString()) as { type?: string }).type === 'pong' && got.length > msgs.length) {
              clearTimeout(quiet);
              resolve();
            }
          });
          ws.once('close', (code, reason) => {
            clearTimeout(quiet);
            reject(new Error(`closed ${code} ${reason.toString()}`));
          });
        });
        expect(got.every((m) => typeof m === 'object' && m !== null && typeof (m as { type?: unknown }).type === 'string')).toBe(true);
        ws.close();
      }),
      { numRuns: 60, seed: 14 },
    );
    expect((await fetch(`${svc.url}/api/v2/status`)).status).toBe(200);
  }, 120_000);
});
