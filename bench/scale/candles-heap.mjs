// Heap held by the state's open one-minute candles (SYNTHETIC observations):
// node --expose-gc bench/scale/candles-heap.mjs ROOT [markets] [rounds]
// ROOT: a built checkout (its dist/src/state/candles.js). Opens one candle for each of `markets` markets over
// 8 venues (default 88,800: the open candles a heap snapshot of the 108k service held 60 s after listing),
// each observed `rounds` times (default 4) as the engine does: integer prices, a mid that is half a unit off
// in one market of three, bid and ask, a trade of a fractional size in one observation of five; then reports
// the heap held (after a full GC) with the store, against before it, and the time of the observe calls.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const root = process.argv[2];
const markets = Number(process.argv[3] ?? 88_800);
const rounds = Number(process.argv[4] ?? 4);
const { CandleStore } = await import(pathToFileURL(join(root, 'dist/src/state/candles.js')).href);
const T = Date.UTC(2026, 10, 29, 12, 0);
const venues = Array.from({ length: 8 }, (_, i) => `venue_${String.fromCharCode(97 + i)}`);
const ids = Array.from({ length: markets }, (_, i) => `MKT-${((i * 2654435761) % 1e9).toString(36)}-${i}`);
const gcHeap = () => {
  for (let i = 0; i < 4; i++) globalThis.gc();
  return process.memoryUsage();
};
const before = gcHeap();
const store = new CandleStore();
let x = 0.41;
const next = () => (x = (x * 7919 + 0.173) % 1);
const t0 = process.cpuUsage();
for (let r = 0; r < rounds; r++)
  for (let i = 0; i < markets; i++) {
    const price = 100 + Math.floor(next() * 9800);
    const mid = i % 3 === 0 ? price + 0.5 : price;
    const traded = next() < 0.2;
    const size = traded ? Math.round(next() * 2500) / 100 : 0;
    store.observe(venues[i % 8], ids[i], price, mid, size, T + r * 10_000 + (i % 1000), price - 50, price + 50, traded ? price * size : 0);
  }
const cpu = process.cpuUsage(t0);
const after = gcHeap();
let open = 0;
for (const _ of store.openCandles()) open++;
const MiB = (b) => (b / 2 ** 20).toFixed(2);
console.log(
  JSON.stringify({
    root,
    markets,
    open,
    heldHeapMiB: +MiB(after.heapUsed - before.heapUsed),
    heldArrayBuffersMiB: +MiB(after.arrayBuffers - before.arrayBuffers),
    bytesPerCandle: Math.round((after.heapUsed - before.heapUsed + after.arrayBuffers - before.arrayBuffers) / open),
    observeNs: Math.round(((cpu.user + cpu.system) * 1000) / (markets * rounds)),
  }),
);
