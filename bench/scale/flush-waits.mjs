// What overlapping `Persistence.flushed()` waits hold while LMDB lags (issue 34): a store in a
// temporary directory, WRITES puts issued (appendTrade: two each) and not yet committed, then WAITS
// `flushed()` calls not awaited (as the catalog flush's every second while commits lag), the heap
// after a full GC before and after; then the time for every wait to settle. ROOT: a built checkout
// (its dist/), so two builds can be compared.
//   node --expose-gc bench/scale/flush-waits.mjs ROOT [WRITES] [WAITS]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const root = process.argv[2] ?? '.';
const base = pathToFileURL(resolve(root)).href;
const writes = Number(process.argv[3] ?? 200_000);
const waits = Number(process.argv[4] ?? 20);
const { Persistence } = await import(`${base}/dist/src/persist/store.js`);
const dir = mkdtempSync(join(tmpdir(), 'cw-flush-'));
const p = new Persistence(dir);
const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const h0 = heap();
for (let i = 0; i < writes / 2; i++)
  p.appendTrade({
    type: 'trade',
    venue: 'venue_a',
    marketId: `M${i % 5000}`,
    instrument: `M${i % 5000}`,
    tradeId: `t${i}`,
    price: 5000,
    size: 10,
    side: 'buy',
    timestamp: 1_700_000_000_000 + i,
    localTimestamp: 1_700_000_000_000 + i,
    seq: i + 1,
  });
const h1 = heap();
const all = [];
for (let k = 0; k < waits; k++) all.push(p.flushed());
const h2 = heap();
const t0 = performance.now();
await Promise.all(all);
const ms = performance.now() - t0;
console.log(
  JSON.stringify({
    root,
    writes,
    waits,
    perWriteB: Math.round((h1 - h0) / writes),
    perWaitKiB: +((h2 - h1) / waits / 1024).toFixed(1),
    waitsHeldMiB: +((h2 - h1) / 2 ** 20).toFixed(1),
    settleMs: Math.round(ms),
  }),
);
await p.close?.();
rmSync(dir, { recursive: true, force: true });
