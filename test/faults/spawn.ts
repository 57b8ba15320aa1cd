import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface Report {
  ready?: boolean;
  url?: string;
  key?: string;
  durableSeq?: number;
  markets?: number;
  writeErrors?: number;
}

export interface Child {
  readonly child: ChildProcess;
  readonly reports: Report[];
  /** What the child wrote to stderr (also passed through). */
  readonly stderr: string[];
  next(pred: (r: Report) => boolean, ms?: number): Promise<Report>;
}

/**
 * Starts test/faults/child.ts (a whole service) on `dir` in a child process, optionally under a
 * command prefix (`prlimit --fsize=…` for the full-disk test), and collects its JSON reports.
 */
export function startChild(dir: string, prefix: readonly string[] = []): Child {
  const args = [process.execPath, '--import', 'tsx', join(__dirname, 'child.ts'), dir];
  const child = spawn(prefix[0] ?? args[0]!, [...prefix.slice(1), ...(prefix.length ? args : args.slice(1))], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr!.on('data', (d: Buffer) => {
    stderr.push(d.toString());
    process.stderr.write(d);
  });
  const reports: Report[] = [];
  const waiters: { pred: (r: Report) => boolean; resolve: (r: Report) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => {
    let r: Report;
    try {
      r = JSON.parse(l) as Report;
    } catch {
      return;
    }
    reports.push(r);
    for (const w of [...waiters])
      if (w.pred(r)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(r);
      }
  });
  const next = (pred: (r: Report) => boolean, ms = 20_000): Promise<Report> =>
    new Promise((resolve, reject) => {
      const hit = reports.find(pred);
      if (hit) return resolve(hit);
      const t = setTimeout(() => reject(new Error('child did not report in time')), ms);
      waiters.push({ pred, resolve: (r) => (clearTimeout(t), resolve(r)) });
    });
  return { child, reports, stderr, next };
}
