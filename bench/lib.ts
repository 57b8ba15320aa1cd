/**
 * A tiny benchmark harness: timing with warm-up, machine description, and result files.
 *
 * Each bench script measures, then calls `record()` once per section. Sections land in
 * `bench/results/<name>.json` (name = the script's file name without `.bench.js`) and are printed
 * as a Markdown table; `bench/run.ts` rebuilds BENCHMARKS.md from those files. Benchmarks measure,
 * they never assert: a slow figure is reported, not failed.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo } from '../src/capacity/report.js';

/** The repository root, found from this file in both bench/ (tsx) and dist/bench/ (built). */
export function repoRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, here.includes('/dist/') ? '../..' : '..');
}

export const RESULTS_DIR = resolve(repoRoot(), 'bench/results');

/** Where and on what a figure was measured (STYLE.md rule 9: date, CPU, Node version, command). */
export interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly memGiB: number;
  readonly node: string;
  readonly platform: string;
  readonly date: string;
  /** 1-minute load average when the run started: other work on the machine skews every figure. */
  readonly load1: number;
}

export function machine(): MachineInfo {
  return machineInfo();
}

/** The command that reproduces this run, as typed from the repository root. */
export function command(): string {
  const script = process.argv[1] ? relative(repoRoot(), process.argv[1]) : '?';
  const flags = process.execArgv.filter((a) => !a.startsWith('--cpu-prof')).join(' ');
  const args = process.argv.slice(2).join(' ');
  return ['node', flags, script, args].filter((s) => s.length > 0).join(' ');
}

/** Timing statistics of one measured workload. */
export interface Stats {
  /** Operations timed (over all measured runs). */
  readonly ops: number;
  readonly seconds: number;
  /** Median over runs (or batches) of ops per second. */
  readonly opsPerSec: number;
  /** Median ns per op. */
  readonly nsPerOp: number;
  /** Percentiles of ns/op over timed batches (per-batch averages), when batches were timed. */
  readonly p50Ns?: number | undefined;
  readonly p99Ns?: number | undefined;
  readonly runs: number;
}

const now = (): bigint => process.hrtime.bigint();

function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

/** The median of `xs` (of an even count, the lower of the middle two); NaN when empty. */
export function median(xs: readonly number[]): number {
  return percentile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
}

/**
 * The median over rounds of `xs[i] / ys[i]`: two workloads' rates of the same rounds, run side by
 * side, so the load's drift between rounds is left out (the ratio of the two medians keeps it).
 * Of an even count, the mean of the middle two.
 */
export function pairedRatio(xs: readonly number[], ys: readonly number[]): number {
  const r = xs.map((x, i) => x / ys[i]!).sort((p, q) => p - q);
  return r.length === 0 ? NaN : r.length % 2 === 1 ? r[r.length >> 1]! : (r[r.length / 2 - 1]! + r[r.length / 2]!) / 2;
}

/**
 * Runs `fn` (one operation) in batches of `batch` calls: warm-up for `warmupMs`, then timed for
 * `seconds` or `iterations` calls, whichever comes first. p50/p99 are over per-batch ns/op, since
 * a single call is too short to time without measuring the clock instead.
 */
export function bench(fn: (i: number) => unknown, opts: { warmupMs?: number; seconds?: number; iterations?: number; batch?: number } = {}): Stats {
  const batch = opts.batch ?? 1000;
  const warmupNs = BigInt(Math.round((opts.warmupMs ?? 300) * 1e6));
  const limitNs = BigInt(Math.round((opts.seconds ?? 2) * 1e9));
  const maxIter = opts.iterations ?? Infinity;
  let sink = 0;
  let i = 0;
  const w0 = now();
  while (now() - w0 < warmupNs) for (let k = 0; k < batch; k++) sink += fn(i++) ? 1 : 0;
  const samples: number[] = [];
  let ops = 0;
  const t0 = now();
  let last = t0;
  while (last - t0 < limitNs && ops < maxIter) {
    for (let k = 0; k < batch; k++) sink += fn(i++) ? 1 : 0;
    const t = now();
    samples.push(Number(t - last) / batch);
    last = t;
    ops += batch;
  }
  keep(sink);
  const seconds = Number(last - t0) / 1e9;
  const sorted = samples.sort((a, b) => a - b);
  return { ops, seconds, opsPerSec: ops / seconds, nsPerOp: (seconds * 1e9) / ops, p50Ns: percentile(sorted, 0.5), p99Ns: percentile(sorted, 0.99), runs: 1 };
}

