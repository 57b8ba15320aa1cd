import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Profile } from './profiles.js';
import type { RestResult } from './rest-load.js';
import { uplotChart, uplotHead } from './charts.js';
import type { ProcessSample, SimMode } from './target.js';

export interface WsFigures {
  readonly clients: number;
  readonly delivered: number;
  readonly perSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly lost: number;
  readonly failed: number;
}

export interface StepResult {
  readonly step: number;
  readonly clients: number;
  readonly subscriptions: number;
  readonly restConnections: number;
  readonly ticksPerSecond: number;
  readonly seconds: number;
  readonly ws: WsFigures;
  readonly rest: RestResult | undefined;
  readonly wrk: RestResult | undefined;
  readonly service: ProcessSample;
  /** CPU of the harness process (WebSocket clients + autocannon), % of one core. */
  readonly harnessCpuPct: number;
  readonly ok: boolean;
  /** Which objectives broke, empty when ok. */
  readonly broken: readonly string[];
}

export interface Baseline {
  readonly ws?: WsFigures & { readonly rate: number };
  readonly rest?: RestResult & { readonly bytes: number };
}

export interface Capacity {
  /** The planner's line, e.g. "measured to hold: 1,000 clients (20 subscriptions each) at 2,000 ticks/s within 10 ms p99 (…); the next step, …, failed (…); extrapolated …". */
  readonly line: string;
  readonly lastPassingStep: number | null;
  readonly perCore: number | null;
  readonly unit: string;
}

export interface BenchReport {
  readonly profileName: string;
  readonly profile: Profile;
  /** Where the simulator ran: its own process (the service's CPU is its own) or embedded in the service. */
  readonly sim: SimMode;
  readonly machine: { cpu: string; cores: number; memGiB: number; node: string; platform: string; date: string; load1: number };
  readonly command: string;
  readonly durationSec: number;
  readonly steps: readonly StepResult[];
  readonly baseline: Baseline;
  readonly capacity: Capacity;
  /** Processes the run started (service, simulator, baseline), all stopped when it returns. */
  readonly pids: readonly number[];
}

export function machineInfo(): BenchReport['machine'] {
  const c = cpus();
  return {
    cpu: c[0]?.model.trim() ?? 'unknown',
    cores: c.length,
    memGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    date: new Date().toISOString(),
    load1: Math.round(loadavg()[0]! * 100) / 100,
  };
}

/**
 * The capacity line: first what was measured to hold (the last step that met the objectives before
 * the first that did not), then the first failing step and what broke, and only then a linear
 * extrapolation to one whole core of the service's CPU, labelled as one and never above the load
 * of the first failing step. `perCore` is that capped extrapolation.
 */
export function capacityLine(profile: Profile, steps: readonly StepResult[]): Capacity {
  const failAt = steps.findIndex((s) => !s.ok);
  const fail = failAt < 0 ? undefined : steps[failAt];
  const pass = (failAt < 0 ? steps : steps.slice(0, failAt)).at(-1);
  const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
  if (!pass)
    return {
      line: `no step met the objectives (p99 ≤ ${profile.slo.p99Ms} ms, nothing lost, errors ≤ ${profile.slo.maxErrorRate * 100}%)${fail ? `: the first, ${loadOf(fail)}, broke ${fail.broken.join(', ')}` : ''}`,
      lastPassingStep: null,
      perCore: null,
      unit: '',
    };
  const cores = Math.max(pass.service.cpuPct, 1) / 100;
  const clients = pass.clients > 0;
  const measured = clients ? pass.clients : (pass.wrk?.rps ?? pass.rest?.rps ?? 0);
  // The failing step's load in the same unit: its clients, or the requests a second it did serve.
  const ceiling = fail === undefined ? Infinity : clients ? fail.clients : (fail.wrk?.rps ?? fail.rest?.rps ?? Infinity);
  const perCore = Math.min(measured / cores, ceiling);
  const unit = clients ? 'clients' : 'REST req/s';
  const held = clients
    ? `${fmt(pass.clients)} clients (${pass.subscriptions} subscriptions each) at ${fmt(pass.ticksPerSecond)} ticks/s within ${profile.slo.p99Ms} ms p99 (${fmt(pass.ws.perSec)} msgs/s delivered, p99 ${pass.ws.p99} ms, service at ${Math.round(pass.service.cpuPct)}% of a core)`
    : `${fmt(measured)} REST req/s (${profile.restPaths.join(', ')}) at ${pass.restConnections} connections within ${profile.slo.p99Ms} ms p99 (service at ${Math.round(pass.service.cpuPct)}% of a core, ${pass.wrk ? 'wrk' : 'autocannon'})`;
  const after = fail ? `the next step, ${loadOf(fail)}, failed (${fail.broken.join(', ')})` : 'the last step still passed, so this is a floor';
  const capped = perCore === ceiling && fail !== undefined;
  const extrapolated =
    perCore > measured
      ? `; extrapolated to one whole core (linear in CPU, not measured): ${capped ? 'at most ' : ''}${fmt(perCore)} ${unit}${capped ? ', capped at the failing step' : ''}`
      : '';
  return { line: `measured to hold: ${held}; ${after}${extrapolated}`, lastPassingStep: pass.step, perCore, unit: clients ? 'clients' : 'req/s' };
}

