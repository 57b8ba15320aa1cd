import { interval, Subscription, timer } from 'rxjs';
import type { Capture, CaptureSettings } from '../src/capture/index.js';
import type { Clock } from '../src/core/clock.js';
import type { HistoryIndex } from '../src/history/index.js';
import type { Turn } from '../src/pipeline/turn.js';
import type { BookStore } from '../src/state/books.js';

/** How often the capture's buffers are sealed into blocks and written. */
export const CAPTURE_WRITE_MS = 1000;
/** How often retention looks for whole segments to drop (the first run waits a minute, past the start's load). */
export const CAPTURE_PRUNE_MS = 600_000;
const FIRST_PRUNE_MS = 60_000;

/**
 * The capture flow: a flush marker in the log each time the live per-turn flush runs (its flusher
 * is added first, so it marks the flush the fan-out and arb/EV flushers are about to do), the
 * writer's buffers written every second (and indexed for `as_of` reads), the books checkpointed every `checkpointIntervalMs`, and retention. All timers on the clock given; nothing
 * runs before this is subscribed, and unsubscribing stops it (the service closes the capture,
 * writing what is left, after its feeds stop).
 */
export function captureFlow(capture: Capture, settings: CaptureSettings, turn: Turn, clock: Clock, books?: BookStore, history?: HistoryIndex): Subscription {
  const sub = new Subscription();
  if (books) sub.add(interval(settings.checkpointIntervalMs, clock.scheduler).subscribe(() => void capture.checkpoint(books.entries())));
  sub.add(turn.add(() => capture.markFlush(clock.now())));
  // With a history index, each write is followed by indexing what it wrote (HistoryIndex.sync).
  sub.add(interval(CAPTURE_WRITE_MS, clock.scheduler).subscribe(() => void (history ? history.sync() : capture.flush())));
  sub.add(timer(FIRST_PRUNE_MS, CAPTURE_PRUNE_MS, clock.scheduler).subscribe(() => capture.prune(settings.retentionMs, settings.retentionBytes)));
  return sub;
}
