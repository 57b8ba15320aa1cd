/**
 * CPU priority of the process's background threads. The event loop is what clients wait on: a
 * WebSocket update waits for the main thread's turn, so a background thread (the history index's)
 * that wakes up beside it on a 2-core host takes the core the main thread was about to run on, and
 * the update waits a time slice (BENCHMARKS.md "WebSocket fan-out", issue 34). A background thread
 * runs at a higher nice value: with idle cores it runs as fast as before; when the cores are
 * contended, the scheduler gives the main thread its turn first.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The nice value of the service's background threads (0 is the main thread's; 19 the lowest priority). */
export const BACKGROUND_NICE = 10;

/** The calling thread's kernel thread id (Linux: /proc/thread-self), or undefined where there is none. */
export function currentThreadId(): number | undefined {
  try {
    const tid = Number(/\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]);
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Lowers the calling thread's CPU priority to `nice` (only the thread: Linux's setpriority takes a
 * thread id; a process-wide nice would lower the event loop too). Never raises it (an unprivileged
 * process cannot take it back). Returns the nice value the thread runs at, or undefined where the
 * platform has no per-thread priority (it then runs as it was).
 */
export function lowerThreadPriority(nice: number): number | undefined {
  const tid = currentThreadId();
  if (tid === undefined) return undefined;
  try {
    if (getPriority(tid) < nice) setPriority(tid, nice);
    return getPriority(tid);
  } catch {
    return undefined;
  }
}
