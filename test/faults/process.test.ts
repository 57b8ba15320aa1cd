import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Persistence } from '../../src/persist/store.js';
import { EngineState } from '../../src/state/engine.js';
import type { StoredTrade } from '../../src/state/trades.js';
import { startChild } from './spawn.js';

const start = (): ReturnType<typeof startChild> => startChild(dir);

const dir = mkdtempSync(join(tmpdir(), 'cb-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kill -9 during heavy ingest', () => {
  it('keeps every trade reported durable, the monthly counts, and a readable LMDB', async () => {
    const a = start();
    const ready = await a.next((r) => r.ready === true);
    // a few keyed requests so there is a monthly count to keep
    for (let i = 0; i < 5; i++) await fetch(`${ready.url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': ready.key! } });
    // A report whose quota flush wrote those five (the child reads the count as its flush begins).
    // That report itself: what it names is on disk.
    const before = await a.next((r) => (r.quota ?? 0) >= 5 && (r.durableSeq ?? 0) > 50);
    a.child.kill('SIGKILL');
    await new Promise((r) => a.child.once('exit', r));

    // The data directory opens cleanly and holds every trade that was reported durable.
    const config = loadConfig({ env: {} });
    const p = new Persistence(dir);
    const state = new EngineState(config.venues);
    const counts = p.load(state);
    expect(counts.markets).toBeGreaterThanOrEqual(before.markets! * 0.9);
    const seqs = new Set<number>();
    for (const { value } of p.db('trades').getRange()) seqs.add((value as StoredTrade).seq);
    const missing: number[] = [];
    for (let s = 1; s <= before.durableSeq!; s++) if (!seqs.has(s)) missing.push(s);
    expect(missing).toEqual([]);
    const quota = [...p.db('quota').getRange()].map((e) => e.value as { count: number });
    expect(Math.max(...quota.map((q) => q.count))).toBeGreaterThanOrEqual(before.quota!);
    expect(before.quota).toBeGreaterThanOrEqual(5);
    await p.close();

    // And the service starts again on it, serving the same markets at once.
    const b = start();
    const again = await b.next((r) => r.ready === true);
    const st = (await (await fetch(`${again.url}/api/v2/status`)).json()) as { platforms: Record<string, { active_markets: number }> };
    const total = Object.values(st.platforms).reduce((n, x) => n + x.active_markets, 0);
    expect(total).toBeGreaterThanOrEqual(counts.markets);
    b.child.kill('SIGKILL');
    await new Promise((r) => b.child.once('exit', r));
  }, 60_000);
});
