// Heap of persistence's open hour and day rollups at N markets, as Persistence holds them:
// node --expose-gc bench/scale/rollups-heap.mjs ROOT [N]   (ROOT: a built checkout; two stores, sharing one
// slot index where the checkout has RollupSlots). Prints V8 heap used and array buffers held, in MiB.
import { pathToFileURL } from 'node:url';

const root = process.argv[2];
const N = Number(process.argv[3] ?? 108_000);
const mod = await import(pathToFileURL(`${root}/dist/src/persist/rollups.js`).href);
const ids = Array.from({ length: N }, (_, i) => `KX-${(i * 7919).toString(36).toUpperCase()}-${i}`);
const venues = ['venue_a', 'venue_b', 'venue_e', 'venue_g', 'venue_h'];
const candle = (i, t) => ({
  venue: venues[i % 5],
  marketId: ids[i],
  t,
  o: 4000,
  h: 4100,
  l: 3900,
  c: 4050 + (i % 7),
  mid: 4025.5,
  volume: 12.5,
  trades: 3,
  bid: 4010,
  ask: 4060,
  notional: 500.25,
});
const mib = (b) => (b / 2 ** 20).toFixed(1);
gc();
gc();
const m0 = process.memoryUsage();
const slots = mod.RollupSlots ? new mod.RollupSlots() : undefined;
const hour = new mod.OpenRollups(slots);
const day = new mod.OpenRollups(slots);
for (let i = 0; i < N; i++) {
  hour.set(candle(i, 3_600_000));
  day.set(candle(i, 0));
}
gc();
gc();
const m1 = process.memoryUsage();
const t0 = performance.now();
for (let r = 0; r < 5; r++) for (let i = 0; i < N; i++) if (!hour.get(venues[i % 5], ids[i]) || !day.get(venues[i % 5], ids[i])) throw new Error('missing');
const ns = ((performance.now() - t0) * 1e6) / (5 * N);
console.log(
  JSON.stringify({
    root,
    N,
    shared: !!slots,
    heapMiB: +mib(m1.heapUsed - m0.heapUsed),
    arrayBuffersMiB: +mib(m1.arrayBuffers - m0.arrayBuffers),
    getPairNs: Math.round(ns),
    sizes: [hour.size, day.size],
  }),
);
