// What the history index's thread holds, per market, measured offline on a real capture (SYNTHETIC
// world: a DATA_DIR the simulator filled, e.g. one of `npm start` at sim.scale N):
//   node --expose-gc bench/scale/history-heap.mjs DATA_DIR [sliceMs]
// builds the index the service's thread builds (dist/src/history/index.js: the same ReplayFeed,
// mappers and open slice) over every record of the capture, in one process with no service beside
// it, and prints the heap after a full GC before and after, the open slice's events and markets,
// and bytes per market it holds, and what its replay mappers hold (the heap with them let go). sliceMs
// (default 3,600,000) keeps the whole capture in one open slice so its cost shows; the service's
// slice is 5 minutes or 200k events.
//   SLICED=1 node --expose-gc bench/scale/history-heap.mjs DATA_DIR [sliceMs]
// keeps the service's bounds (sliceMs default 300,000) so slices are written as it goes, then writes
// the last at close (`index.close`), and prints the process CPU to follow the capture apart from the
// CPU spent writing slices (`seal`, which takes the next slice's starts), the heap after a full GC
// after each slice written (the largest), and at the end. It writes DATA_DIR/capture/_history.
import { loadConfig } from '../../dist/src/config/load.js';
import { CaptureStore } from '../../dist/src/capture/index.js';
import { HISTORY_LIMITS, HistoryIndex } from '../../dist/src/history/index.js';

const dir = process.argv[2];
if (!dir || !global.gc) {
  console.error('usage: node --expose-gc bench/scale/history-heap.mjs DATA_DIR [sliceMs]');
  process.exit(2);
}
const sliced = process.env.SLICED === '1';
const sliceMs = Number(process.argv[3] ?? (sliced ? 300_000 : 3_600_000));
const mib = (b) => (b / 2 ** 20).toFixed(1);
const settle = () => {
  for (let i = 0; i < 4; i++) global.gc();
  return process.memoryUsage();
};
const config = loadConfig({ env: { DATA_DIR: dir } });
const store = new CaptureStore(`${dir}/capture`);
const m0 = settle();
// Limits lifted: the whole capture is indexed into one open slice, as measured here (SLICED: only the catch-up bound).
Object.assign(HISTORY_LIMITS, sliced ? { behind: Infinity } : { sliceEvents: Infinity, openEvents: Infinity, behind: Infinity });
const index = new HistoryIndex(store, config.venues, { sliceMs, after: 0, from: 0, tail: [] });
// Each slice written (a private method, wrapped at run time): its CPU and wall, then the heap after a full GC.
const seals = { n: 0, cpu: 0, wall: 0, heapMaxMiB: 0 };
const seal = index.seal.bind(index);
index.seal = async (...a) => {
  const c = process.cpuUsage();
  const w = performance.now();
  await seal(...a);
  const d = process.cpuUsage(c);
  seals.n++;
  seals.cpu += (d.user + d.system) / 1e6;
  seals.wall += (performance.now() - w) / 1000;
  const m = settle();
  seals.heapMaxMiB = Math.max(seals.heapMaxMiB, Number(mib(m.heapUsed + m.arrayBuffers - m0.heapUsed - m0.arrayBuffers)));
};
const t0 = performance.now();
const c0 = process.cpuUsage();
await index.sync(Number.MAX_SAFE_INTEGER);
const secs = (performance.now() - t0) / 1000;
const c1 = process.cpuUsage(c0);
const followCpu = (c1.user + c1.system) / 1e6 - seals.cpu;
const m1 = settle();
// Private fields read at run time (a bench's look inside; the index has no reason to expose them).
const events = index.openEvents;
const marketsWithEvents = index.cur.starts.size;
// Before the history index kept no state of its own (branch histstate), its books and quotes.
const marketsInState = index.state === undefined ? undefined : index.state.books.size + index.state.quotes.size;
let closing;
if (sliced) {
  const before = { ...seals };
  await index.close(Number.MAX_SAFE_INTEGER);
  closing = { cpu: Number((seals.cpu - before.cpu).toFixed(1)), wall: Number((seals.wall - before.wall).toFixed(1)) };
} else index.cur = undefined;
const m2 = settle();
const all = (m) => m.heapUsed + m.arrayBuffers;
// The replay mappers let go (the ReplayFeed's private map of venue paths, read at run time): what the
// thread holds only because it maps the frames a second time (issue 34: the thread's copy of the
// mappers). Kept for a SNAPSHOT, which prices them by owner.
let m3 = m2;
if (!process.env.SNAPSHOT) {
  index.feed.paths.clear();
  m3 = settle();
}
console.log(
  JSON.stringify({
    dir,
    records: index.lastSeq,
    secs: Number(secs.toFixed(1)),
    followCpuSecs: Number(followCpu.toFixed(1)),
    ...(sliced
      ? {
          slicesWritten: seals.n,
          sealCpuSecs: Number(seals.cpu.toFixed(1)),
          sealWallSecs: Number(seals.wall.toFixed(1)),
          heapMaxAfterSealMiB: seals.heapMaxMiB,
          closing,
        }
      : {}),
    marketsWithEvents,
    booksAndQuotesInState: marketsInState,
    openEvents: events,
    indexMiB: Number(mib(all(m1) - all(m0))),
    openSliceMiB: Number(mib(all(m1) - all(m2))),
    openSliceBytesPerEvent: Math.round((all(m1) - all(m2)) / Math.max(1, events)),
    restMiB: Number(mib(all(m2) - all(m0))),
    restBytesPerMarket: Math.round((all(m2) - all(m0)) / Math.max(1, marketsWithEvents)),
    replayMappersMiB: process.env.SNAPSHOT ? null : Number(mib(all(m2) - all(m3))),
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
