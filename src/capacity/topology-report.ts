import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { uplotChart, uplotHead, type ChartSeries } from './charts.js';
import { projectRoot } from './proc.js';
import type { TopologyReport, TopologyResult, TopologyStep } from './topology.js';

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const n0 = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '–' : Math.round(v).toLocaleString('en-US'));
const n1 = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: 1 }));
const round1 = (v: number | undefined): number | undefined => (v === undefined || !Number.isFinite(v) ? undefined : Math.round(v * 10) / 10);
const COLORS = ['#2c3e50', '#c0392b', '#2980b9', '#27ae60', '#8e44ad', '#d35400', '#16a085', '#7f8c8d', '#f39c12'];

/** A topology's headline: its last step within the objectives, and its figures at the highest step every topology passed. */
export interface TopologySummary {
  readonly name: string;
  readonly skipped: string | undefined;
  /** Why the run of this topology stopped early (a process stopped answering). */
  readonly failed: string | undefined;
  /** The last step that met the objectives (its clients are the fan-out capacity found), or undefined. */
  readonly pass: TopologyStep | undefined;
  /** The same load for every topology: the highest step all of them passed (the first step when one passed none). */
  readonly common: TopologyStep | undefined;
  /** Whether the last step run still passed (the capacity is then a floor). */
  readonly floor: boolean;
}

/** Each run topology's headline figures (see {@link TopologySummary}). */
export function summarize(r: TopologyReport): TopologySummary[] {
  const run = r.results.filter((x) => !x.skipped);
  const lastOk = (x: TopologyResult): number => [...x.steps].reverse().find((s) => s.ok)?.step ?? 0;
  // The first step when some topology passed none: the same load for all, judged or not.
  const commonStep = run.length ? Math.max(1, Math.min(...run.map(lastOk))) : 0;
  return r.results.map((x) => ({
    name: x.topology.name,
    skipped: x.skipped,
    failed: x.failed,
    pass: x.steps.find((s) => s.step === lastOk(x)),
    common: x.steps.find((s) => s.step === commonStep),
    floor: !x.failed && x.steps.length > 0 && x.steps.at(-1)!.ok,
  }));
}

/** The x tick label of a step: its load. */
function loadLabel(s: { clients: number; rest: number }): string {
  if (s.clients > 0 && s.rest > 0) return `${s.clients} WS + ${s.rest} REST`;
  return s.clients > 0 ? `${s.clients} WS clients` : `${s.rest} REST conns`;
}

function charts(r: TopologyReport): string {
  const xs = r.profile.steps.map((_, i) => i + 1);
  const base = { xs, xLabel: 'load step (clients spread over the serving processes)', xTicks: r.profile.steps.map(loadLabel) };
  const run = r.results.filter((x) => !x.skipped);
  const per = (f: (s: TopologyStep) => number | undefined, only?: (x: TopologyResult) => boolean): ChartSeries[] =>
    run
      .filter((x) => !only || only(x))
      .map((x, i) => ({ label: x.topology.name, color: COLORS[i % COLORS.length]!, ys: xs.map((n) => (x.steps[n - 1] ? f(x.steps[n - 1]!) : null)) }));
  const ws = r.profile.steps.some((s) => s.clients > 0);
  return [
    ws ? uplotChart({ ...base, id: 'wsp99', title: 'WebSocket delivery p99 by topology', yLabel: 'p99 (ms)', series: per((s) => s.ws.p99) }) : '',
    ws ? uplotChart({ ...base, id: 'delivered', title: 'Messages delivered by topology', yLabel: 'messages per s', series: per((s) => s.ws.perSec) }) : '',
    r.profile.steps.some((s) => s.rest > 0)
      ? uplotChart({ ...base, id: 'rest', title: 'REST throughput by topology', yLabel: 'requests per s', series: per((s) => s.rest?.rps) })
      : '',
    uplotChart({
      ...base,
      id: 'hop',
      title: 'NATS hop: edge arrival − core arrival of the same update',
      yLabel: 'ms',
      series: [
        ...per(
          (s) => s.hop?.p50,
          (x) => x.topology.edges > 0,
        ).map((s) => ({ ...s, label: `${s.label} p50` })),
        ...per(
          (s) => s.hop?.p99,
          (x) => x.topology.edges > 0,
        ).map((s, i) => ({ ...s, label: `${s.label} p99`, color: COLORS[(i + 4) % COLORS.length]! })),
      ],
    }),
    uplotChart({
      ...base,
      id: 'cpu',
      title: 'CPU of the crossbook processes (core + edges, or the single process)',
      yLabel: '% of one core',
      series: per((s) => s.crossbookCpuPct),
    }),
  ].join('\n');
}

