import type { NormalizedEvent, VenueLabel } from '../core/types.js';

/**
 * Where a feed runtime hands what it receives, before it parses it (src/venues/common/runtime.ts).
 * One optional sink in the feed context: absent, the runtime does nothing extra per frame.
 */
export interface CaptureSink {
  /** The writer of one venue's records (the runtime asks once, when it starts). */
  venue(label: VenueLabel): VenueCapture;
}

/** One venue's capture: each call appends one record, in the order of the calls. */
export interface VenueCapture {
  /**
   * A WebSocket message as received, on connection `conn`, at the runtime's receive stamp; `bytes`,
   * when the socket gave them: the bytes `text` was decoded from (stored as they are when ASCII).
   */
  frame(text: string, conn: number, t: number, bytes?: Uint8Array): void;
  /** A REST document (or text) the runtime pushes through the frame path. */
  doc(data: unknown, t: number): void;
  /** An event built outside the frame path (`FeedRuntime.emit`) or a `feed` event of the runtime. */
  event(e: NormalizedEvent): void;
  /** The mapper was reset on a close of `conn`: all of it, or only `instruments`. */
  reset(conn: number, instruments?: readonly string[]): void;
  /** The feed session began with a fresh mapper made with `options` (its `replayOptions`). */
  session(options: Readonly<Record<string, unknown>>): void;
}