/** A step's load in words, for the capacity line. */
function loadOf(s: StepResult): string {
  if (s.clients > 0) return `${s.clients.toLocaleString('en-US')} clients`;
  return `${s.restConnections} REST connections`;
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const n0 = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '–' : Math.round(v).toLocaleString('en-US'));
const n1 = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: 1 }));

/** The x tick label of a step: its load. */
function loadLabel(s: StepResult): string {
  if (s.clients > 0 && s.restConnections > 0) return `${s.clients} WS + ${s.restConnections} REST`;
  return s.clients > 0 ? `${s.clients} WS clients` : `${s.restConnections} REST conns`;
}

/** The three charts of a stepped run: latency, throughput and the processes' resources against load. */
function stepCharts(r: BenchReport): string {
  const xs = r.steps.map((s) => s.step);
  const base = { xs, xLabel: 'load step', xTicks: r.steps.map(loadLabel) };
  const ext = r.steps.some((s) => s.service.sim);
  return [
    uplotChart({
      ...base,
      id: 'latency',
      title: 'Latency against load',
      yLabel: 'latency (ms)',
      series: [
        { label: 'WebSocket p99', color: '#c0392b', ys: r.steps.map((s) => (s.clients ? s.ws.p99 : null)) },
        { label: 'WebSocket p50', color: '#e8a09a', ys: r.steps.map((s) => (s.clients ? s.ws.p50 : null)) },
        { label: 'REST p99', color: '#2c6fbb', ys: r.steps.map((s) => s.rest?.p99) },
        { label: 'event-loop lag p99', color: '#7f8c8d', ys: r.steps.map((s) => s.service.lagP99Ms) },
      ],
    }),
    uplotChart({
      ...base,
      id: 'throughput',
      title: 'Throughput against load',
      yLabel: 'WebSocket messages delivered per s',
      y2Label: 'REST requests per s',
      series: [
        { label: 'delivered msgs/s', color: '#c0392b', ys: r.steps.map((s) => (s.clients ? s.ws.perSec : null)) },
        { label: 'REST req/s', color: '#2c6fbb', ys: r.steps.map((s) => s.wrk?.rps ?? s.rest?.rps), right: true },
      ],
    }),
    uplotChart({
      ...base,
      id: 'resources',
      title: 'Processes: CPU and memory',
      yLabel: 'CPU (% of one core)',
      y2Label: 'RSS (MiB)',
      series: [
        { label: 'service CPU %', color: '#d35400', ys: r.steps.map((s) => s.service.cpuPct) },
        ...(ext ? [{ label: 'simulator CPU %', color: '#8e44ad', ys: r.steps.map((s) => s.service.sim?.cpuPct) }] : []),
        { label: 'harness CPU %', color: '#95a5a6', ys: r.steps.map((s) => s.harnessCpuPct) },
        { label: 'service RSS MiB', color: '#27ae60', ys: r.steps.map((s) => s.service.rssMiB), right: true },
        ...(ext ? [{ label: 'simulator RSS MiB', color: '#16a085', ys: r.steps.map((s) => s.service.sim?.rssMiB), right: true }] : []),
      ],
    }),
  ].join('\n');
}

/** The processes sentence of a report: where the simulator ran, and so what the service CPU includes. */
export function simSentence(sim: SimMode): string {
  return sim === 'external'
    ? "The simulator runs in its own process (`crossbook sim`, the venues on loopback, as real venues would be), so the service CPU is its own; the simulator's CPU and RSS are shown beside it."
    : "The simulator runs embedded in the service (`--sim embedded`, as `npm start` runs it): the service CPU includes the simulator's.";
}

