/**
 * `crossbook capture export` (src/cli/capture.ts, src/capture/parquet.ts): a window of the capture
 * written as NDJSON (the baseline) and as Parquet, normalized events and frames, for a window and
 * one four times as long, with the peak memory each export held. The Parquet writer holds one row
 * group at a time, so its peak should not grow with the window.
 *
 * Synthetic, seeded traffic in Kalshi's wire format (bench/gen.ts): snapshots of every market, then
 * deltas, written through the real capture writer to a temporary DATA_DIR. Env: EXPORT_DELTAS (the
 * short window; the long one is four times that), EXPORT_MARKETS.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Capture, CaptureStore, captureDir } from '../src/capture/index.js';
import { exportToFile, type ExportFormat } from '../src/cli/capture.js';
import { loadConfig } from '../src/config/load.js';
import { VirtualClock } from '../src/core/clock.js';
import { log } from '../src/core/log.js';
import { kalshiStream, T0 } from './gen.js';
import { begin, record, type Row } from './lib.js';

const num = (name: string, def: number): number => Number(process.env[name] ?? def);
const DELTAS = num('EXPORT_DELTAS', 100_000);
const MARKETS = num('EXPORT_MARKETS', 1_000);
/** Rows per Parquet row group here: small enough that even the short window fills several, so both windows hold full groups. */
const GROUP_ROWS = num('EXPORT_GROUP_ROWS', 25_000);
/** Receive-time spacing of the frames written, ms. */
const STEP = 2;

const config = loadConfig({ env: {} });
const kalshi = config.venues.find((v) => v.protocol === 'kalshi')!;
const stream = kalshiStream({ seed: 11, markets: MARKETS, sids: Math.ceil(MARKETS / 200), levels: 10, deltas: 4 * DELTAS });
const frames = [...stream.snapshots, ...stream.deltas];

/** Heap and buffers in use, the figure a row group held in memory shows up in. */
const inUse = (): number => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const gc = (globalThis as { gc?: () => void }).gc;

/** One export, timed (nothing else running beside it). */
async function timed(dataDir: string, out: string, format: ExportFormat, events: boolean, to: number): Promise<{ sec: number; count: number; bytes: number }> {
  const t0 = performance.now();
  const count = await exportToFile(config, dataDir, { from: 0, to, events, format, out, rowGroupRows: GROUP_ROWS });
  const sec = (performance.now() - t0) / 1000;
  const bytes = statSync(out).size;
  rmSync(out);
  return { sec, count, bytes };
}

/**
 * The same Parquet export again, for the memory it holds: as each row group is about to be written
 * (its rows all held, where the export peaks: `onRowGroup`), a full GC and a reading of heap +
 * buffers in use above the start, so the figure is live memory, not garbage, at the same point of
 * every group (a timer would starve: the export yields to the event loop only on file I/O).
 * Undefined without --expose-gc.
 */
async function held(dataDir: string, out: string, format: ExportFormat, events: boolean, to: number): Promise<number | undefined> {
  if (gc === undefined) return undefined;
  gc();
  const before = inUse();
  let peak = 0;
  const onRowGroup = (): void => {
    gc();
    peak = Math.max(peak, inUse());
  };
  await exportToFile(config, dataDir, { from: 0, to, events, format, out, rowGroupRows: GROUP_ROWS, onRowGroup });
  rmSync(out);
  // Against the lower of the readings before and after the export: buffers of the run before it
  // may still count before (their memory is given back lazily), and are gone after.
  gc();
  return Math.max(0, peak - Math.min(before, inUse()));
}

