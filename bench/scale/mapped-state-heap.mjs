// What the main thread holds for a capture's markets, per holder (issue 34): the records of DATA_DIR's
// capture (SYNTHETIC world: a DATA_DIR of `npm start` at sim.scale N) for the venues named, replayed
// through ReplayFeed (the live frame path and mappers) and each event applied to an EngineState (the
// live `applyEvent`), as the service's main thread holds them; prints the heap after a full GC over
// the empty one's: the mappers and the state together, then with the mappers let go (the state alone).
// ROOT: a built checkout (its dist/), so two builds can be compared on the same capture.
//   node --expose-gc bench/scale/mapped-state-heap.mjs ROOT DATA_DIR [venue,venue…]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const [root, dir, only] = process.argv.slice(2);
if (!root || !dir || !global.gc) {
  console.error('usage: node --expose-gc bench/scale/mapped-state-heap.mjs ROOT DATA_DIR [venue,venue…]');
  process.exit(2);
}
const dist = `${pathToFileURL(resolve(root)).href}/dist/src`;
const { loadConfig } = await import(`${dist}/config/load.js`);
const { CaptureStore, ReplayFeed, readBatches } = await import(`${dist}/capture/index.js`);
const { EngineState, applyEvent } = await import(`${dist}/state/engine.js`);
const config = loadConfig({ env: { DATA_DIR: dir } });
const venues = only ? only.split(',') : undefined;
const settle = () => {
  for (let i = 0; i < 4; i++) global.gc();
  return process.memoryUsage().heapUsed;
};
const store = new CaptureStore(`${dir}/capture`);
const h0 = settle();
const state = new EngineState(config.venues);
// In a function of its own: the replay's iterators (and so the feed and its mappers) end with its frame.
const replay = async () => {
  const feed = new ReplayFeed(config.venues);
  let n = 0;
  for await (const items of feed.items(readBatches(store, { from: 0, to: Number.MAX_SAFE_INTEGER, venues, flushes: false })))
    for (const it of items)
      if (it.type !== 'flush') {
        applyEvent(state, it.event);
        n++;
      }
  return { n, feed: new WeakRef(feed) };
};
const { n: events, feed } = await replay();
let strong = feed.deref();
const h1 = settle();
strong = undefined;
// A WeakRef's target is kept to the end of the job that read it.
await new Promise((r) => setImmediate(r));
const h2 = settle();
if (feed.deref() !== undefined) throw new Error('the replay feed is still held: the state figure would include its mappers');
const mib = (b) => Number((b / 2 ** 20).toFixed(1));
console.log(
  JSON.stringify({
    root,
    venues: only ?? 'all',
    events,
    books: state.books.size,
    markets: state.catalog.size,
    mappersAndStateMiB: mib(h1 - h0),
    stateMiB: mib(h2 - h0),
    mappersMiB: mib(h1 - h2),
  }),
);
