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

/**
 * `value` (an unpacked event: plain objects, arrays, strings, numbers) with every string in a string
 * of its own. msgpackr's native reader decodes all the strings of a record into one and hands out
 * slices of it, so one id a mapper kept from an event (Polymarket's token and market ids learnt from
 * a catalog upsert, Polymarket US's status keys) held every string of that event alive: ~49 MiB at
 * 108k markets in the history index's thread (heap snapshot of its mappers). Flattening a
 * concatenation copies the characters, and the slice of it that comes back holds only them.
 */
export function ownStrings(value: unknown): unknown {
  if (typeof value === 'string') return ` ${value}`.slice(1);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = ownStrings(value[i]);
    return value;
  }
  if (typeof value === 'object' && value !== null) {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = ownStrings(o[k]);
  }
  return value;
}

/** One venue's mapper and frame path, built as the live feed builds them. */
interface VenuePath {
  readonly mapper: Mapper;
  readonly path: FramePath;
}

/**
 * Turns capture records back into normalized events through the SAME frame path (`FramePath`:
 * parse, the protocol's mapper, upsert de-duplication) and protocol mappers as live, one fresh
 * mapper per venue made by its protocol module (`createMapper`; afresh at each `mapper` record, a
 * live feed session's start, with the options the live mapper was made with), so a mapper fixed
 * later runs again on the same bytes. Frames and REST documents are pushed, events the protocol built itself
 * and `feed` events are emitted as they were, resets reset the mapper (or, for a scoped reset, its
 * instruments). The protocol's network-side hooks (subscribing, asking for snapshots) do not run:
 * what they caused live is in the log as the frames that followed.
 *
 * A window that starts mid-session starts with fresh mappers, as a new connection would: books
 * appear with their next snapshot (a venue's deltas before it are dropped, per the book contract).
 */
export class ReplayFeed {
  private readonly paths = new Map<string, VenuePath | null>();
  private readonly out: NormalizedEvent[] = [];
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
    if (r.kind === 'mapper') {
      this.fresh(r);
      return;
    }
    const vp = this.pathOf(r.venue);
    if (vp === undefined) return;
    // One array for every record's events (they are handed on as items at once): none to collect per record.
    this.out.length = 0;
    switch (r.kind) {
      case 'frame':
        vp.path.push(r.payload as string, r.t);
        break;
      case 'doc':
        vp.path.push(JSON.parse(r.payload as string) as unknown, r.t);
        break;
      case 'event':
        vp.path.emit(ownStrings(unpack(r.payload as Uint8Array)) as NormalizedEvent);
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
    if (vp === undefined) this.paths.set(label, (vp = this.build(label, undefined)));
    return vp ?? undefined;
  }

  /**
   * A feed session began live (a service start): from here on a fresh mapper and upsert memory, made
   * with the options the live mapper recorded. Options its protocol cannot take (a damaged or
   * foreign capture) are logged and the protocol's default mapper is used.
   */
  private fresh(r: CaptureRecord): void {
    let options: Record<string, unknown> | undefined;
    try {
      const parsed = JSON.parse(r.payload as string) as unknown;
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) options = parsed as Record<string, unknown>;
    } catch {
      // reported below
    }
    if (options === undefined) this.log?.warn({ venue: r.venue, seq: r.seq }, 'replay: a mapper record without an options object; the default mapper is used');
    this.paths.set(r.venue, this.build(r.venue, options));
  }

  private build(label: string, options: Record<string, unknown> | undefined): VenuePath | null {
    const venue = this.venues.find((v) => v.label === label);
    if (venue === undefined) {
      this.log?.warn({ venue: label }, 'replay: the capture names a venue not in the registry; its records are skipped');
      return null;
    }
    const create = PROTOCOL_MODULES[venue.protocol].createMapper;
    let mapper: Mapper;
    try {
      mapper = create(venue, this.log, options);
    } catch (e) {
      this.log?.warn(
        { venue: label, options, err: (e as Error).message },
        'replay: the recorded mapper options are not ones the protocol takes; the default mapper is used',
      );
      mapper = create(venue, this.log);
    }
    return { mapper, path: new FramePath(mapper, this.sink) };
  }
}

/**
 * The normalized events (and flush markers) of captured records, one item at a time: the shape a
 * pipeline replay consumes. `records` is a batch stream such as `readBatches(store, range)`.
 */
export async function* replayItems(records: AsyncIterable<CaptureRecord[]>, venues: readonly VenueConfig[], log?: Logger): AsyncGenerator<ReplayItem> {
  for await (const items of new ReplayFeed(venues, log).items(records)) yield* items;
}
