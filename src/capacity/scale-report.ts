import { mkdirSync, writeFileSync } from 'node:fs';
import { uplotChart, uplotHead } from './charts.js';
import { join } from 'node:path';
import type { ScalePoint, ScaleReport } from './scale.js';
import { projectRoot } from './target.js';

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const n0 = (v: number | null | undefined): string => (v === null || v === undefined || !Number.isFinite(v) ? '–' : Math.round(v).toLocaleString('en-US'));
const n1 = (v: number | null | undefined): string =>
  v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: 1 });

/** Heap bytes per listed market by component, at the size where they were measured. */
export function perMarketCosts(r: ScaleReport): { markets: number; rows: { component: string; mib: number; bytesPerMarket: number }[] } | undefined {
  const p = r.points.find((x) => x.components !== undefined);
  if (!p?.components) return undefined;
  const rows = Object.entries(p.components)
    .map(([component, bytes]) => ({ component, mib: bytes / 2 ** 20, bytesPerMarket: bytes / Math.max(1, p.listed) }))
    .sort((a, b) => b.mib - a.mib);
  return { markets: p.listed, rows };
}

interface Series {
  readonly label: string;
  readonly color: string;
  readonly ys: readonly (number | null)[];
}

/** One uPlot chart: x = markets listed (log scale), one line per series, axes labelled. */
function chartSpec(id: string, title: string, xs: readonly number[], yLabel: string, series: readonly Series[]): string {
  return uplotChart({ id, title, xs, xLabel: 'markets listed', xLog: true, yLabel, series });
}

