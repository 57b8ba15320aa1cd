import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { currentThreadId } from '../../src/core/priority.js';

/** A thread's nice value as the kernel reports it (/proc/self/task/<tid>/stat, field 19). */
function niceOf(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** Runs lowerThreadPriority(n) for each n in turn on a worker thread; its thread id and what each call returned, read while it still runs. */
function onWorker(nices: number[]): Promise<{ tid: number; got: (number | undefined)[]; kernel: number; worker: Worker }> {
  const api = new URL('./esm/api/index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx'))).href;
  const target = new URL('../../src/core/priority.ts', import.meta.url).href;
  const script = `const { parentPort } = await import('node:worker_threads');
    (await import(${JSON.stringify(api)})).register();
    const p = await import(${JSON.stringify(target)});
    const got = ${JSON.stringify(nices)}.map((n) => p.lowerThreadPriority(n));
    parentPort.postMessage({ tid: p.currentThreadId(), got });
    parentPort.once('message', () => process.exit(0));`;
  const worker = new Worker(script, { eval: true });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (m: { tid: number; got: (number | undefined)[] }) => resolve({ ...m, kernel: niceOf(m.tid), worker }));
  });
}

describe.runIf(process.platform === 'linux')('background thread priority', () => {
  it('lowers only the calling thread, to the nice value asked, and never raises it again', async () => {
    const main = currentThreadId()!;
    const before = niceOf(main);
    const r = await onWorker([7, 3]);
    try {
      expect(r.tid).not.toBe(main);
      // The second call asks for a higher priority than the thread has: it stays at 7.
      expect(r.got).toEqual([Math.max(7, before), Math.max(7, before)]);
      expect(r.kernel).toBe(Math.max(7, before));
      // The thread that started it runs as it did.
      expect(niceOf(main)).toBe(before);
    } finally {
      r.worker.postMessage('end');
      await new Promise((resolve) => r.worker.once('exit', resolve));
    }
  });

  it('names the calling thread: the main thread of a process is the process id', () => {
    // Under vitest's forks pool the test runs on its process's main thread; under the threads pool on a worker.
    const tid = currentThreadId();
    expect(tid).toBeGreaterThan(0);
    expect(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')).toContain(`${tid} (`);
  });
});
