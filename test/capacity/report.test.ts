import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { uplotChart, uplotHead, uplotOptions } from '../../src/capacity/charts.js';
import { loadProfile } from '../../src/capacity/profiles.js';
import { capacityLine, machineInfo, renderHtml, type BenchReport, type StepResult } from '../../src/capacity/report.js';
import { externalSimConfig } from '../../src/cli/sim.js';
import { loadConfig } from '../../src/config/load.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const step = (n: number, clients: number, rest: number, sim: boolean): StepResult => ({
  step: n,
  clients,
  subscriptions: 20,
  restConnections: rest,
  ticksPerSecond: 2000,
  seconds: 10,
  ws: { clients, delivered: 1000, perSec: 100 * clients, p50: 1, p99: 4, max: 9, lost: 0, failed: 0 },
  rest: rest ? { client: 'autocannon', rps: 5000, p50: 1, p99: 6, max: 9, requests: 50_000, errors: 0, clientCpuPct: 50 } : undefined,
  wrk: undefined,
  service: {
    cpuPct: 40 + n,
    rssMiB: 200,
    rssAnonMiB: 150,
    heapTotalMiB: 100,
    externalMiB: 20,
    lagP99Ms: 2,
    lagMaxMs: 5,
    heapMiB: 80,
    publishedPerSec: 1000,
    walletPositions: 0,
    ...(sim ? { sim: { cpuPct: 12, rssMiB: 140 } } : {}),
  },
  harnessCpuPct: 30,
  ok: true,
  broken: [],
});

const report = (sim: 'external' | 'embedded'): BenchReport => {
  const profile = loadProfile('dashboard');
  const steps = [step(1, 5, 2, sim === 'external'), step(2, 10, 5, sim === 'external')];
  return {
    profileName: 'dashboard',
    profile,
    sim,
    machine: machineInfo(),
    command: 'test',
    durationSec: 30,
    steps,
    baseline: {},
    capacity: capacityLine(profile, steps),
    pids: [],
  };
};

describe('report charts (uPlot)', () => {
  it('labels both axes with their units, puts right-hand series on a second scale and leaves gaps for missing values', () => {
    const { opts, data } = uplotOptions({
      id: 'c',
      title: 'T',
      xs: [1, 2, 3],
      xLabel: 'load step',
      yLabel: 'latency (ms)',
      y2Label: 'RSS (MiB)',
      series: [
        { label: 'p99', color: '#f00', ys: [1, NaN, 3] },
        { label: 'RSS', color: '#0f0', ys: [100, 110, null], right: true },
      ],
    });
    const axes = opts['axes'] as { label: string; scale?: string; side?: number }[];
    expect(axes.map((a) => a.label)).toEqual(['load step', 'latency (ms)', 'RSS (MiB)']);
    expect(axes[2]).toMatchObject({ scale: 'y2', side: 1 });
    const series = opts['series'] as { label: string; scale?: string }[];
    expect(series.map((s) => [s.label, s.scale])).toEqual([
      ['load step', undefined],
      ['p99', 'y'],
      ['RSS', 'y2'],
    ]);
    expect(data).toEqual([
      [1, 2, 3],
      [1, null, 3],
      [100, 110, null],
    ]);
    expect((opts['scales'] as Record<string, unknown>)['y2']).toBeDefined();
    // no right-hand axis without right-hand series
    const one = uplotOptions({ id: 'd', title: 'T', xs: [1], xLabel: 'x', yLabel: 'y', series: [{ label: 's', color: '#000', ys: [1] }] });
    expect((one.opts['axes'] as unknown[]).length).toBe(2);
  });

  it('draws step charts with the load as tick labels and escapes what it embeds', () => {
    const html = uplotChart({ id: 'x', title: '</script>', xs: [1, 2], xLabel: 'load step', xTicks: ['5 WS', '10 WS'], yLabel: 'ms', series: [] });
    expect(html).toContain('new uPlot(');
    expect(html).toContain('"5 WS","10 WS"');
    expect(html).not.toContain('</script></script>');
    expect(html.match(/<\/script>/g)?.length).toBe(1);
  });

  it('inlines uPlot into the page head', () => {
    const head = uplotHead();
    expect(head).toMatch(/^<style>.*\.uplot/s);
    expect(head).toMatch(/<script>.*var uPlot/s);
    expect(head.match(/<\/script>/g)?.length).toBe(1);
  });

  it('renders a stepped run with uPlot charts, axes with units, legends, and the simulator process beside the service', () => {
    const html = renderHtml(report('external'));
    expect(html).not.toContain('<svg');
    expect(html.match(/new uPlot\(/g)?.length).toBe(3);
    for (const label of [
      'latency (ms)',
      'CPU (% of one core)',
      'RSS (MiB)',
      'REST requests per s',
      'WebSocket p99',
      'service CPU %',
      'simulator CPU %',
      'simulator RSS MiB',
    ])
      expect(html, label).toContain(label);
    expect(html).toContain('"5 WS + 2 REST","10 WS + 5 REST"');
    expect(html).toContain('in its own process');
    expect(html).toContain('<td>12% / 140</td>');
    expect(html).not.toMatch(/(src|href)="https?:/);
    const embedded = renderHtml(report('embedded'));
    expect(embedded).not.toContain('simulator CPU %');
    expect(embedded).toContain('includes the simulator');
  });
});

describe('crossbook sim --config-out', () => {
  it('writes the configuration that points a service at the simulator: every venue live at its URLs, no embedded simulator', () => {
    const doc = externalSimConfig([
      ['venue_a', { rest: 'http://127.0.0.1:4001/trade-api/v2', ws: 'ws://127.0.0.1:4001/trade-api/ws/v2' }],
      ['venue_b', { rest: 'http://127.0.0.1:4002/clob', ws: 'ws://127.0.0.1:4002/ws/market', extra: { gamma: 'http://127.0.0.1:4002/gamma' } }],
      ['venue_c', { rest: 'http://127.0.0.1:4003/api/marketdata' }],
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'cb-simcfg-'));
    dirs.push(dir);
    const file = join(dir, 'sim.json');
    writeFileSync(file, JSON.stringify(doc));
    const c = loadConfig({ env: { CROSSBOOK_CONFIG: file } });
    expect(c.sim.embedded).toBe(false);
    const of = (label: string): unknown => c.venues.find((v) => v.label === label)!.connection;
    expect(of('venue_a')).toEqual({ mode: 'live', rest: 'http://127.0.0.1:4001/trade-api/v2', ws: 'ws://127.0.0.1:4001/trade-api/ws/v2' });
    expect(of('venue_b')).toEqual({
      mode: 'live',
      rest: 'http://127.0.0.1:4002/clob',
      ws: 'ws://127.0.0.1:4002/ws/market',
      extra: { gamma: 'http://127.0.0.1:4002/gamma' },
    });
    expect(of('venue_c')).toEqual({ mode: 'live', rest: 'http://127.0.0.1:4003/api/marketdata' });
    // venues the simulator did not serve keep their registry entry
    expect(of('venue_d')).toEqual({ mode: 'sim' });
  });
});
