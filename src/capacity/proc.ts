import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from this file in src/ (tests) or dist/src/ (built). */
export function projectRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, here.includes('/dist/') ? '../../..' : '../..');
}

/** The built CLI entry; `crossbook bench` runs the service and the simulator the way a user does. */
export const cli = (): string => join(projectRoot(), 'bin', 'crossbook.js');

/** Clock ticks per second of /proc's CPU times, asked once on first use (not at import). */
let clkTck = 0;
const ticksPerSecond = (): number => (clkTck ||= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100);

/** utime + stime of a process, seconds (Linux /proc). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / ticksPerSecond();
}

/** A resident-set figure of a process from /proc/<pid>/status, MiB (0 when the field is missing). */
export function rssMiB(pid: number, field: 'VmRSS' | 'RssAnon' = 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** CPU and memory of a process the bench did not instrument (the simulator, nats-server). */
export interface CpuRss {
  /** CPU used since the previous sample, % of one core. */
  readonly cpuPct: number;
  readonly rssMiB: number;
}

/** Samples `pid`: each call gives the CPU since the previous call (or since this was made) and RSS now. */
export function processSampler(pid: number): () => CpuRss {
  let lastCpu = cpuSeconds(pid);
  let lastAt = performance.now();
  return () => {
    const cpu = cpuSeconds(pid);
    const now = performance.now();
    const s = { cpuPct: ((cpu - lastCpu) / Math.max(1e-3, (now - lastAt) / 1000)) * 100, rssMiB: rssMiB(pid) };
    lastCpu = cpu;
    lastAt = now;
    return s;
  };
}