function stepRow(name: string, s: TopologyStep): string {
  const cells = [
    esc(name),
    String(s.step),
    n0(s.clients),
    n0(s.restConnections),
    n0(s.ws.perSec),
    `${n1(s.ws.p50)} / ${n1(s.ws.p99)}`,
    s.rest ? `${n0(s.rest.rps)} / ${n1(s.rest.p99)}` : '–',
    s.hop ? `${n1(s.hop.p50)} / ${n1(s.hop.p99)} (${n0(s.hop.paired)})` : '–',
    s.processes.map((p) => `${esc(p.name)} ${n0(p.cpuPct)}% / ${n0(p.rssMiB)} MiB`).join('<br>'),
    n0(s.ws.lost),
    s.ok ? 'met' : esc(s.broken.join('; ')),
  ];
  return `<tr class="${s.ok ? 'ok' : 'bad'}">${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
}

/** The self-contained HTML report of a topology comparison (uPlot charts inlined). */
export function renderTopologyHtml(r: TopologyReport): string {
  const m = r.machine;
  const sum = summarize(r);
  const lines = sum.map((x) =>
    x.skipped
      ? `<li>${esc(x.name)}: not run: ${esc(x.skipped)}</li>`
      : `<li>${esc(x.name)}: ${x.pass ? `${n0(x.pass.clients)} clients, ${n0(x.pass.ws.perSec)} msgs/s delivered, WS p99 ${n1(x.pass.ws.p99)} ms${x.pass.rest ? `, REST ${n0(x.pass.rest.rps)} req/s` : ''}${x.pass.hop ? `, NATS hop p50/p99 ${n1(x.pass.hop.p50)}/${n1(x.pass.hop.p99)} ms` : ''}${x.floor ? ' (the last step still passed: a floor)' : ''}` : 'no step met the objectives'}${x.failed ? `; stopped: ${esc(x.failed)}` : ''}</li>`,
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>crossbook bench --topology</title>
${uplotHead()}
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right;vertical-align:top}th{background:#f4f4f4}tr.bad td{background:#fde8e8}.chart{display:inline-block;margin:1em 1em 1em 0}</style></head><body>
<h1>crossbook bench --topology — profile <code>${esc(r.profileName)}</code></h1>
<p>${esc(r.profile.description)} Each topology in turn: the simulator in its own process (<code>crossbook sim</code>), then either one <code>crossbook serve</code>, or nats-server, a core (<code>--role core</code>) and N edges (<code>--role edge</code>) with the clients spread over the edges. Objectives: p99 ≤ ${r.profile.slo.p99Ms} ms, nothing lost, errors ≤ ${r.profile.slo.maxErrorRate * 100}%. The NATS hop is the time between the same update (market, seq) arriving from the core and from an edge, on one clock.</p>
<p>${esc(m.date)} · ${esc(m.cpu)} × ${m.cores} · ${m.memGiB} GiB · Node ${esc(m.node)} · load ${m.load1} at the start · <code>${esc(r.command)}</code> · ${Math.round(r.durationSec)} s. Every process shares this machine with the load generator.</p>
<h2>Last step within the objectives</h2><ul>${lines.join('')}</ul>
${charts(r)}
<h2>Every step</h2>
<table><tr><th>topology</th><th>step</th><th>WS clients</th><th>REST conns</th><th>delivered msgs/s</th><th>WS p50 / p99 ms</th><th>REST req/s / p99 ms</th><th>NATS hop p50 / p99 ms (pairs)</th><th>processes: CPU / RSS</th><th>lost</th><th>SLO</th></tr>
${r.results.flatMap((x) => x.steps.map((s) => stepRow(x.topology.name, s))).join('\n')}</table>
</body></html>
`;
}

/** Writes topology.html and topology.json into `dir`. */
export function writeTopologyReport(dir: string, r: TopologyReport): { html: string; json: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, 'topology.json');
  const html = join(dir, 'topology.html');
  writeFileSync(json, JSON.stringify(r, null, 2) + '\n');
  writeFileSync(html, renderTopologyHtml(r));
  return { html, json };
}

