import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { startService, type Service } from '../../src/service.js';

/** A whole service on the embedded simulator (loopback venues), its demo key and a way to stop it. */
export interface Running {
  readonly svc: Service;
  readonly url: string;
  readonly base: string;
  /** An enterprise key (no rate limits). */
  readonly key: string;
  /** A free-plan key (1 request a second, arb and ev blocked). */
  readonly freeKey: string;
  readonly dir: string;
  close(): Promise<void>;
}

/** The config of a simulated service on `dir` (fast ticks, a fixed seed). */
export function simConfig(dir: string): Config {
  return loadConfig({
    env: {},
    overrides: { dataDir: dir, server: { host: '127.0.0.1', port: 0, baseUrl: null }, sim: { ticksPerSecond: 400, seed: 7 }, ingest: { pollMs: 300 } },
  });
}

/** Starts a simulated service and waits until every venue is live and arbitrage is computed. */
export async function startRunning(opts: { arb?: boolean } = {}): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'cb-contract-'));
  const svc = await startService(simConfig(dir));
  const base = `${svc.url}/api/v2`;
  const key = svc.keys.create('enterprise', 'contract tests').key;
  const freeKey = svc.keys.create('free', 'contract tests').key;
  await vi.waitFor(
    async () => {
      const s = (await (await fetch(`${base}/status`)).json()) as { platforms: Record<string, { feed_healthy: boolean; live_markets: number }> };
      if (!Object.values(s.platforms).every((p) => p.feed_healthy && p.live_markets > 0)) throw new Error('venues not live yet');
    },
    { timeout: 20_000, interval: 200 },
  );
  if (opts.arb !== false)
    await vi.waitFor(
      async () => {
        const r = (await (await fetch(`${base}/arb?limit=1`, { headers: { 'x-api-key': key } })).json()) as { opportunities: unknown[] };
        if (r.opportunities.length === 0) throw new Error('no arbitrage yet');
      },
      { timeout: 20_000, interval: 250 },
    );
  return {
    svc,
    url: svc.url,
    base,
    key,
    freeKey,
    dir,
    async close() {
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
