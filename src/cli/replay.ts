import { existsSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import { captureDir, CaptureStore, readBatches, replayItems, type ReadRange } from '../capture/index.js';
import { readItemsFile, type ReplayItem } from '../replay/input.js';
import { replay, type ReplayResult } from '../replay/run.js';

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

/** The items of the window [from, to) of the venues asked for (flush markers of the window are kept). */
async function* windowOf(items: AsyncIterable<ReplayItem>, r: ReplayRequest): AsyncGenerator<ReplayItem> {
  for await (const item of items) {
    const t = item.type === 'event' ? item.event.localTimestamp : item.at;
    if (r.from !== undefined && t < r.from) continue;
    if (r.to !== undefined && t >= r.to) break;
    if (item.type === 'event' && r.venues !== undefined && !r.venues.has(item.event.venue)) continue;
    yield item;
  }
}

/**
 * `crossbook replay`: the recorded items of a window through the pipelines on a virtual clock
 * (src/replay/run.ts), written to --out as events.ndjson, opportunities.ndjson and books.ndjson.
 * The clock starts at --from when given, else at the first item.
 */
export async function replayCommand(config: Config, o: ReplayCliOptions, log: Logger): Promise<ReplayResult> {
  const r = replayRequest(config, o);
  return replay({ config, items: windowOf(itemsOf(config, r, log), r), start: r.from, speed: r.speed, out: r.out, log });
}

/**
 * The items to replay: a recording file, or the capture log of DATA_DIR turned back into events
 * by the live frame path and mappers (src/capture: the frames as received, so a mapper fixed since
 * is what reads them now).
 */
function itemsOf(config: Config, r: ReplayRequest, log: Logger): AsyncIterable<ReplayItem> {
  if (r.input !== undefined) return readItemsFile(r.input);
  return captureItems(config, { from: r.from!, to: r.to!, venues: r.venues === undefined ? undefined : [...r.venues] }, log);
}

/** The capture log of DATA_DIR over `range` as replay items (throws a clear Error where there is none). */
export function captureItems(config: Config, range: ReadRange, log: Logger): AsyncIterable<ReplayItem> {
  const dir = captureDir(config.dataDir);
  if (!existsSync(dir)) throw new Error(`${dir}: no capture log here (capture.enabled, or --data-dir); or give --input <file>`);
  return replayItems(readBatches(new CaptureStore(dir), range), config.venues, log);
}