/**
 * Runs a whole workload several times: `setup()` (untimed) before each run, `run()` returns the
 * number of operations it did. The first `warmup` runs are discarded; figures are the median run.
 * `run` may call `lap(opsSinceLastLap)` to time batches inside a run (for p50/p99).
 */
export function measure(opts: {
  setup?: () => void;
  run: (lap: (ops: number) => void) => number;
  warmup?: number;
  runs?: number;
  /** Stop adding runs once this much time was spent timing (at least one timed run). */
  maxSeconds?: number;
}): Stats {
  const warmup = opts.warmup ?? 1;
  const runs = opts.runs ?? 5;
  const budget = (opts.maxSeconds ?? 20) * 1e9;
  const rates: number[] = [];
  const samples: number[] = [];
  let ops = 0;
  let ns = 0;
  for (let r = 0; r < warmup + runs; r++) {
    opts.setup?.();
    const timed = r >= warmup;
    let last = now();
    const lap = (n: number): void => {
      const t = now();
      if (timed && n > 0) samples.push(Number(t - last) / n);
      last = t;
    };
    const t0 = now();
    last = t0;
    const n = opts.run(lap);
    const dt = Number(now() - t0);
    if (!timed) continue;
    rates.push(n / (dt / 1e9));
    ops += n;
    ns += dt;
    if (ns > budget) break;
  }
  const rate = median(rates);
  const sorted = samples.sort((a, b) => a - b);
  return {
    ops,
    seconds: ns / 1e9,
    opsPerSec: rate,
    nsPerOp: 1e9 / rate,
    p50Ns: sorted.length ? percentile(sorted, 0.5) : undefined,
    p99Ns: sorted.length ? percentile(sorted, 0.99) : undefined,
    runs: rates.length,
  };
}

/** A named workload for measureEach. */
export interface Candidate {
  readonly name: string;
  readonly setup?: () => void;
  readonly run: () => number;
}

/**
 * Measures several workloads round-robin (a, b, c, a, b, c, …) rather than one after the other,
 * so that heap growth, JIT state and machine noise drift over the rounds hit every candidate
 * alike. The first `warmup` rounds are discarded; figures are the median round. A full GC runs
 * before every timed run when available.
 */
export function measureEach(cands: readonly Candidate[], opts: { warmup?: number; runs?: number } = {}): Map<string, Stats> {
  const warmup = opts.warmup ?? 1;
  const runs = opts.runs ?? 3;
  const rates = new Map<string, number[]>(cands.map((c) => [c.name, []]));
  const totals = new Map<string, { ops: number; ns: number }>(cands.map((c) => [c.name, { ops: 0, ns: 0 }]));
  for (let r = 0; r < warmup + runs; r++) {
    for (const c of cands) {
      c.setup?.();
      (globalThis as { gc?: () => void }).gc?.();
      const t0 = now();
      const n = c.run();
      const dt = Number(now() - t0);
      if (r < warmup) continue;
      rates.get(c.name)!.push(n / (dt / 1e9));
      const t = totals.get(c.name)!;
      t.ops += n;
      t.ns += dt;
    }
  }
  const out = new Map<string, Stats>();
  for (const c of cands) {
    const rate = median(rates.get(c.name)!);
    const t = totals.get(c.name)!;
    out.set(c.name, { ops: t.ops, seconds: t.ns / 1e9, opsPerSec: rate, nsPerOp: 1e9 / rate, runs: runs });
  }
  return out;
}

/**
 * CPU time (ms) of this process's main thread so far, from /proc (the scheduler's nanosecond count
 * in `schedstat`, else `stat`'s 10 ms ticks), or NaN where there is no /proc. Unlike wall time it
 * does not count time the thread waited for a core that other work on the machine held, nor the
 * threads beside it (GC helpers, LMDB, libuv's pool).
 */
export function mainThreadCpuMs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    try {
      const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Fields 14 and 15 of stat(5) (utime, stime), counted here from field 3 (state); clock ticks of 10 ms.
      return (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      return NaN;
    }
  }
}

