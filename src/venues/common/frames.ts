import { Observable, type OperatorFunction } from 'rxjs';
import type { FeedEvent, MarketUpsert, NormalizedEvent, VenueLabel } from '../../core/types.js';
import type { Mapper } from './mapper.js';
import type { FeedStats } from './stats.js';
import { upsertHash } from './util.js';

/** A raw frame as it arrives: text (or an already-parsed value) and our receive time. */
export interface RawFrame {
  readonly data: string | unknown;
  readonly localTimestamp: number;
}

/** Parses one text frame; a frame that is not JSON (truncated, garbage) is counted and dropped. */
export function parseFrame(text: string, stats: FeedStats): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    stats.malformedFrame('json', 'frame is not valid JSON', text);
    return undefined;
  }
}

/** Where the frame path delivers events: an RxJS Subscriber fits, so no wrapper sits on the hot path. */
export interface EventSink {
  next(e: NormalizedEvent): void;
}

/** What a protocol may watch on the frame path; every hook is optional and off the path when absent. */
export interface FrameHooks {
  /** Sees each parsed frame before the mapper (Kalshi: a venue `error` answering a command). */
  readonly inspect?: ((raw: unknown) => void) | undefined;
  /** Sees each mapped event after it was emitted (and each upsert held back as unchanged). */
  readonly onEvent?: ((e: NormalizedEvent) => void) | undefined;
  /** Runs once the events of a frame are out (Kalshi: subscribe announced markets, ask for snapshots). */
  readonly afterFrame?: (() => void) | undefined;
}

/**
 * "Emit a market upsert only when it changed since last emitted", once for every protocol: the
 * last upsert emitted per market, without its timestamps. A `market_status` for the market makes
 * the next upsert pass again, since the state it described has moved on (PredictIt lists a
 * contract again in full when it comes back).
 */
export class UpsertChanges {
  /** Market → hash of the last upsert emitted (upsertHash: eight bytes, not the record). */
  private readonly last = new Map<string, number>();

  /** Whether `u` differs from the last upsert emitted for its market; remembers it if so. */
  changed(u: MarketUpsert): boolean {
    const hash = upsertHash(u);
    if (this.last.get(u.marketId) === hash) return false;
    this.last.set(u.marketId, hash);
    return true;
  }

  /** Lets the next upsert of `marketId` through, whatever it says. */
  forget(marketId: string): void {
    this.last.delete(marketId);
  }

  /** Forgets every market. */
  clear(): void {
    this.last.clear();
  }

  /** The markets with a remembered upsert. */
  markets(): IterableIterator<string> {
    return this.last.keys();
  }
}

/**
 * The one path from a raw frame to events: JSON-parse text (a frame that does not parse is
 * counted as malformed `json` and dropped), map, drop unchanged market upserts, deliver. Used by
 * the feed runtime for every stream frame and REST document, by `mapFrames`, and so by
 * `crossbook normalize`.
 */
export class FramePath {
  private readonly stats: FeedStats;
  /** Delivers one event of a frame the mapper read in place, as `push` delivers mapped ones. */
  private readonly deliver: (e: NormalizedEvent) => void;

  constructor(
    private readonly mapper: Mapper,
    private readonly sink: EventSink,
    private readonly upserts: UpsertChanges = new UpsertChanges(),
    private readonly hooks: FrameHooks = {},
  ) {
    this.stats = mapper.stats;
    const onEvent = hooks.onEvent;
    this.deliver =
      onEvent === undefined
        ? (e) => this.emit(e)
        : (e) => {
            this.emit(e);
            onEvent(e);
          };
  }

  /** One frame: text or an already-parsed document, received at `localTimestamp`. */
  push(data: unknown, localTimestamp: number): void {
    let raw = data;
    if (typeof raw === 'string') {
      if (this.mapper.isControl !== undefined && this.mapper.isControl(raw)) {
        this.stats.ignored++;
        return;
      }
      if (this.mapper.mapText !== undefined && this.mapper.mapText(raw, localTimestamp, this.deliver)) {
        if (this.hooks.afterFrame !== undefined) this.hooks.afterFrame();
        return;
      }
      raw = parseFrame(raw, this.stats);
      if (raw === undefined) {
        this.stats.frames++;
        return;
      }
    }
    if (this.hooks.inspect !== undefined) this.hooks.inspect(raw);
    const evs = this.mapper.map(raw, localTimestamp);
    const onEvent = this.hooks.onEvent;
    if (Array.isArray(evs))
      for (let i = 0; i < evs.length; i++) {
        const e = evs[i] as NormalizedEvent;
        this.emit(e);
        if (onEvent !== undefined) onEvent(e);
      }
    else
      for (const e of evs) {
        this.emit(e);
        if (onEvent !== undefined) onEvent(e);
      }
    if (this.hooks.afterFrame !== undefined) this.hooks.afterFrame();
  }

  /**
   * Delivers one event, holding back a market upsert that did not change. Also for events a
   * protocol builds itself (catalog upserts from REST, polled trades); those skip `onEvent`. Every
   * upsert is shown to the mapper first (`learn`), changed or not, as a replay of the capture does.
   */
  emit(e: NormalizedEvent): void {
    if (e.type === 'market') {
      if (this.mapper.learn !== undefined) this.mapper.learn(e);
      if (this.upserts.changed(e)) this.sink.next(e);
      return;
    }
    if (e.type === 'market_status') this.upserts.forget(e.marketId);
    this.sink.next(e);
  }
}

/**
 * raw frames → normalized events through one protocol mapper, on the feed runtime's frame path
 * (JSON parse, malformed counting, upsert de-duplication). One operator, plain loop inside (RxJS
 * costs per operator, not per line of code).
 */
export function mapFrames(mapper: Mapper): OperatorFunction<RawFrame, NormalizedEvent> {
  return (source) =>
    new Observable<NormalizedEvent>((sub) => {
      const path = new FramePath(mapper, sub);
      return source.subscribe({
        next: (f) => path.push(f.data, f.localTimestamp),
        error: (e) => sub.error(e),
        complete: () => sub.complete(),
      });
    });
}

/** Builds a `feed` event stamped `now`; absent detail and instrument are left out, not undefined. */
export function feedEvent(venue: VenueLabel, state: FeedEvent['state'], now: number, detail?: string, instrument?: string): FeedEvent {
  const e: { -readonly [K in keyof FeedEvent]: FeedEvent[K] } = { type: 'feed', venue, timestamp: now, localTimestamp: now, state };
  if (detail !== undefined) e.detail = detail;
  if (instrument !== undefined) e.instrument = instrument;
  return e;
}