/** The BENCHMARKS.md section (bench/results/capacity-topology.json): one row per topology, single as the baseline. */
export function topologyResults(r: TopologyReport): Record<string, unknown> {
  const sum = summarize(r);
  const ws = r.profile.steps.some((s) => s.clients > 0);
  const cpuOf = (s: TopologyStep | undefined, name: string): number | undefined => s?.processes.find((p) => p.name === name)?.cpuPct;
  const common = sum.find((x) => x.common)?.common;
  const rest = r.profile.steps.some((s) => s.rest > 0);
  const rows = sum.map((x) => ({
    label: x.skipped ? `${x.name} (not run: ${x.skipped})` : x.name,
    baseline: x.name === 'single',
    clients: x.pass?.clients ?? (x.skipped ? undefined : 0),
    perSec: x.common ? Math.round(x.common.ws.perSec) : undefined,
    commonP50: ws ? x.common?.ws.p50 : undefined,
    commonP99: ws ? x.common?.ws.p99 : undefined,
    rps: x.common?.rest ? Math.round(x.common.rest.rps) : undefined,
    restP99: x.common?.rest?.p99,
    hop: x.common?.hop ? `${round1(x.common.hop.p50)} / ${round1(x.common.hop.p99)}` : undefined,
    cpu: x.common ? Math.round(x.common.crossbookCpuPct) : undefined,
    natsCpu: x.common ? round1(cpuOf(x.common, 'nats-server')) : undefined,
    slo: x.failed ? `stopped: ${x.failed}` : x.pass ? (x.floor ? 'all steps met' : `met up to step ${x.pass.step}`) : x.skipped ? '–' : 'no step met',
  }));
  const at = common ? loadLabel({ clients: common.clients, rest: common.restConnections }) : 'the common step';
  return {
    name: 'capacity-topology',
    title: `Capacity by topology: crossbook bench --topology (profile ${r.profileName})`,
    intro: `One process against a core and 1 or 2 edges on NATS JetStream (issue 19), in one run: the simulator in its own process, nats-server, \`crossbook serve --role core\` and \`--role edge\` started as an operator would, the profile's WebSocket clients and REST connections spread over the serving processes (the edges, or the single process), stepped up until an objective breaks (p99 ≤ ${r.profile.slo.p99Ms} ms, nothing lost, errors ≤ ${r.profile.slo.maxErrorRate * 100}%). HTML report: \`${r.command}\` writes bench-report/topology.html.`,
    command: r.command,
    machine: r.machine,
    sections: [
      {
        title: `${r.profileName} profile: ${r.profile.ticksPerSecond} ticks/s, ${r.profile.subscriptions} subscriptions per client, ${r.profile.stepSeconds} s per step`,
        columns: [
          { key: 'clients', title: 'WS clients at the last step met' },
          { key: 'perSec', title: `delivered msgs/s at ${at}` },
          { key: 'commonP50', title: `WS p50 ms at ${at}` },
          { key: 'commonP99', title: `WS p99 ms at ${at}` },
          { key: 'rps', title: `REST req/s at ${at}` },
          { key: 'restP99', title: `REST p99 ms at ${at}` },
          { key: 'hop', title: `NATS hop p50 / p99 ms at ${at}` },
          { key: 'cpu', title: `crossbook CPU % (all processes) at ${at}` },
          { key: 'natsCpu', title: 'nats-server CPU %', digits: 1 },
          { key: 'slo', title: 'SLO' },
        ],
        rows,
        ratio: { metric: rest ? 'rps' : 'perSec', title: `vs single (${rest ? 'REST req/s' : 'msgs/s'} at ${at})` },
        interpretation: sum
          .map((x) =>
            x.pass
              ? `${x.name}: ${x.pass.clients.toLocaleString('en-US')} clients within the objectives${x.floor ? ' (a floor: every step passed)' : ''}`
              : `${x.name}: ${x.skipped ?? 'no step met the objectives'}`,
          )
          .join('; ')
          .concat('.'),
        notes: [
          'The NATS hop is edge arrival − core arrival of the same update (market, seq) at a probe client on the core and on each edge, on one clock: NATS, the edge’s decode and its send.',
          'Every process (simulator, nats-server, core, edges) and the load generator share the 2-core machine, so added edges compete with the core and the harness for the same cores: this measures the hop and the overhead, not the capacity of a machine per edge.',
          `Run took ${Math.round(r.durationSec)} s; topologies ran in the order ${r.results.map((x) => x.topology.name).join(', ')}.`,
        ],
      },
    ],
  };
}

/** Writes bench/results/capacity-topology.json (bench/run.ts --report turns it into a BENCHMARKS.md section). */
export function writeTopologyResults(r: TopologyReport): string {
  const dir = join(projectRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'capacity-topology.json');
  writeFileSync(file, JSON.stringify(topologyResults(r), null, 2) + '\n');
  return file;
}