function pointRow(p: ScalePoint): string {
  const cells = [
    n0(p.markets),
    n0(p.listed),
    n1(p.scale),
    n0(p.idle.rssMiB),
    n0(p.idle.heapMiB),
    n1(p.statusOkSec),
    n1(p.allLiveSec),
    n1(p.matchedSec),
    n1(p.restartStatusOkSec),
    n1(p.restartAllLiveSec),
    n1(p.ingestCpuPer1k),
    p.reads.map((r) => `${n0(r.rps)} / ${n0(r.p99)}`).join('<br>'),
    p.fanout ? `${n0(p.fanout.perSec)} / ${n0(p.fanout.p99)}` : '–',
  ];
  return `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
}

/** The HTML report: the curves (uPlot, inlined), the table of every size and the per-market cost of each component. */
export function renderScaleHtml(r: ScaleReport): string {
  const xs = r.points.map((p) => p.listed);
  const memory = chartSpec('mem', 'Memory after warm-up', xs, 'MiB', [
    { label: 'RSS', color: '#c0392b', ys: r.points.map((p) => p.idle.rssMiB) },
    { label: 'heap used', color: '#2980b9', ys: r.points.map((p) => p.idle.heapMiB) },
    { label: 'external', color: '#7f8c8d', ys: r.points.map((p) => p.idle.externalMiB) },
  ]);
  const times = chartSpec('times', 'Start and restart', xs, 'seconds from process start', [
    { label: '/status ok', color: '#27ae60', ys: r.points.map((p) => p.statusOkSec) },
    { label: 'all venues live', color: '#8e44ad', ys: r.points.map((p) => p.allLiveSec) },
    { label: 'groups matched', color: '#d35400', ys: r.points.map((p) => p.matchedSec) },
    { label: 'restart: /status ok', color: '#16a085', ys: r.points.map((p) => p.restartStatusOkSec) },
  ]);
  const latency = chartSpec('lat', 'Latency under the fixed load', xs, 'p99 ms', [
    ...r.profile.restPaths.map((path, i) => ({
      label: `REST ${path}`,
      color: ['#2c3e50', '#e67e22', '#1abc9c', '#9b59b6'][i % 4]!,
      ys: r.points.map((p) => p.reads[i]?.p99 ?? null),
    })),
    { label: 'WebSocket fan-out', color: '#c0392b', ys: r.points.map((p) => p.fanout?.p99 ?? null) },
  ]);
  const costs = perMarketCosts(r);
  const costTable = costs
    ? `<h2>Per-market cost by component (heap snapshot at ${n0(costs.markets)} markets)</h2><table><tr><th>component</th><th>heap MiB</th><th>bytes per market</th></tr>${costs.rows.map((c) => `<tr><td>${esc(c.component)}</td><td>${n1(c.mib)}</td><td>${n0(c.bytesPerMarket)}</td></tr>`).join('')}</table><p>Each object is counted for the nearest component on its shortest path from the GC roots (src/capacity/heap-owners.ts); "other" is code, modules, LMDB's and uWS's buffers and what no component reaches.</p>`
    : '';
  const step = r.profile.steps[0]!;
  const m = r.machine;
  return `<!doctype html><html><head><meta charset="utf-8"><title>crossbook bench --profile scale</title>${uplotHead()}<style>
body{font:14px system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f4f4f4}</style></head><body>
<h1>crossbook bench --profile scale</h1>
<p>${esc(r.profile.description)} Machine: ${esc(m.cpu)}, ${m.cores} cores, ${m.memGiB} GiB, ${esc(m.node)}, load ${m.load1} at the end; ${esc(m.date)}. Command: <code>${esc(r.command)}</code>; ${Math.round(r.durationSec)} s.</p>
${memory}${times}${latency}
<h2>Every size</h2>
<table><tr><th>markets asked</th><th>listed</th><th>sim.scale</th><th>RSS MiB</th><th>heap MiB</th><th>/status ok s</th><th>all live s</th><th>matched s</th><th>restart ok s</th><th>restart live s</th><th>CPU % per 1k ticks/s</th><th>REST req/s / p99 ms (${r.profile.restPaths.map(esc).join(', ')}; ${step.rest} connections)</th><th>WS msgs/s / p99 ms (${step.clients} clients × ${r.profile.subscriptions})</th></tr>
${r.points.map(pointRow).join('\n')}</table>
${r.skipped.length ? `<p>Not run: ${r.skipped.map(esc).join('; ')}.</p>` : ''}
${costTable}
</body></html>
`;
}

/** Writes report.html and report.json under `dir`. */
export function writeScaleReport(dir: string, r: ScaleReport): { html: string; json: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, 'scale.json');
  const html = join(dir, 'scale.html');
  writeFileSync(json, JSON.stringify(r, null, 2) + '\n');
  writeFileSync(html, renderScaleHtml(r));
  return { html, json };
}

/** bench/results/capacity-scale.json, the BENCHMARKS.md section (bench/run.ts --report). */
export function writeScaleResults(r: ScaleReport): string {
  const dir = join(projectRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const rows = r.points.map((p, i) => ({
    label: `${p.listed.toLocaleString('en-US')} markets (sim.scale ${p.scale})`,
    baseline: i === 0,
    rss: Math.round(p.idle.rssMiB),
    heap: Math.round(p.idle.heapMiB),
    statusOk: p.statusOkSec === null ? undefined : Math.round(p.statusOkSec * 10) / 10,
    allLive: p.allLiveSec === null ? undefined : Math.round(p.allLiveSec * 10) / 10,
    matched: p.matchedSec === null ? undefined : Math.round(p.matchedSec * 10) / 10,
    restart: p.restartStatusOkSec === null ? undefined : Math.round(p.restartStatusOkSec * 10) / 10,
    cpu1k: Math.round(p.ingestCpuPer1k * 10) / 10,
    restP99: p.reads.length ? Math.max(...p.reads.map((x) => x.p99)) : undefined,
    wsP99: p.fanout?.p99,
  }));
  const costs = perMarketCosts(r);
  const sections: unknown[] = [
    {
      title: 'The whole service by size',
      columns: [
        { key: 'rss', title: 'RSS MiB' },
        { key: 'heap', title: 'heap MiB' },
        { key: 'statusOk', title: '/status ok s', digits: 1 },
        { key: 'allLive', title: 'all venues live s', digits: 1 },
        { key: 'matched', title: 'groups matched s', digits: 1 },
        { key: 'restart', title: 'restart to /status ok s', digits: 1 },
        { key: 'cpu1k', title: 'CPU % per 1k ticks/s', digits: 1 },
        { key: 'restP99', title: 'worst REST p99 ms' },
        { key: 'wsP99', title: 'fan-out p99 ms' },
      ],
      rows,
      ratio: { metric: 'rss', title: 'RSS vs smallest' },
      notes: [
        `Fixed load per size: ${r.profile.steps[0]!.rest} REST connections per path, ${r.profile.steps[0]!.clients} WebSocket clients × ${r.profile.subscriptions} markets.`,
        ...r.skipped.map((s) => `Not run: ${s}.`),
      ],
    },
  ];
  if (costs)
    sections.push({
      title: `Heap per market by component (snapshot at ${costs.markets.toLocaleString('en-US')} markets)`,
      columns: [
        { key: 'mib', title: 'heap MiB', digits: 1 },
        { key: 'perMarket', title: 'bytes per market' },
      ],
      rows: costs.rows.map((c) => ({ label: c.component, mib: Math.round(c.mib * 10) / 10, perMarket: Math.round(c.bytesPerMarket) })),
    });
  const file = join(dir, 'capacity-scale.json');
  writeFileSync(
    file,
    JSON.stringify(
      {
        name: 'capacity-scale',
        title: 'Capacity: crossbook bench --profile scale',
        intro: `${r.profile.description} HTML report with the curves: \`${r.command}\` writes bench-report/scale.html.`,
        command: r.command,
        machine: r.machine,
        sections,
      },
      null,
      2,
    ) + '\n',
  );
  return file;
}
