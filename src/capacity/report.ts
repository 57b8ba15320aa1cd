import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Profile } from './profiles.js';
import type { RestResult } from './rest-load.js';
import type { ProcessSample } from './target.js';

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
  /** The planner's line, e.g. "one core carries 4,100 clients (20 subscriptions each) at 2,000 ticks/s within 10 ms p99". */
  readonly line: string;
  readonly lastPassingStep: number | null;
  readonly perCore: number | null;
  readonly unit: string;
}

export interface BenchReport {
  readonly profileName: string;
  readonly profile: Profile;
  readonly machine: { cpu: string; cores: number; memGiB: number; node: string; platform: string; date: string; load1: number };
  readonly command: string;
  readonly durationSec: number;
  readonly steps: readonly StepResult[];
  readonly baseline: Baseline;
  readonly capacity: Capacity;
  /** Processes the run started (service, baseline), all stopped when it returns. */
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

/** The capacity line from the last step that met the objectives, normalized to one core of the service's CPU. */
export function capacityLine(profile: Profile, steps: readonly StepResult[]): Capacity {
  const pass = [...steps].reverse().find((s) => s.ok);
  const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
  if (!pass)
    return {
      line: `no step met the objectives (p99 ≤ ${profile.slo.p99Ms} ms, nothing lost, errors ≤ ${profile.slo.maxErrorRate * 100}%)`,
      lastPassingStep: null,
      perCore: null,
      unit: '',
    };
  const cores = Math.max(pass.service.cpuPct, 1) / 100;
  if (pass.clients > 0) {
    const perCore = pass.clients / cores;
    return {
      line: `one core carries ${fmt(perCore)} clients (${pass.subscriptions} subscriptions each) at ${fmt(pass.ticksPerSecond)} ticks/s within ${profile.slo.p99Ms} ms p99 (measured: ${fmt(pass.clients)} clients, ${fmt(pass.ws.perSec)} msgs/s delivered, p99 ${pass.ws.p99} ms, service at ${Math.round(pass.service.cpuPct)}% of a core${steps.at(-1)!.ok ? '; the last step still passed, so this is a floor' : ''})`,
      lastPassingStep: pass.step,
      perCore,
      unit: 'clients',
    };
  }
  const rps = pass.wrk?.rps ?? pass.rest?.rps ?? 0;
  const perCore = rps / cores;
  return {
    line: `one core serves ${fmt(perCore)} REST req/s (${profile.restPaths.join(', ')}) within ${profile.slo.p99Ms} ms p99 (measured: ${fmt(rps)} req/s at ${pass.restConnections} connections, service at ${Math.round(pass.service.cpuPct)}% of a core, ${pass.wrk ? 'wrk' : 'autocannon'})`,
    lastPassingStep: pass.step,
    perCore,
    unit: 'req/s',
  };
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An inline SVG line chart: x = step labels, one polyline per series. */
function chart(title: string, xs: readonly string[], series: readonly { name: string; color: string; ys: readonly number[] }[], yLabel: string): string {
  const W = 640;
  const H = 260;
  const L = 60;
  const B = 40;
  const max = Math.max(1, ...series.flatMap((s) => s.ys.filter(Number.isFinite)));
  const x = (i: number): number => L + (xs.length <= 1 ? (W - L - 20) / 2 : (i * (W - L - 20)) / (xs.length - 1));
  const y = (v: number): number => H - B - (v / max) * (H - B - 20);
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (f) =>
        `<line x1="${L}" x2="${W - 20}" y1="${y(f * max)}" y2="${y(f * max)}" stroke="#ddd"/><text x="${L - 6}" y="${y(f * max) + 4}" text-anchor="end" font-size="11">${(f * max).toLocaleString('en-US', { maximumFractionDigits: 1 })}</text>`,
    )
    .join('');
  const labels = xs.map((l, i) => `<text x="${x(i)}" y="${H - B + 16}" text-anchor="middle" font-size="11">${esc(l)}</text>`).join('');
  const lines = series
    .map((s) => {
      const pts = s.ys.map((v, i) => (Number.isFinite(v) ? `${x(i)},${y(v)}` : '')).filter(Boolean);
      return `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${pts.join(' ')}"/>${s.ys.map((v, i) => (Number.isFinite(v) ? `<circle cx="${x(i)}" cy="${y(v)}" r="3" fill="${s.color}"/>` : '')).join('')}`;
    })
    .join('');
  const legend = series.map((s, i) => `<text x="${L + 10 + i * 170}" y="14" font-size="12" fill="${s.color}">■ ${esc(s.name)}</text>`).join('');
  return `<figure><figcaption>${esc(title)}</figcaption><svg width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img">${grid}${labels}${lines}${legend}<text x="14" y="${H / 2}" transform="rotate(-90 14 ${H / 2})" font-size="11" text-anchor="middle">${esc(yLabel)}</text></svg></figure>`;
}

const n0 = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '–' : Math.round(v).toLocaleString('en-US'));
const n1 = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: 1 }));

