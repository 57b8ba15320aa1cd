import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProfile } from '../../src/capacity/profiles.js';
import { runScale, type ScaleReport } from '../../src/capacity/scale.js';
import { perMarketCosts, renderScaleHtml, writeScaleReport } from '../../src/capacity/scale-report.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('crossbook bench --profile scale', () => {
  it('ships the scale profile', () => {
    const p = loadProfile('scale');
    expect(p.steps.length).toBe(1);
    expect(p.restPaths.length).toBeGreaterThan(1);
  });

  it('runs the whole service at a size, restarts it from its DATA_DIR, prices components and charts the curve', async () => {
    const base = loadProfile('scale');
    const profile = { ...base, ticksPerSecond: 300, stepSeconds: 2, steps: [{ clients: 5, rest: 2 }] };
    const lines: string[] = [];
    const r: ScaleReport = await runScale(
      { sizes: [1_000], profile, componentsAt: 1_000, liveTimeoutSec: 180, maxMinutes: 5, log: (l) => lines.push(l) },
      'test',
    );
    expect(r.points.length).toBe(1);
    const p = r.points[0]!;
    expect(p.listed).toBeGreaterThanOrEqual(1_000);
    expect(p.statusOkSec).not.toBeNull();
    expect(p.allLiveSec).not.toBeNull();
    expect(p.restartStatusOkSec).not.toBeNull();
    expect(p.idle.rssMiB).toBeGreaterThan(20);
    expect(p.ingestCpuPer1k).toBeGreaterThan(0);
    expect(p.reads.map((x) => x.path)).toEqual(profile.restPaths);
    for (const x of p.reads) {
      expect(x.rps, x.path).toBeGreaterThan(0);
      expect(x.errors, x.path).toBe(0);
    }
    expect(p.fanout!.delivered).toBeGreaterThan(0);
    const costs = perMarketCosts(r)!;
    const of = (c: string): number => costs.rows.find((x) => x.component === c)!.bytesPerMarket;
    for (const c of ['state', 'mappers', 'matching']) expect(of(c), c).toBeGreaterThan(100);
    // The simulator runs in a process of its own (sim.process child): none of it is the service's.
    expect(of('simulator')).toBe(0);
    const out = mkdtempSync(join(tmpdir(), 'cb-scale-'));
    dirs.push(out);
    const files = writeScaleReport(out, r);
    const html = readFileSync(files.html, 'utf8');
    expect(html).toContain('new uPlot(');
    expect(html).toMatch(/uPlot=|var uPlot/);
    expect(html).toContain('markets listed');
    expect(html).not.toMatch(/(src|href)="https?:/);
    expect(renderScaleHtml(r)).toContain('Per-market cost by component');
  }, 300_000);
});
