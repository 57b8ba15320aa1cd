// The state's books at scale (issue 34, book20): N books in a BookStore, each given a snapshot of
// 1..DEPTH levels a side (seeded; the simulator quotes at most 8), then D deltas spread over every
// book (60% size changes, 20% inserts, 20% deletes, 80% of them at the top three levels of a side).
// MIN: the fewest levels a side gets in a snapshot (the simulator's books at 108k average 16 levels
// a book, 8 a side: MIN defaults to DEPTH - 2).
// Prints the heap and array buffers after a full GC over the empty store's, per book, and the CPU
// ns per applyDelta (the books far apart in memory, as in the service). ROOT: a built checkout (its
// dist/), so two builds can be compared, alternated.
//   node --expose-gc bench/scale/book-levels.mjs ROOT [N=145000] [D=2000000] [DEPTH=8] [MIN=DEPTH-2]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const root = process.argv[2] ?? '.';
const base = pathToFileURL(resolve(root)).href;
const N = Number(process.argv[3] ?? 145_000);
const D = Number(process.argv[4] ?? 2_000_000);
const DEPTH = Number(process.argv[5] ?? 8);
const MIN = Number(process.argv[6] ?? DEPTH - 2);
const { BookStore } = await import(`${base}/dist/src/state/books.js`);
let seed = 12345;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x80000000;
};
const settle = () => {
  for (let i = 0; i < 4; i++) global.gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, ab: m.arrayBuffers };
};
const ids = Array.from({ length: N }, (_, i) => `KX-${i}`);
const store = new BookStore();
const m0 = settle();
const T0 = Date.UTC(2026, 10, 30, 12);
const TICK = 100; // one cent
for (const id of ids) {
  const mid = 2000 + Math.floor(rnd() * 60) * TICK;
  const nb = MIN + Math.floor(rnd() * (DEPTH - MIN + 1));
  const na = MIN + Math.floor(rnd() * (DEPTH - MIN + 1));
  const bids = Array.from({ length: nb }, (_, i) => [mid - (i + 1) * TICK, 1 + Math.floor(rnd() * 500)]);
  const asks = Array.from({ length: na }, (_, i) => [mid + i * TICK, 1 + Math.floor(rnd() * 500) + 0.25]);
  store.applySnapshot({ type: 'book_snapshot', venue: 'venue_a', timestamp: T0, localTimestamp: T0, marketId: id, instrument: id, bids, asks });
}
const m1 = settle();
// Deltas drawn up front (their making is not timed): an instrument and one change each.
const evs = new Array(D);
for (let i = 0; i < D; i++) {
  const id = ids[Math.floor(rnd() * N)];
  const b = store.instrument('venue_a', id);
  const bid = rnd() < 0.5;
  const side = bid ? b.bids : b.asks;
  const r = rnd();
  const n = side.length;
  const at = rnd() < 0.8 ? Math.floor(rnd() * Math.min(3, n)) : Math.floor(rnd() * n);
  let price;
  let size = 1 + Math.floor(rnd() * 500);
  if (n === 0 || (r < 0.2 && n < DEPTH + 4)) {
    // insert next to the level drawn (a free tick on the side's inside or outside)
    const best = n === 0 ? (bid ? 4000 : 6000) : side.price(0);
    price = bid ? best + TICK : best - TICK;
    if (n > 0 && rnd() < 0.5) price = bid ? side.price(n - 1) - TICK : side.price(n - 1) + TICK;
    price = Math.max(TICK, Math.min(10_000 - TICK, price));
  } else {
    price = side.price(at);
    if (r < 0.4 && n > 1) size = 0;
  }
  const ev = {
    type: 'book_delta',
    venue: 'venue_a',
    timestamp: T0 + i,
    localTimestamp: T0 + i,
    marketId: id,
    instrument: id,
    changes: [[bid ? 'bid' : 'ask', price, size]],
  };
  store.applyDelta(ev); // applied now too, so later draws see the book as it will be
  evs[i] = ev;
}
// Timed: the same deltas again over the books as they stand (sizes and levels shift as drawn).
const t0 = process.cpuUsage();
let errs0 = store.integrityErrors;
for (let r = 0; r < 2; r++) for (let i = 0; i < D; i++) store.applyDelta(evs[i]);
const cpu = process.cpuUsage(t0);
evs.length = 0;
const m2 = settle();
let levels = 0;
for (const [, , b] of store.entries()) levels += b.count(true) + b.count(false);
console.log(
  JSON.stringify({
    root,
    books: N,
    levelsPerBook: +(levels / N).toFixed(2),
    bytesPerBookAfterSnapshots: Math.round((m1.heap + m1.ab - m0.heap - m0.ab) / N),
    heapPerBook: Math.round((m2.heap - m0.heap) / N),
    arrayBuffersPerBook: Math.round((m2.ab - m0.ab) / N),
    bytesPerBookAfterDeltas: Math.round((m2.heap + m2.ab - m0.heap - m0.ab) / N),
    totalMiB: +((m2.heap + m2.ab - m0.heap - m0.ab) / 2 ** 20).toFixed(1),
    nsPerDelta: Math.round(((cpu.user + cpu.system) * 1000) / (2 * D)),
    integrityErrors: store.integrityErrors - errs0,
  }),
);
