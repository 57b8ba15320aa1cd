import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { share, Subject, Subscription } from 'rxjs';
import { wireFlows } from '../../pipelines/index.js';
import { persistenceOptions } from '../../pipelines/persistence.js';
import { buildCore, buildDomain, type Core, type Domain } from '../compose.js';
import type { Config } from '../config/schema.js';
import { VirtualClock } from '../core/clock.js';
import { log as rootLog, type Logger } from '../core/log.js';
import type { NormalizedEvent } from '../core/types.js';
import { applyToState } from '../pipeline/operators.js';
import { onMarkers, Turn } from '../pipeline/turn.js';
import { recordJson, type OpportunityRecord } from '../signals/lifecycle/record.js';
import type { OpenRecord } from '../signals/lifecycle/tracker.js';
import type { EngineState } from '../state/engine.js';
import type { FanoutTarget } from '../ws/route.js';
import { itemTime, type ReplayInput, type ReplayItem } from './input.js';

export type { ReplayInput } from './input.js';

export interface ReplayOptions {
  readonly config: Config;
  /**
   * What live applied, in its order (src/replay/input.ts): one item at a time, or batches of them
   * (a capture read, `captureBatches`), which spares an await per item.
   */
  readonly items: ReplayInput;
  /** Where the virtual clock starts: the time the live flows were wired (default: the first item's time). */
  readonly start?: number | undefined;
  /**
   * The window's start, when the items begin earlier (a warm-up from the start of the capture, as
   * live built its books, groups and open opportunities): events before it are applied but not
   * written or counted, and opportunities that closed before it are left out. Default: every item.
   */
  readonly emitFrom?: number | undefined;
  /**
   * Keep the closed opportunities for the result and opportunities.ndjson (default true). A replay
   * whose consumer takes them from the lifecycle as they close (a backtest, a WebSocket replay)
   * passes false, so its memory does not grow with the window.
   */
  readonly keepClosed?: boolean | undefined;
  /** Flush the turn once more after the last item, as live would have at the end of its turn (default true). */
  readonly flushAtEnd?: boolean | undefined;
  /** Replay at N× the recorded pace (wall time between items), or as fast as it goes (`max`, the default). */
  readonly speed?: number | 'max' | undefined;
  /** Writes events.ndjson, opportunities.ndjson and books.ndjson there. */
  readonly out?: string | undefined;
  readonly log?: Logger | undefined;
  /**
   * Hook for a consumer that runs inside the replay (the backtest, src/backtest/): handed the built
   * rooms and the virtual clock after the flows are wired and before any item flows.
   */
  readonly onWired?: ((rooms: ReplayRooms) => void) | undefined;
  /**
   * The WebSocket fan-out inside the replay (a WebSocket replay session, src/ws/replay-session.ts):
   * built on the replay's rooms and wired by `wireFlows` where live wires its hub, so the replay
   * sends what live sent. Absent: no fan-out, as `crossbook replay` runs.
   */
  readonly fanout?: ((rooms: ReplayRooms) => FanoutTarget) | undefined;
}

/** What a replay hands its `onWired` consumer. */
export interface ReplayRooms {
  readonly clock: VirtualClock;
  readonly core: Core;
  readonly domain: Domain;
}

/** One book as a replay writes it (and a live run is compared with). */
export interface BookLine {
  readonly venue: string;
  readonly instrument: string;
  readonly ready: boolean;
  readonly timestamp: number;
  readonly bids: readonly (readonly [number, number])[];
  readonly asks: readonly (readonly [number, number])[];
}

export interface ReplayResult {
  readonly events: number;
  readonly flushes: number;
  /** Closed opportunities in the order they closed (none kept with `keepClosed: false`). */
  readonly closed: readonly OpportunityRecord[];
  readonly open: readonly OpenRecord[];
  readonly books: readonly BookLine[];
  /** The virtual clock at the end. */
  readonly endedAt: number;
}

