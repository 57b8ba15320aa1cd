import type { NormalizedEvent, VenueLabel } from '../core/types.js';

/**
 * Where a feed runtime hands what it receives, before it parses it (src/venues/common/runtime.ts).
 * One optional sink in the feed context: absent, the runtime does nothing extra per frame.
 */
export interface CaptureSink {
  /**
   * The writer of one venue's records, for a writer that does not put them through the live frame
   * path itself (a test, `crossbook capture import`): whatever reads the records as they are
   * appended (the history index) maps them as a replay of the capture would.
   */
  venue(label: VenueLabel): VenueCapture;
  /**
   * The writer of one venue's records for a feed runtime, which maps each record through the live
   * frame path right after appending it and hands each event it makes with the record's seq
   * (`mapped`): the history index takes those events instead of mapping the record again. The
   * runtime asks once, when it starts.
   */
  mapping(label: VenueLabel): MappingCapture;
}

/** One venue's capture: each call appends one record, in the order of the calls, and answers its sequence number (0: not kept). */
export interface VenueCapture {
  /**
   * A WebSocket message as received, on connection `conn`, at the runtime's receive stamp; `bytes`,
   * when the socket gave them: the bytes `text` was decoded from (stored as they are when ASCII).
   */
  frame(text: string, conn: number, t: number, bytes?: Uint8Array): number;
  /** A REST document (or text) the runtime pushes through the frame path. */
  doc(data: unknown, t: number): number;
  /** An event built outside the frame path (`FeedRuntime.emit`) or a `feed` event of the runtime. */
  event(e: NormalizedEvent): number;
  /** The mapper was reset on a close of `conn`: all of it, or only `instruments`. */
  reset(conn: number, instruments?: readonly string[]): number;
  /** The feed session began with a fresh mapper made with `options` (its `replayOptions`). */
  session(options: Readonly<Record<string, unknown>>): number;
}

/** A feed runtime's writer of one venue (`CaptureSink.mapping`): its records' events come through `mapped`. */
export interface MappingCapture extends VenueCapture {
  /**
   * An event the live path made of record `seq` (what a replay of that record gives), as it goes
   * out: handed to the capture's tap (the history index), if any. 0: its record was not kept.
   */
  mapped(seq: number, e: NormalizedEvent): void;
}
