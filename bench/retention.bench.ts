/**
 * One-minute candle retention (Persistence.pruneMinutes) at the 108k-market scale: how long an
 * hourly run takes and how long it holds the main thread at once, with minutes to remove and with
 * none, against appending the same minutes (the baseline). DATA_DIR is a fresh temporary
 * directory, removed at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ID_BASE, idCandleKey } from '../src/persist/keys.js';
import { Persistence } from '../src/persist/store.js';
import { begin, record, type Row } from './lib.js';

const MARKETS = Number(process.env['RETENTION_MARKETS'] ?? 108_000);
/** Minutes per market in the log; the run removes the older half. */
const MINUTES = 12;
const MIN = 60_000;
const APPEND_BATCH = 20_000;

begin(
  'Minute-candle retention',
  `The hourly removal of one-minute candles past \`persistence.minuteCandleRetentionDays\` (Persistence.pruneMinutes: a seek per market, removals committed in guarded chunks, the event loop yielded between chunks), on a log of ${MARKETS.toLocaleString('en-US')} markets × ${MINUTES} minutes, against appending the same minutes.`,
);

const dir = mkdtempSync(join(tmpdir(), 'crossbook-bench-'));
try {
  const p = new Persistence(dir);
  const log = p.db('candles');
  const t0 = 1_795_000_000_000 - (1_795_000_000_000 % MIN);
  const a0 = performance.now();
  let n = 0;
  for (let m = 0; m < MARKETS; m++) {
    for (let k = 0; k < MINUTES; k++) {
      void log.put(idCandleKey(ID_BASE + m, t0 + k * MIN), { o: 5000, h: 5100, l: 4900, c: 5050, mid: 5025, volume: 3, trades: 1 });
      if (++n % APPEND_BATCH === 0) await p.flushed();
    }
  }
  await p.flushed();
  const appendSec = (performance.now() - a0) / 1000;

  const cutoff = t0 + (MINUTES / 2) * MIN;
  const timed = async (): Promise<{ sec: number; removed: number; maxBlockMs: number }> => {
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    const s0 = performance.now();
    const removed = await p.pruneMinutes(cutoff);
    const sec = (performance.now() - s0) / 1000;
    h.disable();
    return { sec, removed, maxBlockMs: h.max / 1e6 };
  };
  const full = await timed();
  const none = await timed();
  const expected = MARKETS * (MINUTES / 2);
  if (full.removed !== expected || none.removed !== 0) throw new Error(`removed ${full.removed} then ${none.removed}, expected ${expected} then 0`);
  await p.close();

  const rows: Row[] = [
    {
      label: `append ${n.toLocaleString('en-US')} minutes (flushed every ${APPEND_BATCH.toLocaleString('en-US')})`,
      baseline: true,
      count: n,
      sec: appendSec,
      rate: n / appendSec,
    },
    {
      label: `prune: remove the older half (${full.removed.toLocaleString('en-US')} minutes)`,
      count: full.removed,
      sec: full.sec,
      rate: full.removed / full.sec,
      block: full.maxBlockMs,
    },
    { label: 'prune again: nothing to remove (a seek per market)', count: MARKETS, sec: none.sec, rate: MARKETS / none.sec, block: none.maxBlockMs },
  ];
  record(
    {
      title: 'Minute-candle retention',
      columns: [
        { key: 'count', title: 'minutes or markets' },
        { key: 'sec', title: 'seconds', digits: 2 },
        { key: 'rate', title: 'per second' },
        { key: 'block', title: 'longest main-thread block, ms', digits: 1 },
      ],
      ratio: { metric: 'sec', title: 'time vs append' },
      interpretation: `An hourly run that finds nothing to remove walks ${MARKETS.toLocaleString('en-US')} markets in ${none.sec.toFixed(2)} s; removing ${full.removed.toLocaleString('en-US')} minutes takes ${full.sec.toFixed(2)} s, ${(full.sec / appendSec).toFixed(2)}× the time to append them. Neither holds the main thread longer than ${Math.max(full.maxBlockMs, none.maxBlockMs).toFixed(1)} ms at once (event-loop delay, 5 ms resolution), so the service answers throughout.`,
      notes: ['The log is written directly (no hour/day rollups), so the append baseline is the log alone.', 'Warm page cache (the file was just written).'],
    },
    rows,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
