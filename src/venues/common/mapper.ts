import type { MarketUpsert, NormalizedEvent, VenueLabel } from '../../core/types.js';
import type { FeedStats } from './stats.js';

/**
 * A protocol's mapper: raw frame (already JSON-parsed) → zero or more normalized events.
 * Pure apart from the explicit per-connection state a venue forces on us (Kalshi's relative book
 * deltas, sequence numbers), which lives in the mapper object and is cleared by `reset()` on
 * every disconnect. Malformed frames and unknown variants yield nothing and are counted in `stats`.
 */
export interface Mapper {
  readonly venue: VenueLabel;
  readonly stats: FeedStats;
  map(raw: unknown, localTimestamp: number): Iterable<NormalizedEvent>;
  /**
   * Optional hot path: maps a text frame without JSON.parse when it is one the mapper reads in
   * place (Kalshi's `orderbook_delta`), handing each event to `emit`. Returns false, having changed
   * nothing, for any other frame or any frame the common case does not cover; the frame path
   * then parses it and calls `map`, which judges it. True means exactly what `map` would have done
   * with the parsed frame. Such a frame is never one a protocol's `inspect` hook acts on.
   */
  mapText?(text: string, localTimestamp: number, emit: (e: NormalizedEvent) => void): boolean;
  /**
   * Optional: whether a text frame is one of the protocol's control words rather than JSON
   * (Polymarket's `PONG`). The frame path counts such a frame as ignored, never as malformed. It
   * lives on the mapper, not the live session, so every path a protocol's frames take (the live
   * feed, a replay of the capture, `crossbook normalize`) skips the same frames.
   */
  isControl?(text: string): boolean;
  /**
   * Optional: the options of its protocol's `createMapper` that make a mapper map as this one does,
   * when the live feed builds it differently from the default (Polymarket with the data-api: a
   * `last_trade_price` is a last price, not a trade). The feed runtime records them in the capture
   * when its session starts, and a replay makes its mapper with them.
   */
  readonly replayOptions?: Readonly<Record<string, unknown>>;
  /**
   * Optional: a catalog upsert a protocol built outside the frame path (a REST walk's), handed over
   * by the frame path before it is delivered, so the mapper of a replay, which sees only the
   * recorded upsert, learns what the live one did (Polymarket's token table).
   */
  learn?(u: MarketUpsert): void;
  /** Forget all per-connection state (books, seq) after a disconnect. */
  reset(): void;
  /** Like reset(), for the instruments of one connection of several (a feed's scoped reset; a replay repeats it). */
  resetInstruments?(instruments: Iterable<string>): void;
  /** Frames ignored or mapped with less than full knowledge, by reason (`crossbook normalize` reports them). */
  reasons?(): Record<string, number>;
}