/** A named workload for measureEachAsync: setup and run may wait (sockets, timers, the event loop). */
export interface AsyncCandidate {
  readonly name: string;
  readonly setup?: () => unknown;
  /** Runs the workload; returns the number of operations done. */
  readonly run: () => number | Promise<number>;
  /** After each run, untimed (checks, cleanup). */
  readonly teardown?: () => unknown;
}

/**
 * measureEach for workloads that run across event-loop turns: round-robin, `warmup` rounds
 * discarded, median round, a full GC before every timed run. Also returns every timed rate, for
 * the spread. Rounds stop early (after at least one timed round) when the next would end after
 * `deadline` (a `performance.now()` time).
 */
export async function measureEachAsync(
  cands: readonly AsyncCandidate[],
  opts: { warmup?: number; runs?: number; deadline?: number } = {},
): Promise<Map<string, AsyncStats>> {
  const warmup = opts.warmup ?? 1;
  let runs = opts.runs ?? 3;
  const rates = new Map<string, number[]>(cands.map((c) => [c.name, []]));
  const cpuRates = new Map<string, number[]>(cands.map((c) => [c.name, []]));
  const totals = new Map<string, { ops: number; ns: number }>(cands.map((c) => [c.name, { ops: 0, ns: 0 }]));
  for (let r = 0; r < warmup + runs; r++) {
    const round0 = performance.now();
    for (const c of cands) {
      await c.setup?.();
      (globalThis as { gc?: () => void }).gc?.();
      const cpu0 = mainThreadCpuMs();
      const t0 = now();
      const n = await c.run();
      const dt = Number(now() - t0);
      const cpu = mainThreadCpuMs() - cpu0;
      await c.teardown?.();
      if (r < warmup) continue;
      rates.get(c.name)!.push(n / (dt / 1e9));
      cpuRates.get(c.name)!.push(n / (cpu / 1e3));
      const t = totals.get(c.name)!;
      t.ops += n;
      t.ns += dt;
    }
    // No room for another round before the deadline: stop after at least one timed round.
    const left = (opts.deadline ?? Infinity) - performance.now();
    if (r >= warmup && r < warmup + runs - 1 && left < performance.now() - round0) runs = r - warmup + 1;
  }
  const out = new Map<string, AsyncStats>();
  for (const c of cands) {
    const rs = rates.get(c.name)!;
    const rate = median(rs);
    const t = totals.get(c.name)!;
    out.set(c.name, {
      ops: t.ops,
      seconds: t.ns / 1e9,
      opsPerSec: rate,
      nsPerOp: 1e9 / rate,
      runs,
      rates: rs,
      opsPerCpuSec: median(cpuRates.get(c.name)!),
      cpuRates: cpuRates.get(c.name)!,
    });
  }
  return out;
}

/** Stats of measureEachAsync: every timed rate (for the spread) and the median rate per CPU second of the main thread. */
export interface AsyncStats extends Stats {
  readonly rates: readonly number[];
  readonly opsPerCpuSec: number;
  readonly cpuRates: readonly number[];
}

let kept = 0;
/** Keeps a value alive so the JIT cannot drop the work that produced it. */
export function keep(v: unknown): void {
  if (v === kept) kept = 0;
  else if (typeof v === 'number') kept ^= v | 0;
}

/** Forces a full GC when node runs with --expose-gc (the runner always passes it). */
export function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
}

export function hasGc(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === 'function';
}

/** Heap, external and RSS in bytes, after a full GC when available. */
export function memory(): { rss: number; heapUsed: number; external: number; arrayBuffers: number } {
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
}

/** One table row: a label and figures by column key. */
export interface Row {
  readonly label: string;
  readonly [column: string]: string | number | boolean | undefined;
}

/** A column of a section's table. */
export interface Column {
  readonly key: string;
  readonly title: string;
  /** Digits after the decimal point (numbers are also grouped by thousands). */
  readonly digits?: number;
}

/** A table of figures with its baseline and the sentence that says what it means. */
export interface Section {
  readonly title: string;
  readonly columns: readonly Column[];
  readonly rows: readonly Row[];
  /**
   * The ratio column: `row[metric] / baseline[metric]` per group of rows (rows sharing `group`,
   * or all rows), the baseline being the row whose `baseline` flag is true.
   */
  readonly ratio?: { readonly metric: string; readonly title: string } | undefined;
  /** A target this section is judged against, and whether this run met it. */
  readonly target?: { readonly text: string; readonly met: boolean } | undefined;
  readonly interpretation: string;
  readonly notes?: readonly string[] | undefined;
}

