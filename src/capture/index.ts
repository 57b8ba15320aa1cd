/**
 * The capture log: every frame each feed receives, kept compressed in `DATA_DIR/capture/` for
 * replay. `Capture` is the writer every feed runtime appends to (`CaptureSink`); `CaptureStore`
 * owns the storage layout (segments per venue per hour, append, range read, pruning); `read` and
 * `readBatches` give a window's records in receive order; `ReplayFeed` / `replayItems` turn them
 * back into normalized events through the live frame path and mappers.
 */
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { CaptureStatus } from '../server/routes/status.js';
import { Capture } from './capture.js';
import { CaptureStore, type StoreOptions } from './store.js';

export { Capture, type CaptureOptions, type CaptureStats, type CaptureTap } from './capture.js';
export { checkpointOf, type Checkpoint, type CheckpointBook } from './checkpoint.js';
export { CaptureCorruptError, CAPTURE_KINDS, FLUSH_STREAM, type CaptureKind, type CaptureRecord } from './record.js';
export { read, readBatches, type ReadRange } from './reader.js';
export { ReplayFeed, replayItems, type ReplayItem } from './replay.js';
export type { CaptureSink, MappingCapture, VenueCapture } from './sink.js';
export { CaptureDiskFullError, CaptureStore, HOUR_MS, type SegmentInfo, type StoreOptions } from './store.js';

/** Settings of the capture as the configuration gives them (defaults when the key is absent). */
export interface CaptureSettings {
  readonly enabled: boolean;
  readonly retentionMs: number;
  readonly retentionBytes: number;
  readonly checkpointIntervalMs: number;
  /** Whether the history index behind `as_of` reads follows the capture. */
  readonly history: boolean;
  /** How long the history index may take at shutdown to catch up and write its open slice (past it: it stops, an unwritten slice dropped). */
  readonly historyCloseMs: number;
  /** How long an `as_of` read waits for the history index to reach its moment (past it: 503 `as_of.index_behind`; 0: no wait). */
  readonly asOfWaitMs: number;
  /** Whether the normalized cache behind GET /replay follows the capture (off: every window is mapped from the frames). */
  readonly replayCache: boolean;
}

/** Defaults that fit a laptop: a week, at most 10 GiB. */
export function captureSettings(config: Config): CaptureSettings {
  const c = config.capture;
  return {
    enabled: c?.enabled ?? true,
    retentionMs: (c?.retention.days ?? 7) * 86_400_000,
    retentionBytes: c?.retention.bytes ?? 10 * 1024 ** 3,
    checkpointIntervalMs: c?.checkpointIntervalMs ?? 300_000,
    history: c?.history ?? true,
    historyCloseMs: c?.historyCloseMs ?? 10_000,
    asOfWaitMs: c?.asOfWaitMs ?? 5_000,
    // On: it is written on the history index's thread from the events that maps anyway (BENCHMARKS.md "Replay from the capture").
    replayCache: c?.replayCache ?? true,
  };
}

/** The capture directory of a data directory. */
export function captureDir(dataDir: string): string {
  return join(dataDir, 'capture');
}

/** Opens the capture writer on `dataDir/capture` (undefined when the configuration turns capture off). */
export function openCapture(config: Config, dataDir: string, clock: Clock, log: Logger, store: StoreOptions = {}): Capture | undefined {
  if (!captureSettings(config).enabled) return undefined;
  return new Capture(new CaptureStore(captureDir(dataDir), store), { clock, log: log.child({ component: 'capture' }) });
}

/** The /status figures of a capture. */
export function captureStatus(capture: Capture): () => CaptureStatus {
  return () => {
    const s = capture.stats;
    return { status: s.paused ? 'paused' : 'ok', bytes: s.bytes, lag: s.pending, drops: s.drops, reason: s.reason ?? null };
  };
}