function stepRow(s: StepResult): string {
  const cells = [
    String(s.step),
    n0(s.ticksPerSecond),
    n0(s.clients),
    String(s.subscriptions),
    `${n0(s.rest?.rps)}${s.wrk ? ` / ${n0(s.wrk.rps)} (wrk)` : ''}`,
    n0(s.ws.perSec),
    `${n1(s.ws.p50)} / ${n1(s.ws.p99)} / ${n1(s.ws.max)}`,
    s.rest ? `${n1(s.rest.p50)} / ${n1(s.rest.p99)} / ${n1(s.rest.max)}` : '–',
    n0(s.ws.lost),
    `${n0(s.service.cpuPct)}%`,
    n0(s.service.rssMiB),
    s.service.sim ? `${n0(s.service.sim.cpuPct)}% / ${n0(s.service.sim.rssMiB)}` : '–',
    `${n1(s.service.lagP99Ms)} / ${n1(s.service.lagMaxMs)}`,
    `${n0(s.harnessCpuPct)}%`,
    s.ok ? 'met' : esc(s.broken.join('; ')),
  ];
  return `<tr class="${s.ok ? 'ok' : 'bad'}">${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
}

/** The self-contained HTML report of a stepped run: the capacity line, uPlot charts (inlined), the steps and the baselines. */
export function renderHtml(r: BenchReport): string {
  const b = r.baseline;
  const m = r.machine;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>crossbook bench: ${esc(r.profileName)}</title>
${uplotHead()}
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#f4f4f4}tr.bad td{background:#fde8e8}.line{font-size:1.2em;padding:1em;background:#eef6ee;border-left:4px solid #3a3}.chart{display:inline-block;margin:1em 1em 1em 0}</style></head>
<body>
<h1>crossbook bench — profile <code>${esc(r.profileName)}</code></h1>
<p>${esc(r.profile.description)}</p>
<p class="line">${esc(r.capacity.line)}</p>
<p>${esc(m.date)} · ${esc(m.cpu)} × ${m.cores} · ${m.memGiB} GiB · Node ${esc(m.node)} · load ${m.load1} · <code>${esc(r.command)}</code> · ${Math.round(r.durationSec)} s.
Objectives: WebSocket and REST p99 ≤ ${r.profile.slo.p99Ms} ms, no lost update, errors ≤ ${r.profile.slo.maxErrorRate * 100}%. ${esc(simSentence(r.sim))} The harness (WebSocket clients, autocannon) shares the machine: its CPU is in the last columns.</p>
${stepCharts(r)}
<h2>Steps</h2>
<table><tr><th>step</th><th>ticks/s</th><th>WS clients</th><th>subs each</th><th>REST req/s</th><th>delivered msgs/s</th><th>WS p50/p99/max ms</th><th>REST p50/p99/max ms</th><th>lost</th><th>service CPU</th><th>service RSS MiB</th><th>simulator CPU / RSS MiB</th><th>loop lag p99/max ms</th><th>harness CPU</th><th>SLO</th></tr>
${r.steps.map(stepRow).join('\n')}</table>
<h2>Baselines (same run)</h2>
<table><tr><th></th><th>load</th><th>throughput</th><th>p50 / p99 ms</th><th>crossbook ÷ baseline</th></tr>
${b.ws ? `<tr><td>bare uWebSockets.js publish loop</td><td>${n0(b.ws.clients)} clients, ${n0(b.ws.rate)} publishes/s</td><td>${n0(b.ws.perSec)} msgs/s</td><td>${n1(b.ws.p50)} / ${n1(b.ws.p99)}</td><td>${ratio(r, 'ws')}</td></tr>` : ''}
${b.rest ? `<tr><td>bare uWebSockets.js route, ${n0(b.rest.bytes)}-byte body</td><td>${n0(b.rest.requests / Math.max(1, r.profile.stepSeconds))} req/s offered</td><td>${n0(b.rest.rps)} req/s</td><td>${n1(b.rest.p50)} / ${n1(b.rest.p99)}</td><td>${ratio(r, 'rest')}</td></tr>` : ''}
</table>
</body></html>
`;
}

function ratio(r: BenchReport, kind: 'ws' | 'rest'): string {
  const pass = r.steps.find((s) => s.step === r.capacity.lastPassingStep) ?? r.steps[0];
  if (!pass) return '–';
  if (kind === 'ws' && r.baseline.ws && r.baseline.ws.perSec > 0) return `${(pass.ws.perSec / r.baseline.ws.perSec).toFixed(2)}× msgs/s`;
  if (kind === 'rest' && r.baseline.rest && pass.rest && r.baseline.rest.rps > 0) return `${(pass.rest.rps / r.baseline.rest.rps).toFixed(2)}× req/s`;
  return '–';
}

/** Writes report.json and report.html into `dir`; returns their paths. */
export function writeReport(dir: string, r: BenchReport): { json: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, 'report.json');
  const html = join(dir, 'report.html');
  writeFileSync(json, JSON.stringify(r, null, 2) + '\n');
  writeFileSync(html, renderHtml(r));
  return { json, html };
}
