import { existsSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import { captureDir, CaptureStore, readBatches, ReplayFeed, type ReadRange } from '../capture/index.js';
import { itemsBefore, itemTime, readItemsFile, type ReplayInput, type ReplayItem } from '../replay/input.js';
import { replay, type ReplayOptions, type ReplayResult } from '../replay/run.js';

export interface ReplayCliOptions {
  readonly input?: string;
  readonly dataDir?: string;
  readonly out?: string;
  readonly from?: string;
  readonly to?: string;
  readonly venues?: string;
  readonly speed?: string;
}

/** What `crossbook replay` was asked, checked: a clear message for each bad option. */
export interface ReplayRequest {
  /** A recording (serve --record); undefined: the capture log of DATA_DIR. */
  readonly input: string | undefined;
  readonly out: string;
  readonly from: number | undefined;
  readonly to: number | undefined;
  /** Venue labels kept (undefined: all). */
  readonly venues: ReadonlySet<string> | undefined;
  readonly speed: number | 'max';
}

/** A time given as ms since the epoch or ISO 8601. */
export function parseTime(name: string, v: string): number {
  const t = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isSafeInteger(t) || t < 0) throw new Error(`--${name} ${JSON.stringify(v)}: not a time (ms since the epoch or ISO 8601)`);
  return t;
}

/** Checks the options against the configuration; throws an Error whose message says what is wrong. */
export function replayRequest(config: Config, o: ReplayCliOptions): ReplayRequest {
  if (o.input !== undefined && !existsSync(o.input)) throw new Error(`--input ${o.input}: no such file`);
  if (o.out === undefined) throw new Error('--out <dir> is required');
  const from = o.from === undefined ? undefined : parseTime('from', o.from);
  const to = o.to === undefined ? undefined : parseTime('to', o.to);
  if (o.input === undefined && (from === undefined || to === undefined))
    throw new Error('--from and --to are required to replay the capture log of DATA_DIR (or give --input <file>, a recording of serve --record)');
  if (from !== undefined && to !== undefined && from >= to) throw new Error('--from must be before --to');
  let venues: Set<string> | undefined;
  if (o.venues !== undefined) {
    venues = new Set();
    for (const name of o.venues.split(',').map((s) => s.trim())) {
      const v = config.venues.find((x) => x.slug === name || x.label === name);
      if (!v) throw new Error(`--venues: unknown venue ${JSON.stringify(name)} (known: ${config.venues.map((x) => x.slug).join(', ')})`);
      venues.add(v.label);
    }
  }
  let speed: number | 'max' = 'max';
  if (o.speed !== undefined && o.speed !== 'max') {
    speed = Number(o.speed);
    if (!Number.isFinite(speed) || speed <= 0) throw new Error(`--speed ${JSON.stringify(o.speed)}: a positive number (× the recorded pace) or max`);
  }
  return { input: o.input, out: o.out, from, to, venues, speed };
}

/**
 * The items before `to` of the venues asked for (flush markers kept), in the input's shape. Items
 * before `from` stay: they warm the replay up (books, groups, open opportunities as live had them at
 * `from`), and the replay writes only what comes from `from` on (`emitFrom`).
 */
async function* windowOf(items: ReplayInput, r: ReplayRequest): AsyncGenerator<ReplayItem | readonly ReplayItem[]> {
  const keep = (item: ReplayItem): boolean => !(item.type === 'event' && r.venues !== undefined && !r.venues.has(item.event.venue));
  const past = (item: ReplayItem): boolean => r.to !== undefined && itemTime(item) >= r.to;
  for await (const v of itemsBefore(items, past)) {
    const batch = Array.isArray(v) ? (v as readonly ReplayItem[]) : [v as ReplayItem];
    const kept = r.venues === undefined ? batch : batch.filter(keep);
    if (kept.length > 0) yield kept;
  }
}

/**
 * `crossbook replay`: the recorded items up to --to through the pipelines on a virtual clock
 * (src/replay/run.ts), from the start of the recording or capture log (the clock starts at its first
 * item, as live's did), writing to --out what the window [--from, --to) produced: its events in
 * events.ndjson, the opportunities that closed in it and those open at its end in
 * opportunities.ndjson, and the books at its end in books.ndjson.
 */
export async function replayCommand(config: Config, o: ReplayCliOptions, log: Logger): Promise<ReplayResult> {
  return replay(replayCommandOptions(config, o, log));
}

/**
 * What `crossbook replay` hands `replay()` for these options (bench/replay-pipeline.bench.ts wraps
 * its input to time the window); throws an Error whose message says what is wrong.
 */
export function replayCommandOptions(config: Config, o: ReplayCliOptions, log: Logger): ReplayOptions {
  const r = replayRequest(config, o);
  // A window cut at --to ends between two of live's flushes: the state is live's at --to, whose next
  // flush (after --to) is not the window's. A whole recording ends with its turn flushed, as live's did.
  const flushAtEnd = r.to === undefined;
  return { config, items: windowOf(itemsOf(config, r, log), r), emitFrom: r.from, flushAtEnd, speed: r.speed, out: r.out, log };
}

/**
 * The items to replay: a recording file, or the capture log of DATA_DIR turned back into events
 * by the live frame path and mappers (src/capture: the frames as received, so a mapper fixed since
 * is what reads them now).
 */
function itemsOf(config: Config, r: ReplayRequest, log: Logger): ReplayInput {
  if (r.input !== undefined) return readItemsFile(r.input);
  return captureBatches(config, { from: 0, to: r.to!, venues: r.venues === undefined ? undefined : [...r.venues] }, log);
}

/** The capture log of DATA_DIR over `range` as replay items, in batches (a pipeline replay takes them so, without an await per item); throws a clear Error where there is none. */
export function captureBatches(config: Config, range: ReadRange, log: Logger): AsyncIterable<ReplayItem[]> {
  return new ReplayFeed(config.venues, log).items(readBatches(captureStore(config), range));
}

function captureStore(config: Config): CaptureStore {
  const dir = captureDir(config.dataDir);
  if (!existsSync(dir)) throw new Error(`${dir}: no capture log here (capture.enabled, or --data-dir); or give --input <file>`);
  return new CaptureStore(dir);
}
