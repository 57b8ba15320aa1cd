import { interval, Subscription, timer } from 'rxjs';
import type { Capture, CaptureSettings } from '../src/capture/index.js';
import type { Clock } from '../src/core/clock.js';
import type { HistoryClient } from '../src/history/client.js';
import type { BookStore } from '../src/state/books.js';

/** How often the capture's buffers are sealed into blocks and written. */
export const CAPTURE_WRITE_MS = 1000;
/** How often retention looks for whole segments to drop (the first run waits a minute, past the start's load). */
export const CAPTURE_PRUNE_MS = 600_000;
const FIRST_PRUNE_MS = 60_000;

/**
 * The capture flow: the writer's buffers written every second (and, with a history index, indexed
 * for `as_of` reads and, with capture.replayCache, kept as /replay lines on its thread), the books checkpointed every `checkpointIntervalMs`, and retention. (The flush
 * markers come from the turn's schedule, the one place that tells where the live turn flushed:
 * `flushRecorder`.) All timers on the clock given; nothing runs before this is subscribed, and
 * unsubscribing stops it (the service closes the capture, writing what is left, after its feeds stop).
 */
export function captureFlow(capture: Capture, settings: CaptureSettings, clock: Clock, books?: BookStore, history?: HistoryClient): Subscription {
  const sub = new Subscription();
  if (books) sub.add(interval(settings.checkpointIntervalMs, clock.scheduler).subscribe(() => void capture.checkpoint(books.entries())));
  // With a history index, each write is followed by indexing what it wrote (HistoryClient.sync; on
  // its thread, which also writes the normalized cache behind /replay from the same events).
  const write = (): Promise<void> => (history ? history.sync() : capture.flush());
  sub.add(interval(CAPTURE_WRITE_MS, clock.scheduler).subscribe(() => void write().catch(() => undefined)));
  sub.add(timer(FIRST_PRUNE_MS, CAPTURE_PRUNE_MS, clock.scheduler).subscribe(() => capture.prune(settings.retentionMs, settings.retentionBytes)));
  return sub;
}

/**
 * The one recorder of where the live turn flushes (handed to `clockSchedule`): a flush marker in the
 * capture log, then `also` (a replay recorder's tap). Undefined when there is nothing to tell.
 */
export function flushRecorder(capture: Capture | undefined, also?: (at: number) => void): ((at: number) => void) | undefined {
  if (capture === undefined) return also;
  if (also === undefined) return (at) => capture.markFlush(at);
  return (at) => {
    capture.markFlush(at);
    also(at);
  };
}
