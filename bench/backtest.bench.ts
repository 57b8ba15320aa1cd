/**
 * Backtest throughput: one recording (`serve --record`, argv[2]) replayed twice in one process,
 * (a) as a plain pipeline replay (src/replay/run.ts) and (b) as a backtest with a four-latency sweep
 * (src/backtest/run.ts), each timed from the first item read to the report written, with peak RSS
 * and heap. The ratio (b)/(a) is what the taker and the report cost over the replay; events per
 * second of (b) say how long an hour of capture takes. Prints one markdown row per run.
 *
 *   node --expose-gc dist/bench/backtest.bench.js RECORDING.ndjson
 *   node --expose-gc dist/bench/backtest.bench.js --data-dir DIR FROM TO    (DIR's capture log, from its start to TO; trading from FROM, ms)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { backtest } from '../src/backtest/run.js';
import { loadConfig } from '../src/config/load.js';
import { log, setLogLevel } from '../src/core/log.js';
import { captureBatches } from '../src/cli/replay.js';
import { itemsBefore, itemTime, readItemsFile } from '../src/replay/input.js';
import { replay, type ReplayInput } from '../src/replay/run.js';

const file = process.argv[2];
if (!file) throw new Error('usage: node dist/bench/backtest.bench.js RECORDING.ndjson | --data-dir DIR FROM TO');
/** The capture log of a data directory instead of a recording. */
const capture = file === '--data-dir' ? { dir: process.argv[3]!, from: Number(process.argv[4]), to: Number(process.argv[5]) } : undefined;
const config = loadConfig({ env: {}, overrides: capture ? { dataDir: capture.dir } : {} });
setLogLevel('warn');

/** The first and last times of the recording, and its span. */
async function span(): Promise<{ from: number; to: number; items: number }> {
  let from = Infinity;
  let to = 0;
  let items = 0;
  for await (const it of readItemsFile(file!)) {
    const t = it.type === 'event' ? it.event.localTimestamp : it.at;
    if (t < from) from = t;
    if (t > to) to = t;
    items++;
  }
  return { from, to, items };
}

/** Peak RSS and heap while `fn` runs, sampled every 50 ms (wall time: this is the bench, not the engine). */
async function measure<T>(fn: () => Promise<T>): Promise<{ r: T; sec: number; cpuSec: number; rssMiB: number; heapMiB: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  let rss = 0;
  let heap = 0;
  const sample = (): void => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
  };
  const timer = setInterval(sample, 50);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    const r = await fn();
    sample();
    const c = process.cpuUsage(c0);
    return { r, sec: (performance.now() - t0) / 1000, cpuSec: (c.user + c.system) / 1e6, rssMiB: rss / 2 ** 20, heapMiB: heap / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

const quiet = log.child({});
const w = capture ? { from: capture.from, to: capture.to, items: 0 } : await span();
const minutes = (w.to - w.from) / 60_000;
const items = (): ReplayInput => (capture ? captureBatches(config, { from: 0, to: w.to }, quiet) : readItemsFile(file));
const a = await measure(() => replay({ config, items: itemsBefore(items(), (it) => itemTime(it) > w.to), log: quiet }));
const out = mkdtempSync(join(tmpdir(), 'crossbook-bench-backtest-'));
const b = await measure(() =>
  backtest({
    config,
    items: items(),
    from: w.from,
    to: w.to,
    latencies: [0, 100, 250, 1000],
    strategy: 'arb',
    maxUsd: 500,
    minRoi: 0,
    fees: 'venue-schedule',
    out,
    log: quiet,
  }),
);
rmSync(out, { recursive: true, force: true });
const events = a.r.events;
process.stdout.write(
  `${new Date().toISOString()} ${cpus()[0]?.model} (${cpus().length} cores), Node ${process.version}, load ${loadavg()[0]!.toFixed(2)}; ${capture ? `capture log of ${capture.dir}` : file}: ${w.items} items, ${events} events over ${minutes.toFixed(1)} min\n`,
);
process.stdout.write(
  '| run | wall s | CPU s | events/s (wall) | recorded min per wall s | peak RSS MiB | peak heap MiB | vs (a) |\n|---|---|---|---|---|---|---|---|\n',
);
for (const [name, m] of [
  ['(a) plain replay', a],
  ['(b) backtest, 4 latencies', b],
] as const)
  process.stdout.write(
    `| ${name} | ${m.sec.toFixed(2)} | ${m.cpuSec.toFixed(2)} | ${Math.round(events / m.sec).toLocaleString('en-US')} | ${(minutes / m.sec).toFixed(2)} | ${m.rssMiB.toFixed(0)} | ${m.heapMiB.toFixed(0)} | ${(m.sec / a.sec).toFixed(2)}× |\n`,
  );
process.stdout.write(`backtest: ${b.r.lines.join(' | ')}\n`);
