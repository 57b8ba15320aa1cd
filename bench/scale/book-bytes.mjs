// Heap per state book (issue 34): N books of one venue, each given a two-level snapshot and a delta
// of its bids, the heap after a full GC over the empty state's, per book. ROOT: a built checkout (its
// dist/), so two builds can be compared.
//   node --expose-gc bench/scale/book-bytes.mjs ROOT [N]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const root = process.argv[2] ?? '.';
const base = pathToFileURL(resolve(root)).href;
const N = Number(process.argv[3] ?? 100_000);
const { loadConfig } = await import(`${base}/dist/src/config/load.js`);
const { EngineState, applyEvent } = await import(`${base}/dist/src/state/engine.js`);
const config = loadConfig({ env: {} });
const state = new EngineState(config.venues);
const settle = () => {
  for (let i = 0; i < 4; i++) global.gc();
  return process.memoryUsage().heapUsed;
};
const ids = Array.from({ length: N }, (_, i) => `KX-${i}`);
const h0 = settle();
const T0 = Date.UTC(2026, 10, 29, 12);
for (const id of ids)
  applyEvent(state, {
    type: 'book_snapshot',
    venue: 'venue_a',
    timestamp: T0,
    localTimestamp: T0,
    marketId: id,
    instrument: id,
    bids: [
      [4000, 5],
      [3900, 7],
    ],
    asks: [
      [6000, 5],
      [6100, 3],
    ],
  });
for (const id of ids)
  applyEvent(state, {
    type: 'book_delta',
    venue: 'venue_a',
    timestamp: T0 + 1,
    localTimestamp: T0 + 1,
    marketId: id,
    instrument: id,
    changes: [['bid', 4000, 6]],
  });
const h1 = settle();
const b = state.books.instrument('venue_a', ids[7]);
console.log(JSON.stringify({ root, books: N, bytesPerBook: Math.round((h1 - h0) / N), changedBid: b.changedBid, changedAsk: b.changedAsk }));
