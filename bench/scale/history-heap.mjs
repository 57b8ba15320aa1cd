// What the history index's thread holds, per market, measured offline on a real capture (SYNTHETIC
// world: a DATA_DIR the simulator filled, e.g. one of `npm start` at sim.scale N):
//   node --expose-gc bench/scale/history-heap.mjs DATA_DIR [sliceMs]
// builds the index the service's thread builds (dist/src/history/index.js: the same ReplayFeed,
// mappers, EngineState and open slice) over every record of the capture, in one process with no
// service beside it, and prints the heap after a full GC before and after, the open slice's events
// and markets, and bytes per market the state holds. sliceMs (default 3,600,000) keeps the whole
// capture in one open slice so its cost shows; the service's slice is 5 minutes or 200k events.
import { loadConfig } from '../../dist/src/config/load.js';
import { CaptureStore } from '../../dist/src/capture/index.js';
import { HISTORY_LIMITS, HistoryIndex } from '../../dist/src/history/index.js';

const dir = process.argv[2];
if (!dir || !global.gc) {
  console.error('usage: node --expose-gc bench/scale/history-heap.mjs DATA_DIR [sliceMs]');
  process.exit(2);
}
const sliceMs = Number(process.argv[3] ?? 3_600_000);
const mib = (b) => (b / 2 ** 20).toFixed(1);
const settle = () => {
  for (let i = 0; i < 4; i++) global.gc();
  return process.memoryUsage();
};
const config = loadConfig({ env: { DATA_DIR: dir } });
const store = new CaptureStore(`${dir}/capture`);
const m0 = settle();
// Limits lifted: the whole capture is indexed into one open slice, as measured here.
Object.assign(HISTORY_LIMITS, { sliceEvents: Infinity, openEvents: Infinity, behind: Infinity });
const index = new HistoryIndex(store, config.venues, { sliceMs, after: 0, from: 0, tail: [] });
const t0 = performance.now();
await index.sync(Number.MAX_SAFE_INTEGER);
const secs = (performance.now() - t0) / 1000;
const m1 = settle();
// Private fields read at run time (a bench's look inside; the index has no reason to expose them).
const events = index.openEvents;
const marketsWithEvents = index.cur.starts.size;
const marketsInState = index.state.books.size + index.state.quotes.size;
index.cur = undefined;
const m2 = settle();
const all = (m) => m.heapUsed + m.arrayBuffers;
console.log(
  JSON.stringify({
    dir,
    records: index.lastSeq,
    secs: Number(secs.toFixed(1)),
    marketsWithEvents,
    booksAndQuotesInState: marketsInState,
    openEvents: events,
    indexMiB: Number(mib(all(m1) - all(m0))),
    openSliceMiB: Number(mib(all(m1) - all(m2))),
    openSliceBytesPerEvent: Math.round((all(m1) - all(m2)) / Math.max(1, events)),
    restMiB: Number(mib(all(m2) - all(m0))),
    restBytesPerMarket: Math.round((all(m2) - all(m0)) / Math.max(1, marketsWithEvents)),
  }),
);
if (process.env.SNAPSHOT) {
  // What the index holds besides its open slice, by owner (src/capacity/heap-owners.ts).
  const { writeHeapSnapshot } = await import('node:v8');
  const { heapOwners } = await import('../../dist/src/capacity/heap-owners.js');
  const file = writeHeapSnapshot(`${process.env.SNAPSHOT}`);
  const r = heapOwners(file, true);
  for (const [c, b] of Object.entries(r.byComponent))
    console.log(
      `${c.padEnd(10)} ${mib(b).padStart(7)} MiB  (${r.byName[c]
        .slice(0, 10)
        .map(([n, x]) => `${n} ${mib(x)}`)
        .join('; ')})`,
    );
  console.log(index.state === undefined ? '' : `index kept for the snapshot: ${index.lastSeq}`);
}
