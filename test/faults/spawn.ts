import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface Report {
  ready?: boolean;
  url?: string;
  key?: string;
  durableSeq?: number;
  markets?: number;
  /** The demo key's monthly request count, durable when reported. */
  quota?: number;
  writeErrors?: number;
}

export interface Child {
  readonly child: ChildProcess;
  readonly reports: Report[];
  /** What the child wrote to stderr (also passed through). */
  readonly stderr: string[];
  /**
   * The first report matching `pred` (one already received included). Rejects when the child exits
   * before sending one, with its exit status and the end of its stderr, and after `ms` only when a
   * caller gives it: otherwise the test's own timeout is the failure guard. A start-up takes 10–12 s
   * here on a quiet machine (tsx compiling the sources for the child's user) and more under a full
   * suite, so a fixed wait shorter than the test's failed on a loaded CI run ("did not report in time").
   */
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
  const waiters: { pred: (r: Report) => boolean; resolve: (r: Report) => void; reject: (e: Error) => void }[] = [];
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = `child exited (${signal ?? `code ${code}`}) before the report awaited; stderr ends: ${stderr.join('').slice(-2000)}`;
    for (const w of waiters.splice(0)) w.reject(new Error(exited));
  });
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
  const next = (pred: (r: Report) => boolean, ms?: number): Promise<Report> =>
    new Promise((resolve, reject) => {
      const hit = reports.find(pred);
      if (hit) return resolve(hit);
      if (exited !== undefined) return reject(new Error(exited));
      const t = ms === undefined ? undefined : setTimeout(() => reject(new Error(`child did not report within ${ms} ms`)), ms);
      waiters.push({ pred, resolve: (r) => (clearTimeout(t), resolve(r)), reject: (e) => (clearTimeout(t), reject(e)) });
    });
  return { child, reports, stderr, next };
}
