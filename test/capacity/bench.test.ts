import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadProfile, loadProfiles, profilesFile } from '../../src/capacity/profiles.js';
import { capacityLine, type BenchReport, type StepResult } from '../../src/capacity/report.js';
import { runBench } from '../../src/capacity/run.js';
import { slope } from '../../src/capacity/soak.js';
import { metric } from '../../src/capacity/target.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'cb-capacity-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('bench profiles', () => {
  it('ships trading, dashboard, rest and smoke, all valid', () => {
    expect(Object.keys(loadProfiles())).toEqual(expect.arrayContaining(['trading', 'dashboard', 'rest', 'smoke']));
    expect(loadProfile('trading').slo.p99Ms).toBeGreaterThan(0);
  });

  it('names the profile and key of a bad value, and an unknown profile', () => {
    const base = JSON.parse(readFileSync(profilesFile(), 'utf8')) as { profiles: Record<string, Record<string, unknown>> };
    const bad = (patch: (p: Record<string, unknown>) => void): string => {
      const copy = structuredClone(base);
      patch(copy.profiles['smoke']!);
      const f = join(tmp(), 'profiles.json');
      writeFileSync(f, JSON.stringify(copy));
      return f;
    };
    expect(() => loadProfiles(bad((p) => (p['ticksPerSecond'] = -5)))).toThrow(/profiles\.smoke\.ticksPerSecond/);
    expect(() => loadProfiles(bad((p) => (p['steps'] = [])))).toThrow(/profiles\.smoke\.steps/);
    expect(() => loadProfiles(bad((p) => (p['colour'] = 'red')))).toThrow(/profiles\.smoke/);
    expect(() => loadProfiles(bad((p) => (p['restPaths'] = ['markets'])))).toThrow(/profiles\.smoke\.restPaths\.0/);
    const f = join(tmp(), 'broken.json');
    writeFileSync(f, '{"profiles": ');
    expect(() => loadProfiles(f)).toThrow(/bench profiles .*broken\.json/);
    expect(() => loadProfile('nope')).toThrow(/unknown bench profile "nope" \(have: .*trading/);
  });
});

describe('capacity arithmetic', () => {
  const step = (n: number, clients: number, cpuPct: number, ok: boolean, rps?: number): StepResult => ({
    step: n,
    clients,
    subscriptions: 20,
    restConnections: rps ? 10 : 0,
    ticksPerSecond: 2000,
    seconds: 10,
    ws: { clients, delivered: 1000, perSec: 100 * clients, p50: 1, p99: ok ? 5 : 50, max: 60, lost: 0, failed: 0 },
    rest: rps ? { client: 'autocannon', rps, p50: 1, p99: 5, max: 9, requests: rps * 10, errors: 0, clientCpuPct: 50 } : undefined,
    wrk: undefined,
    service: {
      cpuPct,
      rssMiB: 200,
      rssAnonMiB: 150,
      heapTotalMiB: 100,
      externalMiB: 20,
      lagP99Ms: 2,
      lagMaxMs: 5,
      heapMiB: 80,
      publishedPerSec: 1000,
      walletPositions: 0,
    },
    harnessCpuPct: 40,
    ok,
    broken: ok ? [] : ['WebSocket p99 50 ms > 10'],
  });
  const profile = loadProfile('trading');

  it('leads with what was measured to hold, then the failing step, then a labelled extrapolation', () => {
    const c = capacityLine(profile, [step(1, 500, 40, true), step(2, 1000, 80, true), step(3, 2000, 150, false)]);
    expect(c.lastPassingStep).toBe(2);
    expect(c.perCore).toBe(1250); // 1000 clients at 80% of a core, below the failing step's 2000
    expect(c.line).toMatch(/^measured to hold: 1,000 clients \(20 subscriptions each\) at 2,000 ticks\/s within 10 ms p99 \(/);
    expect(c.line).toContain('the next step, 2,000 clients, failed (WebSocket p99 50 ms > 10)');
    expect(c.line).toMatch(/extrapolated to one whole core \(linear in CPU, not measured\): 1,250 clients$/);
    expect(c.line).not.toMatch(/floor/);
    expect(capacityLine(profile, [step(1, 500, 50, true)]).line).toMatch(/this is a floor; extrapolated .*: 1,000 clients$/);
    expect(capacityLine(profile, [step(1, 500, 40, false)])).toMatchObject({ lastPassingStep: null, perCore: null });
  });

  it('never extrapolates past the first failing step (issue 34: 1,000 clients at 41% held, 2,000 failed)', () => {
    const c = capacityLine(profile, [step(1, 500, 25, true), step(2, 1000, 41, true), step(3, 2000, 70, false), step(4, 4000, 90, true)]);
    // 1,000 / 0.41 = 2,439 would claim more than the 2,000 that failed; a later passing step is not believed.
    expect(c.lastPassingStep).toBe(2);
    expect(c.perCore).toBe(2000);
    expect(c.line).toMatch(/^measured to hold: 1,000 clients /);
    expect(c.line).toMatch(/: at most 2,000 clients, capped at the failing step$/);
    expect(c.line).not.toMatch(/2,439|4,000 clients \(/);
    const r = capacityLine(loadProfile('rest'), [step(1, 0, 50, true, 20_000), step(2, 0, 90, false, 30_000)]);
    expect(r.perCore).toBe(30_000);
    expect(r.line).toMatch(/^measured to hold: 20,000 REST req\/s /);
  });

  it('gives REST capacity in requests per second for REST-only steps', () => {
    const c = capacityLine(loadProfile('rest'), [step(1, 0, 50, true, 20_000)]);
    expect(c.perCore).toBe(40_000);
    expect(c.unit).toBe('req/s');
  });

  it('reads Prometheus text and fits the soak slope', () => {
    const text = '# HELP x\nnodejs_eventloop_lag_p99_seconds 0.0123\ncrossbook_feed_frames_total{venue="a"} 5\ncrossbook_feed_frames_total{venue="b"} 7\n';
    expect(metric(text, 'nodejs_eventloop_lag_p99_seconds')).toBe(0.0123);
    expect(metric(text, 'crossbook_feed_frames_total')).toBe(12);
    expect(metric(text, 'missing')).toBeNaN();
    expect(slope([0, 1, 2, 3], [10, 12, 14, 16])).toBe(2);
    expect(slope([0, 1, 2], [5, 5, 5])).toBe(0);
  });
});

describe('crossbook bench --profile smoke', () => {
  it('runs the real service under stepped load and writes a self-contained report', async () => {
    const out = tmp();
    const lines: string[] = [];
    const r: BenchReport = await runBench({
      profileName: 'smoke',
      profile: loadProfile('smoke'),
      outDir: out,
      maxMinutes: 2,
      results: false,
      command: 'test',
      log: (l) => lines.push(l),
    });
    expect(r.steps.length).toBe(2);
    for (const s of r.steps) {
      expect(s.ws.delivered, `step ${s.step}`).toBeGreaterThan(0);
      expect(s.rest!.requests, `step ${s.step}`).toBeGreaterThan(0);
      expect(s.rest!.errors).toBe(0);
      expect(s.ws.lost).toBe(0);
      expect(s.service.rssMiB).toBeGreaterThan(20);
      expect(s.service.cpuPct).toBeGreaterThan(0);
      expect(Number.isFinite(s.service.lagP99Ms)).toBe(true);
      // the simulator runs in its own process, sampled beside the service
      expect(s.service.sim!.cpuPct, `step ${s.step}`).toBeGreaterThan(0);
      expect(s.service.sim!.rssMiB).toBeGreaterThan(20);
    }
    expect(r.baseline.ws!.perSec).toBeGreaterThan(0);
    expect(r.baseline.rest!.rps).toBeGreaterThan(0);
    expect(r.capacity.line).toMatch(/^measured to hold: [\d,]+ clients/);
    const json = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as BenchReport;
    expect(json.steps.length).toBe(2);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('new uPlot(');
    expect(html).toContain('simulator CPU %');
    expect(html).toContain(r.capacity.line.replace(/&/g, '&amp;'));
    expect(html).not.toMatch(/(src|href)="https?:/);
    expect(lines.some((l) => l.includes('step  clients'))).toBe(true);
    // everything it started is gone
    expect(r.sim).toBe('external');
    expect(r.pids.length).toBe(3); // service, simulator, bare baseline
    for (const pid of r.pids) expect(() => process.kill(pid, 0), `pid ${pid}`).toThrow(/ESRCH/);
  }, 90_000);
});

describe('crossbook soak interrupted', () => {
  it('stops the service it started on Ctrl-C (SIGINT), not only on a normal exit', async () => {
    const { spawn } = await import('node:child_process');
    const { createInterface } = await import('node:readline');
    const cli = join(__dirname, '../../bin/crossbook.js');
    const child = spawn(process.execPath, [cli, 'soak', '--minutes', '1', '--no-results', '--out', tmp()], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pid = await new Promise<number>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (l) => {
        const m = /\(pid (\d+)\)/.exec(l);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (c) => reject(new Error(`soak exited (${c}) before starting its service`)));
    });
    const alive = (p: number): boolean => {
      try {
        process.kill(p, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive(pid)).toBe(true);
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    // A process that is gone has no event this test can hear: poll, with a deadline well past what
    // a loaded machine needs (it was 5 s).
    await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 30_000, interval: 100 });
  }, 60_000);
});
