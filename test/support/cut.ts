import { Recording } from '../../src/replay/input.js';
import { bookLines, type BookLine } from '../../src/replay/run.js';
import type { Service } from '../../src/service.js';
import type { OpportunityRecord } from '../../src/signals/lifecycle/record.js';
import type { OpenRecord } from '../../src/signals/lifecycle/tracker.js';

/** A live run cut right after one of its flushes: the recording so far, its opportunities and books. */
export interface Cut {
  /** The flush's time. */
  readonly at: number;
  readonly lines: readonly string[];
  readonly closed: readonly OpportunityRecord[];
  readonly open: readonly OpenRecord[];
  readonly books: readonly BookLine[];
}

/** A recorder that, once asked, cuts the live run right after the next flush (nothing runs between). */
export class CuttingRecording extends Recording {
  private want: ((cut: Cut) => void) | undefined;
  private svc: Service | undefined;
  readonly closed: OpportunityRecord[] = [];

  attach(svc: Service): void {
    this.svc = svc;
    svc.lifecycle.events$.subscribe((e) => e.type === 'expired' && this.closed.push(e.record));
  }

  cutAfterNextFlush(): Promise<Cut> {
    return new Promise((resolve) => (this.want = resolve));
  }

  override flush(at: number): void {
    super.flush(at);
    const done = this.want;
    if (!done || !this.svc) return;
    this.want = undefined;
    const svc = this.svc;
    // The flush runs synchronously after this call; a microtask runs right after it, before any timer or I/O.
    queueMicrotask(() => done({ at, lines: [...this.lines], closed: [...this.closed], open: svc.lifecycle.openRecords(), books: bookLines(svc.state) }));
  }
}
