import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { msOrIsoTime } from '../access/params.js';
import { Capture, CaptureStore, captureDir, readBatches, ReplayFeed, type CaptureRecord } from '../capture/index.js';
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
): Promise<{ readonly frames: number; readonly venue: string; readonly from: number; readonly to: number }> {
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
  return { frames: frames.length, venue: venue.label, from, to: t };
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

/**
 * `crossbook capture export`: a window of the capture as NDJSON, frames as captured (one record a
 * line: seq, venue, recv_ts, kind, conn, payload) or, with `events`, the normalized events the live
 * mappers make of them; the last line is `{"type":"end","count":N}`. `write` may return a promise
 * (stdout's drain), which is awaited before the next chunk.
 */
export async function exportCapture(config: Config, dataDir: string, opts: ExportOptions, write: (chunk: string) => void | Promise<void>): Promise<number> {
  const store = new CaptureStore(captureDir(dataDir));
  const labels = opts.venues?.map((v) => {
    const found = config.venues.find((x) => x.label === v || x.slug === v);
    if (!found) throw new Error(`unknown venue ${v}`);
    return found.label;
  });
  const batches = readBatches(store, { from: opts.from, to: opts.to, venues: labels, flushes: !opts.events });
  const chunks = opts.events
    ? ndjsonChunks(new ReplayFeed(config.venues, log).items(batches), itemLine(eventLineWriter(config.venues)))
    : ndjsonChunks<CaptureRecord>(batches, recordLine);
  let last = '';
  for await (const c of chunks) {
    last = c;
    await write(c);
  }
  const end = /\{"type":"(end|error)".*\}\n$/.exec(last);
  if (end?.[1] === 'error') throw new Error(`capture export stopped: ${(JSON.parse(end[0]) as { error: string }).error}`);
  return end ? (JSON.parse(end[0]) as { count: number }).count : 0;
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
      } else err(`imported ${r.frames} frames of ${r.venue}, receive times ${new Date(r.from).toISOString()} .. ${new Date(r.to).toISOString()}`);
    });
  c.command('export')
    .description('write a window of the capture as NDJSON: the frames as captured, or with --events the normalized events the mappers make of them')
    .requiredOption('--from <time>', 'start (ms or ISO 8601)')
    .requiredOption('--to <time>', 'end, inclusive (ms or ISO 8601)')
    .addOption(new Option('--format <format>', 'output format').choices(['ndjson']).default('ndjson'))
    .option('--events', 'normalized events instead of frames')
    .option('--venues <list>', 'comma-separated venue labels or slugs (default: all)')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (o: { from: string; to: string; events?: boolean; venues?: string; dataDir?: string }) => {
      const from = msOrIsoTime(o.from);
      const to = msOrIsoTime(o.to);
      if (from === undefined || to === undefined || from > to) {
        err(from === undefined || to === undefined ? '--from and --to take ms since the epoch or an ISO 8601 time' : '--from is after --to');
        process.exitCode = 2;
        return;
      }
      const cfg = config(o);
      const write = (s: string): Promise<void> | void => (process.stdout.write(s) ? undefined : new Promise((r) => process.stdout.once('drain', () => r())));
      await exportCapture(cfg, cfg.dataDir, { from, to, events: o.events, venues: o.venues?.split(',') }, write).catch((e: Error) => {
        err(e.message);
        process.exitCode = 1;
      });
    });
}