begin(
  'Capture export',
  `\`crossbook capture export\` of a window of the capture as NDJSON (the baseline) and as Parquet (hyparquet-writer, Snappy, row groups of ${GROUP_ROWS.toLocaleString('en-US')} rows here so both windows fill several; the command's default is 100,000), for normalized events and for frames, over a window and one four times as long, with the live memory each Parquet export held. ${MARKETS.toLocaleString('en-US')} Kalshi markets of 10 levels a side, then ${DELTAS.toLocaleString('en-US')} and ${(4 * DELTAS).toLocaleString('en-US')} deltas (synthetic, seeded, bench/gen.ts), written through the real capture writer.`,
);
const dir = mkdtempSync(join(tmpdir(), 'cb-export-bench-'));
try {
  const cap = new Capture(new CaptureStore(captureDir(dir)), { clock: new VirtualClock(T0), log });
  const w = cap.venue(kalshi.label);
  frames.forEach((f, i) => w.frame(f, 1, T0 + i * STEP));
  await cap.close();
  const short = T0 + (stream.snapshots.length + DELTAS - 1) * STEP;
  const long = T0 + (frames.length - 1) * STEP;
  const rows: Row[] = [];
  const peaks: Record<string, number> = {};
  for (const [what, events] of [
    ['events', true],
    ['frames', false],
  ] as const)
    for (const [window, to] of [
      ['1×', short],
      ['4×', long],
    ] as const)
      for (const format of ['ndjson', 'parquet'] as const) {
        const out = join(dir, `out.${format}`);
        const r = await timed(dir, out, format, events, to);
        const peak = format === 'parquet' ? await held(dir, out, format, events, to) : undefined;
        if (peak !== undefined) peaks[`${what} ${window}`] = peak;
        rows.push({
          label: `${what}, ${window} window, ${format}`,
          group: `${what} ${window}`,
          baseline: format === 'ndjson',
          count: r.count,
          sec: r.sec,
          rate: r.count / r.sec,
          mib: r.bytes / 1024 ** 2,
          peak: peak === undefined ? undefined : peak / 1024 ** 2,
        });
      }
  // Bounded: the long window's peak is within 1.5× the short one's, or within SLACK of it (a short
  // window's peak can be near zero, and a sampler can miss a spike of either).
  const SLACK = 8 * 1024 ** 2;
  const mib = (what: string, w: string): string => `${(peaks[`${what} ${w}`]! / 1024 ** 2).toFixed(1)} MiB`;
  const within = (what: string): boolean => peaks[`${what} 4×`]! <= Math.max(1.5 * peaks[`${what} 1×`]!, peaks[`${what} 1×`]! + SLACK);
  const bounded = within('events') && within('frames');
  record(
    {
      title: 'NDJSON and Parquet exports of a window',
      columns: [
        { key: 'count', title: 'events or records' },
        { key: 'sec', title: 'seconds', digits: 2 },
        { key: 'rate', title: 'per second' },
        { key: 'mib', title: 'file MiB', digits: 1 },
        { key: 'peak', title: 'live MiB held (peak)', digits: 1 },
      ],
      ratio: { metric: 'rate', title: 'rate vs NDJSON' },
      target: { text: 'Parquet export memory bounded: the 4× window holds at most 1.5× the peak of the 1× window (or 8 MiB more)', met: bounded },
      interpretation: `Live memory held at peak, 1× then 4× the window: events ${mib('events', '1×')} and ${mib('events', '4×')}, frames ${mib('frames', '1×')} and ${mib('frames', '4×')} in Parquet: ${bounded ? 'the writer holds one row group at a time, whatever the window' : "live memory grows with the window, so more than one row group's worth is held"}. Parquet files are ${((rows[0]!['mib'] as number) / (rows[1]!['mib'] as number)).toFixed(0)}× smaller than the NDJSON of the same events. The events table has a row per book level, so it has more rows than the NDJSON has lines.`,
      notes: [
        'Live memory of the Parquet exports from a second run of each: as each row group is about to be written (its rows all held), a full GC, then heap + buffers in use, above the lower of the readings before and after the export (run with --expose-gc). The timed run has no sampling in it.',
        'Both formats read the capture and run the live mapper (events) the same way; the difference is the writing.',
      ],
    },
    rows,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
