/**
 * Rendering time per board update, read by the browser test (window.__crossbookPerf): for each
 * commit, its render time, the wait from its first stream message, the rows and messages it drew;
 * long tasks (over 50 ms, the browser's own measure of a dropped frame's cause).
 */
export interface PerfSample {
  /** Render and commit of one update (Preact diff + DOM writes), ms. */
  readonly ms: number;
  /** From the first message of the update to its commit (includes the wait for the frame), ms. */
  readonly latency: number;
  /** Rows drawn. */
  readonly rows: number;
  /** Stream messages drawn by this update. */
  readonly messages: number;
}

class Perf {
  readonly samples: PerfSample[] = [];
  longTasks = 0;

  constructor() {
    try {
      new PerformanceObserver((l) => (this.longTasks += l.getEntries().length)).observe({ type: 'longtask', buffered: false });
    } catch {
      /* no long-task timing in this browser */
    }
  }

  record(s: PerfSample): void {
    if (this.samples.length < 100_000) this.samples.push(s);
  }

  reset(): void {
    this.samples.length = 0;
    this.longTasks = 0;
  }
}

export const perf = new Perf();
(globalThis as unknown as { __crossbookPerf: Perf }).__crossbookPerf = perf;
