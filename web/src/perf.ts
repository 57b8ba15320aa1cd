/**
 * Rendering time per board update, read by the browser test (window.__crossbookPerf): for each
 * commit, the milliseconds from the first stream message not yet drawn to the DOM committed, and
 * the rows drawn; long tasks (over 50 ms, the browser's own measure of a dropped frame's cause).
 */
export interface PerfSample {
  readonly ms: number;
  readonly rows: number;
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

  record(ms: number, rows: number): void {
    if (this.samples.length < 100_000) this.samples.push({ ms, rows });
  }

  reset(): void {
    this.samples.length = 0;
    this.longTasks = 0;
  }
}

export const perf = new Perf();
(globalThis as unknown as { __crossbookPerf: Perf }).__crossbookPerf = perf;
