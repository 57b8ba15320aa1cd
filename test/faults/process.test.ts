import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Persistence } from '../../src/persist/store.js';
import { EngineState } from '../../src/state/engine.js';
import type { StoredTrade } from '../../src/state/trades.js';

const dir = mkdtempSync(join(tmpdir(), 'cb-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Report {
  ready?: boolean;
  url?: string;
  key?: string;
  durableSeq?: number;
  markets?: number;
}

function start(): { child: ChildProcess; reports: Report[]; next: (pred: (r: Report) => boolean, ms?: number) => Promise<Report> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'child.ts'), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const reports: Report[] = [];
  const waiters: { pred: (r: Report) => boolean; resolve: (r: Report) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => {
    let r: Report;
    try {
      r = JSON.parse(l) as Report;
    } catch {
      return;
    }
    reports.push(r);
    for (const w of [...waiters])
      if (w.pred(r)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(r);
      }
  });
  const next = (pred: (r: Report) => boolean, ms = 20_000): Promise<Report> =>
    new Promise((resolve, reject) => {
      const hit = reports.find(pred);
      if (hit) return resolve(hit);
      const t = setTimeout(() => reject(new Error('child did not report in time')), ms);
      waiters.push({ pred, resolve: (r) => (clearTimeout(t), resolve(r)) });
    });
  return { child, reports, next };
}

describe('kill -9 during heavy ingest', () => {
  it('keeps every trade reported durable, the monthly counts, and a readable LMDB', async () => {
    const a = start();
    const ready = await a.next((r) => r.ready === true);
    // a few keyed requests so there is a monthly count to keep
    for (let i = 0; i < 5; i++) await fetch(`${ready.url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': ready.key! } });
    await a.next((r) => (r.durableSeq ?? 0) > 50);
    const before = a.reports.filter((r) => r.durableSeq !== undefined).at(-1)!;
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
    expect(quota.some((q) => q.count >= 5)).toBe(true);
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
