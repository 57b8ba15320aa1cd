import { unpack } from 'msgpackr';
import type { VenueConfig } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import type { NormalizedEvent } from '../core/types.js';
import { FramePath } from '../venues/common/frames.js';
import type { Mapper } from '../venues/common/mapper.js';
import { PROTOCOL_MODULES } from '../venues/index.js';
import type { CaptureRecord } from './record.js';
import type { ReplayItem } from '../replay/input.js';

/** What a replay consumes: the items the pipeline replay (src/replay/) takes, one definition for both. */
export type { ReplayItem };

/**
 * What a replay hands on, in capture order: a normalized event as live produced it (with the
 * sequence number of the record it came from), or a flush marker where the live per-turn flush
 * ran (`at`: its time), so a pipeline replay flushes its conflated fan-out and arb/EV recompute
 * where live did. The clock branch's full-pipeline replay consumes exactly this.
 */

/** One venue's mapper and frame path, built as the live feed builds them. */
interface VenuePath {
  readonly mapper: Mapper;
  readonly path: FramePath;
}

/**
 * Turns capture records back into normalized events through the SAME frame path (`FramePath`:
 * parse, the protocol's mapper, upsert de-duplication) and protocol mappers as live, one fresh
 * mapper per venue made by its protocol module (`createMapper`), so a mapper fixed later runs
 * again on the same bytes. Frames and REST documents are pushed, events the protocol built itself
 * and `feed` events are emitted as they were, resets reset the mapper (or, for a scoped reset, its
 * instruments). The protocol's network-side hooks (subscribing, asking for snapshots) do not run:
 * what they caused live is in the log as the frames that followed.
 *
 * A window that starts mid-session starts with fresh mappers, as a new connection would: books
 * appear with their next snapshot (a venue's deltas before it are dropped, per the book contract).
 */
export class ReplayFeed {
  private readonly paths = new Map<string, VenuePath | null>();
  private out: NormalizedEvent[] = [];
  private readonly sink = { next: (e: NormalizedEvent): void => void this.out.push(e) };

  constructor(
    private readonly venues: readonly VenueConfig[],
    private readonly log?: Logger,
  ) {}

  /** Records → items, in order. */
  async *items(records: AsyncIterable<CaptureRecord[]>): AsyncGenerator<ReplayItem[]> {
    for await (const batch of records) {
      const items: ReplayItem[] = [];
      for (let i = 0; i < batch.length; i++) this.apply(batch[i]!, items);
      if (items.length > 0) yield items;
    }
  }

  /** One record: its events (or flush marker) appended to `items`. */
  apply(r: CaptureRecord, items: ReplayItem[]): void {
    if (r.kind === 'flush') {
      items.push({ type: 'flush', seq: r.seq, at: r.t });
      return;
    }
    const vp = this.pathOf(r.venue);
    if (vp === undefined) return;
    this.out = [];
    switch (r.kind) {
      case 'frame':
        vp.path.push(r.payload as string, r.t);
        break;
      case 'doc':
        vp.path.push(JSON.parse(r.payload as string) as unknown, r.t);
        break;
      case 'event':
        vp.path.emit(unpack(r.payload as Uint8Array) as NormalizedEvent);
        break;
      case 'reset': {
        const instruments = r.payload === '' ? undefined : (JSON.parse(r.payload as string) as string[]);
        if (instruments !== undefined && vp.mapper.resetInstruments !== undefined) vp.mapper.resetInstruments(instruments);
        else vp.mapper.reset();
        break;
      }
    }
    for (let i = 0; i < this.out.length; i++) items.push({ type: 'event', seq: r.seq, event: this.out[i]! });
  }

  /** The mapper of a venue's stats (what a replay dropped or ignored, per reason). */
  mapper(venue: string): Mapper | undefined {
    return this.paths.get(venue)?.mapper;
  }

  private pathOf(label: string): VenuePath | undefined {
    let vp = this.paths.get(label);
    if (vp === undefined) {
      const venue = this.venues.find((v) => v.label === label);
      if (venue === undefined) this.log?.warn({ venue: label }, 'replay: the capture names a venue not in the registry; its records are skipped');
      const mapper = venue && PROTOCOL_MODULES[venue.protocol].createMapper(venue, this.log);
      vp = mapper ? { mapper, path: new FramePath(mapper, this.sink) } : null;
      this.paths.set(label, vp);
    }
    return vp ?? undefined;
  }
}

/**
 * The normalized events (and flush markers) of captured records, one item at a time: the shape a
 * pipeline replay consumes. `records` is a batch stream such as `readBatches(store, range)`.
 */
export async function* replayItems(records: AsyncIterable<CaptureRecord[]>, venues: readonly VenueConfig[], log?: Logger): AsyncGenerator<ReplayItem> {
  for await (const items of new ReplayFeed(venues, log).items(records)) yield* items;
}