/**
 * A pipeline replay: the rooms `startService` builds (buildCore, buildDomain) wired by the same
 * `wireFlows`, on a VirtualClock, with a temporary DATA_DIR and no sockets, simulator or webhooks.
 * Each event is applied at its receive time through the same ingest operator as live (a unit of the
 * clock: timers due by then run first); the turn flushes only where the recording says live did,
 * each flush a unit at its time. So the same input gives the same books and opportunities as the
 * live run that recorded it, and the same bytes on every replay.
 */
export async function replay(opts: ReplayOptions): Promise<ReplayResult> {
  const it = opts.items[Symbol.asyncIterator]();
  let next = await it.next();
  const first = next.done ? undefined : firstOf(next.value);
  const clock = new VirtualClock(opts.start ?? (first ? itemTime(first) : 0));
  const dir = mkdtempSync(join(tmpdir(), 'crossbook-replay-'));
  const log = opts.log ?? rootLog;
  // A replay captures nothing (its input is the capture) and so keeps no history index either.
  const noCapture = { enabled: false, retention: { days: 1, bytes: 16 * 1024 * 1024 }, checkpointIntervalMs: 300_000 };
  const core = buildCore({ ...opts.config, dataDir: dir, capture: noCapture }, { log, clock });
  const domain = buildDomain(core, { persist: false });
  const source = new Subject<NormalizedEvent>();
  // Shared, as live's ingest is: one application per event, however many flows subscribe (each
  // subscription to a plain pipe would apply every event again).
  const events$ = source.pipe(applyToState(core.state, clock), share());
  const turn = new Turn(onMarkers);
  const closed: OpportunityRecord[] = [];
  const sub = new Subscription();
  const emitFrom = opts.emitFrom ?? -Infinity;
  if (opts.keepClosed !== false)
    sub.add(domain.lifecycle.events$.subscribe((e) => e.type === 'expired' && e.record.closed_at >= emitFrom && closed.push(e.record)));
  const hub = opts.fanout?.({ clock, core, domain });
  // Nothing a replay writes or sends (events, books, opportunities, a backtest's fills, a WebSocket
  // replay's messages) reads the wallet ledger or its alerts, and neither feeds the state or the
  // signals: not followed. A WebSocket replay sends the alerts live stored (src/ws/replay-alerts.ts):
  // the ledger behind them is restored from LMDB, not built from the capture.
  const rooms = { ...domain, webhooks: undefined, ledger: undefined };
  sub.add(
    wireFlows({
      state: core.state,
      persistence: core.persistence,
      persistenceOptions: persistenceOptions(opts.config),
      rooms,
      turn,
      clock,
      hub,
      ingest: { events$ },
      // Nothing reads a replay's temporary store back: the state is not snapshotted into it.
      persist: false,
    }),
  );
  const writer = opts.out === undefined ? undefined : new LineWriter(join(opts.out, 'events.ndjson'), true);
  let events = 0;
  let flushes = 0;
  sub.add(
    events$.subscribe((ev) => {
      if (ev.localTimestamp < emitFrom) return;
      events++;
      writer?.line(JSON.stringify(ev));
    }),
  );
  opts.onWired?.({ clock, core, domain });
  const pace = pacer(opts.speed, emitFrom);
  const paced = opts.speed !== undefined && opts.speed !== 'max';
  try {
    const apply = (item: ReplayItem): void => {
      if (item.type === 'event') source.next(item.event);
      else {
        flushes++;
        clock.run(item.at, flush);
      }
    };
    const flush = (): void => turn.flush();
    for (; !next.done; next = await it.next()) {
      const v = next.value;
      if (!isBatch(v)) {
        await pace(itemTime(v));
        apply(v);
        continue;
      }
      for (let i = 0; i < v.length; i++) {
        const item = v[i]!;
        if (paced) await pace(itemTime(item));
        apply(item);
      }
    }
    if (opts.flushAtEnd !== false) clock.run(clock.now(), () => turn.flush());
    const result: ReplayResult = { events, flushes, closed, open: domain.lifecycle.openRecords(), books: bookLines(core.state), endedAt: clock.now() };
    writer?.close();
    if (opts.out !== undefined) writeResult(opts.out, result);
    return result;
  } finally {
    writer?.close();
    sub.unsubscribe();
    domain.matching.close();
    await domain.alerts.close();
    await domain.ledger.close();
    await core.persistence.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function isBatch(v: ReplayItem | readonly ReplayItem[]): v is readonly ReplayItem[] {
  return Array.isArray(v);
}

/** The first item of an input's first value (an empty batch: none). */
function firstOf(v: ReplayItem | readonly ReplayItem[]): ReplayItem | undefined {
  return isBatch(v) ? v[0] : v;
}

/**
 * Waits, at `speed`× the recorded pace, until an item of time `t` is due (wall time: the replay's
 * reader, not the engine). The pace starts at the first item from `from` on: a warm-up before the
 * window runs as fast as it goes.
 */
function pacer(speed: number | 'max' | undefined, from: number): (t: number) => Promise<void> {
  if (speed === undefined || speed === 'max') return () => Promise.resolve();
  let t0: number | undefined;
  let wall0 = 0;
  return async (t) => {
    if (t < from) return;
    if (t0 === undefined) {
      t0 = t;
      wall0 = performance.now();
    }
    const wait = wall0 + (t - t0) / speed - performance.now();
    if (wait > 1) await sleep(wait);
  };
}

/** Every book of the state, by venue and instrument. */
export function bookLines(state: EngineState): BookLine[] {
  const out: BookLine[] = [];
  for (const [venue, instrument, b] of state.books.entries())
    out.push({ venue, instrument, ready: b.ready, timestamp: b.timestamp, bids: b.levelsOf(true), asks: b.levelsOf(false) });
  return out.sort((a, b) => cmp(a.venue, b.venue) || cmp(a.instrument, b.instrument));
}

/** Closed opportunities as /arb/history and /ev/history give them, then the open ones, as NDJSON lines. */
export function opportunityLines(closed: readonly OpportunityRecord[], open: readonly OpenRecord[]): string[] {
  return [
    ...closed.map((r) => JSON.stringify({ state: 'closed', ...recordJson(r) })),
    ...open.map((r) =>
      JSON.stringify({ state: 'open', ...r, first_seen: new Date(r.first_seen).toISOString(), last_seen: new Date(r.last_seen).toISOString() }),
    ),
  ];
}

function writeResult(out: string, r: ReplayResult): void {
  const opp = new LineWriter(join(out, 'opportunities.ndjson'), false);
  for (const l of opportunityLines(r.closed, r.open)) opp.line(l);
  opp.close();
  const books = new LineWriter(join(out, 'books.ndjson'), false);
  for (const b of r.books) books.line(JSON.stringify(b));
  books.close();
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * NDJSON to a file: each line encoded as UTF-8 straight into one reused buffer, written when it is
 * full. A replay writes a line per event of its window: an array of lines joined into one string
 * and written as text encoded every line a second time and left the joined copy to the collector.
 */
export class LineWriter {
  private fd: number | undefined;
  private readonly buf = Buffer.allocUnsafe(1 << 20);
  private pos = 0;

  constructor(file: string, mkdir: boolean) {
    if (mkdir) mkdirSync(join(file, '..'), { recursive: true });
    this.fd = openSync(file, 'w');
  }

  line(s: string): void {
    // At most 3 bytes of UTF-8 per UTF-16 unit (a surrogate pair: 4 for 2), and the newline.
    const most = s.length * 3 + 1;
    if (this.pos + most > this.buf.length) {
      this.drain();
      if (most > this.buf.length) {
        this.write(Buffer.from(`${s}\n`));
        return;
      }
    }
    this.pos += this.buf.write(s, this.pos);
    this.buf[this.pos++] = 10;
  }

  close(): void {
    if (this.fd === undefined) return;
    this.drain();
    closeSync(this.fd);
    this.fd = undefined;
  }

  private drain(): void {
    this.write(this.buf.subarray(0, this.pos));
    this.pos = 0;
  }

  private write(b: Buffer): void {
    if (this.fd === undefined) return;
    for (let at = 0; at < b.length;) at += writeSync(this.fd, b, at, b.length - at);
  }
}
