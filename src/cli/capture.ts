import { existsSync, readFileSync, statSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { msOrIsoTime } from '../access/params.js';
import { Capture, CaptureStore, captureDir, captureSettings, HOUR_MS, readBatches, ReplayFeed, type CaptureRecord, type ReplayItem } from '../capture/index.js';
import { writeEventsParquet, writeFramesParquet } from '../capture/parquet.js';
import { eventLineWriter, itemLine, ndjsonChunks, recordLine } from '../capture/ndjson.js';
import type { Config, Protocol, VenueConfig } from '../config/schema.js';
import { realClock } from '../core/clock.js';
import { log } from '../core/log.js';
import { PROTOCOL_MODULES } from '../venues/index.js';
import { isProtocol, readFrames } from './normalize.js';

/** One frame of a recording: its text and, when the file gives it, its receive time. */
export interface RecordedFrame {
  readonly text: string;
  readonly t: number | undefined;
}

/** A line that starts with a receive time (ms or ISO 8601), a space, then the frame (tardis-machine's raw format). */
const TIMED_LINE = /^(\d{10,14}|\d{4}-\d{2}-\d{2}T\S+)\s+(\S.*)$/;

/**
 * Reads a recording of venue frames in the formats `crossbook normalize` reads (a JSON array in
 * arrival order, one JSON document, or JSON lines), where a line may start with its receive time
 * (`1790658661234 {…}` or `2026-09-29T10:11:01.234Z {…}`). Every frame must be JSON: the first
 * that is not is an error naming its line, and nothing is imported.
 */
export function readRecording(text: string, file: string): RecordedFrame[] {
  const frames = readFrames(text);
  const out: RecordedFrame[] = [];
  frames.forEach((f, i) => {
    if (typeof f !== 'string') return void out.push({ text: JSON.stringify(f), t: undefined });
    const m = TIMED_LINE.exec(f.trim());
    const t = m ? msOrIsoTime(m[1]!) : undefined;
    const body = m && t !== undefined ? m[2]! : f.trim();
    try {
      JSON.parse(body);
    } catch {
      throw new Error(`${file}: frame ${i + 1} is not JSON (${body.length > 60 ? `${body.slice(0, 60)}…` : body}); nothing was imported`);
    }
    out.push({ text: body, t });
  });
  if (out.length === 0) throw new Error(`${file}: no frames in the file; nothing was imported`);
  return out;
}

export interface ImportOptions {
  readonly protocol: Protocol;
  /** Venue label or slug (default: the first in the registry speaking the protocol). */
  readonly venue?: string | undefined;
  /** Receive time of frames the file gives none for, until one that has a time (default: now). */
  readonly at?: number | undefined;
}

/**
 * `crossbook capture import`: a recording becomes capture records of `venue` in `dataDir/capture`
 * (new segments; nothing already stored is touched), so it replays through the live mappers like
 * captured traffic. Read and checked whole before anything is written.
 */
export async function importRecording(
  config: Config,
  dataDir: string,
  file: string,
  opts: ImportOptions,
): Promise<{ readonly frames: number; readonly venue: string; readonly from: number; readonly to: number; readonly warning?: string }> {
  const venue = venueOf(config, opts.protocol, opts.venue);
  const frames = readRecording(readFileSync(file, 'utf8'), file);
  const cap = new Capture(new CaptureStore(captureDir(dataDir)), { clock: realClock, log });
  const w = cap.venue(venue.label);
  let t = opts.at ?? realClock.now();
  let from = Infinity;
  for (const f of frames) {
    t = f.t ?? t;
    from = Math.min(from, t);
    w.frame(f.text, 0, t);
  }
  await cap.close();
  if (cap.stats.drops > 0)
    throw new Error(`capture import: ${cap.stats.drops} of ${frames.length} frames could not be written (${cap.stats.reason ?? 'write failed'})`);
  const r = { frames: frames.length, venue: venue.label, from, to: t };
  const oldest = realClock.now() - captureSettings(config).retentionMs;
  if (from >= oldest) return r;
  // Segments past retention are what a server's retention run drops first, and /replay refuses them.
  return {
    ...r,
    warning: `receive times from ${new Date(from).toISOString()} are older than capture.retention.days allows (${new Date(oldest).toISOString()}): a server on this DATA_DIR drops those segments at its first retention run and GET /replay refuses the window; crossbook replay and capture export read them until then. Import with --at (frames without a time), or raise capture.retention.days`,
  };
}

function venueOf(config: Config, protocol: Protocol, want: string | undefined): VenueConfig {
  const v = config.venues.find((x) => (want ? x.label === want || x.slug === want : x.protocol === protocol));
  if (!v) throw new Error(want ? `unknown venue ${want}` : `no venue in the registry speaks ${protocol}`);
  if (v.protocol !== protocol) throw new Error(`venue ${want} speaks ${v.protocol}, not ${protocol}`);
  return v;
}

export interface ExportOptions {
  readonly from: number;
  readonly to: number;
  readonly venues?: readonly string[] | undefined;
  /** Normalized events (as GET /replay writes them) instead of the frames as captured. */
  readonly events?: boolean | undefined;
}

/** The capture log of a data directory, opened for reading a window: a clear error where it holds none of it. */
function captureFor(config: Config, dataDir: string, opts: ExportOptions): { store: CaptureStore; labels: string[] | undefined } {
  const labels = opts.venues?.map((v) => {
    const found = config.venues.find((x) => x.label === v || x.slug === v);
    if (!found) throw new Error(`unknown venue ${v}`);
    return found.label;
  });
  const dir = captureDir(dataDir);
  if (!existsSync(dir)) throw new Error(`${dir}: no capture log here (capture.enabled, or --data-dir)`);
  const store = new CaptureStore(dir);
  const hours = store.segments().map((s) => s.hour);
  if (hours.length === 0) throw new Error(`${dir}: nothing has been captured`);
  const first = Math.min(...hours);
  // A block lives in the segment of the hour its first record arrived in and may run a little past it.
  const last = Math.max(...hours) + 2 * HOUR_MS;
  if (opts.to < first || opts.from > last)
    throw new Error(`the window ${iso(opts.from)} .. ${iso(opts.to)} is outside the capture, which holds ${iso(first)} .. ${iso(last)}`);
  return { store, labels };
}

const iso = (t: number): string => new Date(t).toISOString();

/** The records of the window, or the normalized events the live mappers make of them. */
function sourceOf(config: Config, dataDir: string, opts: ExportOptions): AsyncIterable<CaptureRecord[]> | AsyncIterable<ReplayItem[]> {
  const { store, labels } = captureFor(config, dataDir, opts);
  const batches = readBatches(store, { from: opts.from, to: opts.to, venues: labels, flushes: !opts.events });
  return opts.events ? new ReplayFeed(config.venues, log).items(batches) : batches;
}

/**
 * `crossbook capture export`: a window of the capture as NDJSON, frames as captured (one record a
 * line: seq, venue, recv_ts, kind, conn, payload) or, with `events`, the normalized events the live
 * mappers make of them; the last line is `{"type":"end","count":N}`. `write` may return a promise
 * (stdout's drain), which is awaited before the next chunk.
 */
export async function exportCapture(config: Config, dataDir: string, opts: ExportOptions, write: (chunk: string) => void | Promise<void>): Promise<number> {
  return writeNdjson(config, sourceOf(config, dataDir, opts), opts, write);
}

async function writeNdjson(
  config: Config,
  src: AsyncIterable<CaptureRecord[]> | AsyncIterable<ReplayItem[]>,
  opts: ExportOptions,
  write: (chunk: string) => void | Promise<void>,
): Promise<number> {
  const chunks = opts.events
    ? ndjsonChunks(src as AsyncIterable<ReplayItem[]>, itemLine(eventLineWriter(config.venues)))
    : ndjsonChunks<CaptureRecord>(src as AsyncIterable<CaptureRecord[]>, recordLine);
  let last = '';
  for await (const c of chunks) {
    last = c;
    await write(c);
  }
  const end = /\{"type":"(end|error)".*\}\n$/.exec(last);
  if (end?.[1] === 'error') throw new Error(`capture export stopped: ${(JSON.parse(end[0]) as { error: string }).error}`);
  return end ? (JSON.parse(end[0]) as { count: number }).count : 0;
}

export const EXPORT_FORMATS = ['ndjson', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface FileExportOptions extends ExportOptions {
  readonly format: ExportFormat;
  readonly out: string;
  /** Parquet rows per row group (default ROW_GROUP_ROWS). */
  readonly rowGroupRows?: number | undefined;
  /** Parquet: called as each row group is about to be written (ParquetExportOptions.onRowGroup). */
  readonly onRowGroup?: (() => void) | undefined;
}

/**
 * `crossbook capture export --out FILE`: the window written to a temporary file beside FILE and
 * renamed onto it once whole, so a failure (a bad window, an unreadable segment, a full disk)
 * leaves no partial file and FILE as it was. Returns the records or events written.
 */
export async function exportToFile(config: Config, dataDir: string, opts: FileExportOptions): Promise<number> {
  if (!(EXPORT_FORMATS as readonly string[]).includes(opts.format)) throw new Error(`unknown format "${opts.format}" (ndjson or parquet)`);
  const src = sourceOf(config, dataDir, opts);
  const out = resolve(opts.out);
  if (statSync(out, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`--out ${opts.out} is a directory`);
  const tmp = join(dirname(out), `.${basename(out)}.${process.pid}.tmp`);
  const fh = await open(tmp, 'wx').catch((e: Error) => {
    throw new Error(`cannot write --out ${opts.out}: ${e.message}`);
  });
  try {
    let n: number;
    if (opts.format === 'ndjson') n = await writeNdjson(config, src, opts, (c) => fh.write(c).then(() => undefined));
    else if (opts.events) n = await writeEventsParquet(src as AsyncIterable<ReplayItem[]>, config.venues, fh, opts);
    else n = await writeFramesParquet(src as AsyncIterable<CaptureRecord[]>, fh, opts);
    await fh.sync();
    await fh.close();
    await rename(tmp, out);
    return n;
  } catch (e) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw e;
  }
}

/** `crossbook capture import|export`. */
export function addCapture(p: Command, config: (o: { dataDir?: string }) => Config, err: (s: string) => void): void {
  const c = p.command('capture').description('the capture log (DATA_DIR/capture): import recorded venue frames, export a window');
  c.command('import')
    .description('turn a file of recorded venue frames (the formats `crossbook normalize` reads; a line may start with its receive time) into capture segments')
    .addOption(new Option('--protocol <name>', 'wire protocol of the frames').choices(Object.keys(PROTOCOL_MODULES)).makeOptionMandatory())
    .option('--venue <label>', 'venue whose capture the frames join (default: the first speaking the protocol)')
    .option('--at <time>', 'receive time (ms or ISO 8601) of frames the file gives none for (default: now)')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .argument('<file>')
    .action(async (file: string, o: { protocol: string; venue?: string; at?: string; dataDir?: string }) => {
      const at = o.at === undefined ? undefined : msOrIsoTime(o.at);
      if ((o.at !== undefined && at === undefined) || !isProtocol(o.protocol)) {
        err(o.at !== undefined && at === undefined ? `--at must be ms since the epoch or an ISO 8601 time, got "${o.at}"` : `unknown protocol "${o.protocol}"`);
        process.exitCode = 2;
        return;
      }
      const cfg = config(o);
      const r = await importRecording(cfg, cfg.dataDir, file, { protocol: o.protocol, venue: o.venue, at }).catch((e: Error) => e);
      if (r instanceof Error) {
        err(r.message);
        process.exitCode = 1;
      } else {
        err(`imported ${r.frames} frames of ${r.venue}, receive times ${new Date(r.from).toISOString()} .. ${new Date(r.to).toISOString()}`);
        if (r.warning !== undefined) err(`warning: ${r.warning}`);
      }
    });
  c.command('export')
    .description('write a window of the capture as NDJSON or Parquet: the frames as captured, or the normalized events the mappers make of them')
    .requiredOption('--from <time>', 'start (ms or ISO 8601)')
    .requiredOption('--to <time>', 'end, inclusive (ms or ISO 8601)')
    .addOption(new Option('--format <format>', 'output format (parquet needs --out)').choices(EXPORT_FORMATS).default('ndjson'))
    .addOption(new Option('--what <what>', 'frames as captured, or normalized events').choices(['frames', 'events']).default('frames'))
    .option('--events', 'same as --what events')
    .option('--venues <list>', 'comma-separated venue labels or slugs (default: all)')
    .option('--out <file>', 'write to FILE (through a temporary file renamed when whole) instead of stdout')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (o: ExportCliOptions) => {
      const req = exportRequest(o);
      if (typeof req === 'string') {
        err(req);
        process.exitCode = 2;
        return;
      }
      const cfg = config(o);
      const write = (s: string): Promise<void> | void => (process.stdout.write(s) ? undefined : new Promise((r) => process.stdout.once('drain', () => r())));
      const done =
        req.out === undefined
          ? exportCapture(cfg, cfg.dataDir, req, write)
          : exportToFile(cfg, cfg.dataDir, { ...req, out: req.out }).then((n) => {
              err(`wrote ${n} ${req.events ? 'events' : 'records'} to ${req.out}`);
              return n;
            });
      await done.catch((e: Error) => {
        err(e.message);
        process.exitCode = 1;
      });
    });
}

/** The options of `capture export` as commander hands them over. */
export interface ExportCliOptions {
  readonly from: string;
  readonly to: string;
  readonly format?: string;
  readonly what?: string;
  readonly events?: boolean;
  readonly venues?: string;
  readonly out?: string;
  readonly dataDir?: string;
}

/** The options checked: the request, or the message saying what is wrong. */
export function exportRequest(o: ExportCliOptions): (ExportOptions & { readonly format: ExportFormat; readonly out: string | undefined }) | string {
  const from = msOrIsoTime(o.from);
  const to = msOrIsoTime(o.to);
  if (from === undefined || to === undefined) return '--from and --to take ms since the epoch or an ISO 8601 time';
  if (from > to) return '--from is after --to';
  const format = o.format ?? 'ndjson';
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) return `unknown --format "${format}" (ndjson or parquet)`;
  if (o.what !== undefined && o.what !== 'frames' && o.what !== 'events') return `unknown --what "${o.what}" (frames or events)`;
  if (format === 'parquet' && o.out === undefined) return '--format parquet needs --out FILE';
  return { from, to, format: format as ExportFormat, events: o.events === true || o.what === 'events', venues: o.venues?.split(','), out: o.out };
}
