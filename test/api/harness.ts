import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { persistChanges } from '../../pipelines/persistence.js';
import type { Api } from '../../src/access/api.js';
import type { ApiContext } from '../../src/api/context.js';
import { buildCore, buildHttp } from '../../src/compose.js';
import { loadConfig, type LoadOptions } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import type { Clock } from '../../src/core/clock.js';
import type { Trade } from '../../src/core/types.js';
import { log } from '../../src/core/log.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { Persistence } from '../../src/persist/store.js';
import { applyEvent, type EngineState } from '../../src/state/engine.js';
import { Contract } from '../contract/document.js';

/**
 * The real API (access layer + data routes) over an EngineState that the test fills with
 * normalized events, without venues: endpoint tests control exactly what the state holds.
 */
export interface ApiHarness {
  readonly api: Api;
  readonly ctx: ApiContext;
  readonly config: Config;
  readonly state: EngineState;
  readonly persistence: Persistence;
  readonly base: string;
  readonly key: string;
  apply(...evs: NormalizedEvent[]): void;
  get(path: string, key?: string | null): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/** `clock`: the engine's (a VirtualClock holds "now" still for tests of what a second caches); wall time by default. */
export async function apiHarness(opts: LoadOptions = {}, clock?: Clock): Promise<ApiHarness> {
  const config = loadConfig({ env: {}, ...opts });
  const dir = mkdtempSync(join(tmpdir(), 'cb-api-'));
  const core = buildCore(config, { persistence: new Persistence(dir), log, ...(clock ? { clock } : {}) });
  const { state, persistence, keys } = core;
  const { http, api, ctx } = buildHttp(core);
  const flow = persistChanges(state, persistence);
  const port = await http.listen('127.0.0.1', 0);
  const base = `http://127.0.0.1:${port}/api/v2`;
  const { key } = keys.create('enterprise', 'tests');
  let contract: Contract | undefined;
  let contractRoutes = 0;
  return {
    api,
    ctx,
    config,
    state,
    persistence,
    base,
    key,
    apply: (...evs) => {
      for (const e of evs) applyEvent(state, e);
    },
    async get(path, k) {
      const r = await fetch(`${base}${path}`, { headers: k === null ? {} : { 'x-api-key': k ?? key } });
      const text = await r.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* leave as text */
      }
      // Every answer must agree with the OpenAPI document (issue 15): status, content type, body.
      if (!contract || contractRoutes !== api.size) {
        contract = new Contract(api.openapi(base), '');
        contractRoutes = api.size;
      }
      const problems = contract.check({ path, status: r.status, contentType: r.headers.get('content-type'), body });
      if (problems.length) throw new Error(`response disagrees with the OpenAPI document:\n${problems.join('\n')}`);
      return { status: r.status, body, headers: r.headers };
    },
    async close() {
      flow.unsubscribe();
      http.close();
      await persistence.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A trade of venue_a's market KXA-1 or venue_b's 0xc (token YT, taker 0xAAA) at `t`, 50 cents a contract: what the /trades tests append. */
export const testTrade = (venue: 'venue_a' | 'venue_b', id: string, t: number, size = 1): Trade => ({
  type: 'trade',
  venue,
  marketId: venue === 'venue_a' ? 'KXA-1' : '0xc',
  ...(venue === 'venue_b' ? { instrument: 'YT', taker: '0xAAA' } : {}),
  tradeId: id,
  price: 5000,
  yesPrice: 5000,
  size,
  side: 'buy',
  takerSide: 'yes',
  timestamp: t,
  localTimestamp: t,
});

/** A harness on `clock` holding ten trades a venue an hour before `now`: venue_a's a0–a9 a minute apart, venue_b's b0–b9 30 s after each, of size 1–10. */
export async function tradesHarness(now: number, clock: Clock): Promise<ApiHarness> {
  const h = await apiHarness({}, clock);
  const MIN = 60_000;
  for (let i = 0; i < 10; i++)
    h.apply(testTrade('venue_a', `a${i}`, now - 60 * MIN + i * MIN), testTrade('venue_b', `b${i}`, now - 60 * MIN + i * MIN + 30_000, i + 1));
  await h.persistence.flushed();
  return h;
}