/** The stored results of one bench script. */
export interface ResultFile {
  readonly name: string;
  readonly title: string;
  readonly intro: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly sections: Section[];
}

function fmt(v: string | number | boolean | undefined, digits = 0): string {
  if (v === undefined) return '–';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string') return v;
  if (!Number.isFinite(v)) return String(v);
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Ratios of each row against the baseline of its group. */
function ratios(s: Section): (number | undefined)[] {
  if (!s.ratio) return s.rows.map(() => undefined);
  const metric = s.ratio.metric;
  return s.rows.map((r) => {
    const base = s.rows.find((b) => b['baseline'] === true && b['group'] === r['group']);
    const a = r[metric];
    const b = base?.[metric];
    return typeof a === 'number' && typeof b === 'number' && b !== 0 ? a / b : undefined;
  });
}

/** A section as a Markdown table (ratio column last, baseline rows marked). */
export function markdownTable(s: Section): string {
  const cols = s.columns;
  const head = ['', ...cols.map((c) => c.title)];
  if (s.ratio) head.push(s.ratio.title);
  const rs = ratios(s);
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`];
  s.rows.forEach((r, i) => {
    const cells = [r['baseline'] === true ? `${r.label} (baseline)` : r.label, ...cols.map((c) => fmt(r[c.key], c.digits))];
    if (s.ratio) cells.push(rs[i] === undefined ? '–' : `${fmt(rs[i], 2)}×`);
    lines.push(`| ${cells.join(' | ')} |`);
  });
  return lines.join('\n');
}

/** The name of the running bench script: `book` for dist/bench/book.bench.js. */
export function benchName(): string {
  return basename(process.argv[1] ?? 'unknown')
    .replace(/\.bench\.(js|ts)$/, '')
    .replace(/\.(js|ts)$/, '');
}

function resultPath(name: string): string {
  return resolve(RESULTS_DIR, `${name}.json`);
}

/** Reads a result file, undefined when missing or unreadable. */
export function readResult(name: string): ResultFile | undefined {
  try {
    return JSON.parse(readFileSync(resultPath(name), 'utf8')) as ResultFile;
  } catch {
    return undefined;
  }
}

let current: ResultFile | undefined;

/**
 * Starts (or restarts) this script's result file. Sections recorded earlier by another run of the
 * same script are dropped, so a file always describes one run on one machine.
 */
export function begin(title: string, intro: string): void {
  current = { name: benchName(), title, intro, command: command(), machine: machine(), sections: [] };
  const m = current.machine;
  console.log(`# ${title}\n\n${m.date} · ${m.cpu} × ${m.cores} · Node ${m.node} · load ${m.load1} · \`${current.command}\`\n`);
}

/** Records one section's rows: updates bench/results/<name>.json and prints the table. */
export function record(meta: Omit<Section, 'rows'>, rows: readonly Row[]): void {
  if (!current) throw new Error('record() before begin()');
  const section: Section = { ...meta, rows };
  const i = current.sections.findIndex((s) => s.title === section.title);
  if (i >= 0) current.sections[i] = section;
  else current.sections.push(section);
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(resultPath(current.name), JSON.stringify(current, null, 2) + '\n');
  console.log(`## ${section.title}\n\n${markdownTable(section)}\n`);
  if (section.target) console.log(`Target: ${section.target.text} — ${section.target.met ? 'met' : 'NOT met'}\n`);
  console.log(`${section.interpretation}\n`);
  for (const n of section.notes ?? []) console.log(`- ${n}`);
  if (section.notes?.length) console.log('');
}

/** Bytes as MiB with one decimal. */
export function mib(bytes: number): number {
  return Math.round((bytes / 1024 ** 2) * 10) / 10;
}

/** A small seeded PRNG (mulberry32) so every run generates the same workload. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Sends `kind` to a bench's child process and waits for its answer, the message of the same kind
 * (`ready` is not sent: the child says it on its own once it is).
 */
export function askChild<R>(child: ChildProcess, kind: string): Promise<R> {
  return new Promise((resolve) => {
    const on = (m: { kind: string } & R): void => {
      if (m.kind !== kind) return;
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
    if (kind !== 'ready') child.send({ kind });
  });
}
