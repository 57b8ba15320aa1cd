/**
 * A probe of the main thread, preloaded into the service by the live fan-out bench (`LIVE_PROBE=1`:
 * `node --import dist/bench/ws/loop-probe.js bin/crossbook.js serve`), to say what makes the tail:
 * the event loop's delay (`monitorEventLoopDelay`, 1 ms resolution: how late a timer ran, so how
 * long the main thread was held by one task), the main thread's utilization, and V8's garbage
 * collections by kind (`PerformanceObserver` 'gc': count, total and longest pause), and the blocks of
 * 3 ms or more (count and summed ms, from the delay histogram). The first
 * SIGUSR2 starts a window; the next one appends the window's figures as one JSON line to
 * `LOOP_PROBE_OUT` and starts the next window. With `LOOP_PROBE_PROF` (a sampling interval, µs) each
 * window is also a CPU profile of the main thread, written beside it as `<out>.<n>.cpuprofile`
 * (`--cpu-prof` covers the whole process, start-up and close included). Bench-only: nothing in `src/`
 * loads it.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { constants, monitorEventLoopDelay, performance, PerformanceObserver, type EventLoopUtilization, type PerformanceEntry } from 'node:perf_hooks';

const out = process.env['LOOP_PROBE_OUT'];
const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

interface GcKind {
  count: number;
  totalMs: number;
  maxMs: number;
  /** Pauses of 2 ms or more. */
  over2: number;
}

let gc = new Map<string, GcKind>();
const RESOLUTION_MS = 1;
const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
let elu: EventLoopUtilization = performance.eventLoopUtilization();
let started = performance.now();

new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = KINDS[(e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
    const k = gc.get(kind) ?? { count: 0, totalMs: 0, maxMs: 0, over2: 0 };
    k.count++;
    k.totalMs += e.duration;
    k.maxMs = Math.max(k.maxMs, e.duration);
    if (e.duration >= 2) k.over2++;
    gc.set(kind, k);
  }
}).observe({ entryTypes: ['gc'] });

/**
 * The delay samples of `ms` or more this window, read off the histogram: how many (each is one task
 * that held the thread that long, a timer's lateness at 1 ms resolution) and their summed ms.
 */
function blocks(ms: number): { count: number; ms: number } {
  // A sample is the time between two runs of the probe's 1 ms timer: a task of `ms` reads as `ms` + 1.
  const ns = (ms + RESOLUTION_MS) * 1e6;
  if (delay.count === 0 || delay.max < ns) return { count: 0, ms: 0 };
  // The lowest percentile at or past `ms`: what lies above it are the blocks.
  let lo = 0;
  let hi = 100;
  for (let i = 0; i < 30; i++) {
    const mid = (lo + hi) / 2;
    if (delay.percentile(mid) >= ns) hi = mid;
    else lo = mid;
  }
  const count = Math.round((delay.count * (100 - hi)) / 100);
  let sum = 0;
  const steps = 50;
  for (let i = 0; i < steps; i++) sum += delay.percentile(hi + ((100 - hi) * (i + 0.5)) / steps);
  return { count, ms: Math.round(((count * sum) / steps / 1e6 - count * RESOLUTION_MS) * 100) / 100 };
}

/** The window's figures; starts the next window. */
function window(): Record<string, unknown> {
  const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
  const secs = (performance.now() - started) / 1000;
  const figures = {
    secs: Math.round(secs * 10) / 10,
    loopDelayMs: {
      p50: ms(delay.percentile(50)),
      p90: ms(delay.percentile(90)),
      p99: ms(delay.percentile(99)),
      p999: ms(delay.percentile(99.9)),
      max: ms(delay.max),
    },
    /** Tasks of 3 ms or more (how many, their ms): the main-thread blocks that make the fan-out's tail. */
    blocks3: blocks(3),
    utilization: Math.round(performance.eventLoopUtilization(elu).utilization * 1000) / 1000,
    gc: Object.fromEntries(
      [...gc].map(([kind, k]) => [
        kind,
        {
          perSec: Math.round((k.count / secs) * 10) / 10,
          totalMsPerSec: Math.round((k.totalMs / secs) * 100) / 100,
          maxMs: Math.round(k.maxMs * 100) / 100,
          over2: k.over2,
        },
      ]),
    ),
  };
  delay.reset();
  gc = new Map();
  elu = performance.eventLoopUtilization();
  started = performance.now();
  return figures;
}

const profInterval = Number(process.env['LOOP_PROBE_PROF'] ?? 0);
/**
 * LOOP_PROBE_HEAP=<bytes>: each window is also a sampling heap profile (one sample per that many bytes
 * allocated) of what outlived a scavenge: objects collected young leave it, those a full collection
 * took stay in, so it names what is promoted to old space and makes the full collections.
 */
const heapInterval = Number(process.env['LOOP_PROBE_HEAP'] ?? 0);
const session = profInterval > 0 || heapInterval > 0 ? new Session() : undefined;
let windows = 0;

/** Stops the window's profiles (if any) and writes them, then starts the next one's. */
function profile(): void {
  if (!session) return;
  const n = windows;
  if (profInterval > 0) {
    if (n > 0)
      session.post('Profiler.stop', (err, res) => {
        if (!err && out) writeFileSync(`${out}.${n}.cpuprofile`, JSON.stringify(res.profile));
      });
    session.post('Profiler.start');
  }
  if (heapInterval > 0) {
    if (n > 0)
      session.post('HeapProfiler.stopSampling', (err, res) => {
        if (!err && out) writeFileSync(`${out}.${n}.heapprofile`, JSON.stringify(res.profile));
      });
    // Not in @types/node's parameter type (V8 11's protocol has them): keep what a full collection took, drop what died young.
    session.post('HeapProfiler.startSampling', {
      samplingInterval: heapInterval,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: false,
    } as { samplingInterval: number });
  }
}

if (session) {
  session.connect();
  if (profInterval > 0) {
    session.post('Profiler.enable');
    session.post('Profiler.setSamplingInterval', { interval: profInterval });
  }
  if (heapInterval > 0) session.post('HeapProfiler.enable');
}
delay.enable();
process.on('SIGUSR2', () => {
  const figures = window();
  if (windows > 0 && out) appendFileSync(out, `${JSON.stringify(figures)}\n`);
  profile();
  windows++;
});
