/**
 * The simulator in its own process, for the benches that drive `crossbook sim` and `crossbook
 * serve` as a user runs them (bench/ws/live.bench.ts, bench/replay.bench.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot } from './lib.js';

/** A simulated venue's endpoints, as `crossbook sim` prints them. */
export interface SimEndpoints {
  rest: string;
  ws?: string;
  extra?: Record<string, string>;
}

/** Lines of a child's stdout until `done` says enough, or the child exits. */
export async function readUntil(child: ChildProcess, done: (lines: string[]) => boolean): Promise<string[]> {
  const lines: string[] = [];
  const rl = createInterface({ input: child.stdout! });
  return new Promise((resolve, reject) => {
    rl.on('line', (l) => {
      lines.push(l);
      if (done(lines)) {
        rl.removeAllListeners('line');
        resolve(lines);
      }
    });
    child.once('exit', (c) => reject(new Error(`${String(child.spawnargs[1])} exited ${c}: ${lines.join('\n')}`)));
  });
}

/** `crossbook sim --base-port basePort --rate rate`, added to `children`: each venue's endpoints from its banner. */
export async function startSim(children: ChildProcess[], rate: number, basePort: number): Promise<Record<string, SimEndpoints>> {
  const bin = join(repoRoot(), 'bin/crossbook.js');
  const sim = spawn(process.execPath, [bin, 'sim', '--base-port', String(basePort), '--rate', String(rate)], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(sim);
  const lines = await readUntil(sim, (ls) => ls.filter((l) => /^\s+venue_/.test(l)).length === 8);
  const out: Record<string, SimEndpoints> = {};
  for (const l of lines) {
    const m = /^\s+(venue_\w) \(\w+\): rest (\S+)(?:\s+ws (\S+))?(?:\s+(\{.*\}))?/.exec(l);
    if (m) out[m[1]!] = { rest: m[2]!, ...(m[3] ? { ws: m[3] } : {}), ...(m[4] ? { extra: JSON.parse(m[4]) as Record<string, string> } : {}) };
  }
  return out;
}