export function renderHtml(r: BenchReport): string {
  const xs = r.steps.map((s) => (s.clients > 0 ? `${s.clients} cl` : `${s.restConnections} conn`));
  const rows = r.steps
    .map(
      (s) =>
        `<tr class="${s.ok ? 'ok' : 'bad'}"><td>${s.step}</td><td>${n0(s.ticksPerSecond)}</td><td>${n0(s.clients)}</td><td>${s.subscriptions}</td><td>${n0(s.rest?.rps)}${s.wrk ? ` / ${n0(s.wrk.rps)} (wrk)` : ''}</td><td>${n0(s.ws.perSec)}</td><td>${n1(s.ws.p50)} / ${n1(s.ws.p99)} / ${n1(s.ws.max)}</td><td>${s.rest ? `${n1(s.rest.p50)} / ${n1(s.rest.p99)} / ${n1(s.rest.max)}` : '–'}</td><td>${n0(s.ws.lost)}</td><td>${n0(s.service.cpuPct)}%</td><td>${n0(s.service.rssMiB)}</td><td>${n1(s.service.lagP99Ms)} / ${n1(s.service.lagMaxMs)}</td><td>${n0(s.harnessCpuPct)}%</td><td>${s.ok ? 'met' : esc(s.broken.join('; '))}</td></tr>`,
    )
    .join('\n');
  const b = r.baseline;
  const m = r.machine;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>crossbook bench: ${esc(r.profileName)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#f4f4f4}tr.bad td{background:#fde8e8}.line{font-size:1.2em;padding:1em;background:#eef6ee;border-left:4px solid #3a3}figure{display:inline-block;margin:1em}figcaption{font-weight:600}</style></head>
<body>
<h1>crossbook bench — profile <code>${esc(r.profileName)}</code></h1>
<p>${esc(r.profile.description)}</p>
<p class="line">${esc(r.capacity.line)}</p>
<p>${esc(m.date)} · ${esc(m.cpu)} × ${m.cores} · ${m.memGiB} GiB · Node ${esc(m.node)} · load ${m.load1} · <code>${esc(r.command)}</code> · ${Math.round(r.durationSec)} s.
Objectives: WebSocket and REST p99 ≤ ${r.profile.slo.p99Ms} ms, no lost update, errors ≤ ${r.profile.slo.maxErrorRate * 100}%. The service runs its embedded simulator (its CPU includes the simulator's); the harness (WebSocket clients, autocannon) shares the machine: its CPU is in the last column.</p>
${chart(
  'Latency against load (ms)',
  xs,
  [
    { name: 'WebSocket p99', color: '#c33', ys: r.steps.map((s) => (s.clients ? s.ws.p99 : NaN)) },
    { name: 'WebSocket p50', color: '#e99', ys: r.steps.map((s) => (s.clients ? s.ws.p50 : NaN)) },
    { name: 'REST p99', color: '#36c', ys: r.steps.map((s) => (s.rest ? s.rest.p99 : NaN)) },
    { name: 'event-loop lag p99', color: '#888', ys: r.steps.map((s) => s.service.lagP99Ms) },
  ],
  'ms',
)}
${chart(
  'Throughput against load',
  xs,
  [
    { name: 'delivered msgs/s', color: '#c33', ys: r.steps.map((s) => s.ws.perSec) },
    { name: 'REST req/s', color: '#36c', ys: r.steps.map((s) => s.wrk?.rps ?? s.rest?.rps ?? NaN) },
  ],
  'per second',
)}
${chart(
  'Service resources',
  xs,
  [
    { name: 'CPU % of a core', color: '#a60', ys: r.steps.map((s) => s.service.cpuPct) },
    { name: 'RSS MiB', color: '#393', ys: r.steps.map((s) => s.service.rssMiB) },
  ],
  '',
)}
<h2>Steps</h2>
<table><tr><th>step</th><th>ticks/s</th><th>WS clients</th><th>subs each</th><th>REST req/s</th><th>delivered msgs/s</th><th>WS p50/p99/max ms</th><th>REST p50/p99/max ms</th><th>lost</th><th>service CPU</th><th>RSS MiB</th><th>loop lag p99/max ms</th><th>harness CPU</th><th>SLO</th></tr>
${rows}</table>
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
