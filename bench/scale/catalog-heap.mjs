// The heap the market catalog holds (issue 34): every record of FILE (JSON lines of stored catalog
// records, e.g. dumped from the LMDB of a `npm start` at sim.scale 166: SYNTHETIC DATA) applied to a
// fresh MarketCatalog of ROOT's dist/ as the upsert each was made from (each line parsed on its own, as
// a venue's document gives fresh strings), then the same listing again (what a catalog refresh does:
// nothing changes) and once more with one field of every market changed. Prints the heap held after a
// full GC against the empty catalog's, and the changes each pass counted (the same in any build).
// STRIP=extra,url drops those fields from every upsert first (what they cost, for comparison).
//   node --expose-gc bench/scale/catalog-heap.mjs ROOT FILE
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const [root, file] = process.argv.slice(2);
if (!root || !file || !globalThis.gc) {
  console.error('usage: node --expose-gc bench/scale/catalog-heap.mjs ROOT FILE');
  process.exit(2);
}
const dist = `${pathToFileURL(resolve(root)).href}/dist/src`;
const { loadConfig } = await import(`${dist}/config/load.js`);
const { EngineState } = await import(`${dist}/state/engine.js`);
const strip = (process.env.STRIP ?? '').split(',').filter(Boolean);
const cfg = loadConfig({ env: {} });
const gcHeap = () => {
  for (let i = 0; i < 4; i++) globalThis.gc();
  return process.memoryUsage().heapUsed;
};
/** One pass over FILE: each line as the upsert it was stored from (localTimestamp moved by `dt`), `edit` applied. */
const pass = async (catalog, dt, edit) => {
  let changed = 0;
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    const { firstSeenAt, recordedAt: _r, updatedAt: _u, ...rest } = JSON.parse(line);
    for (const f of strip) delete rest[f];
    const ev = { type: 'market', ...rest, timestamp: firstSeenAt, localTimestamp: firstSeenAt + dt };
    edit?.(ev);
    if (catalog.upsert(ev) !== undefined) changed++;
  }
  return changed;
};
const state = new EngineState(cfg.venues);
const catalog = state.catalog;
const before = gcHeap();
const added = await pass(catalog, 0);
const held = gcHeap() - before;
const relisted = await pass(catalog, 1_000);
const heldRelisted = gcHeap() - before;
// A status or a title change is what a refresh most often brings; here every market's title.
const edited = await pass(catalog, 2_000, (ev) => (ev.title = `${ev.title} (edited)`));
const heldEdited = gcHeap() - before;
const MiB = (b) => +(b / 2 ** 20).toFixed(2);
console.log(
  JSON.stringify({
    root,
    strip: strip.join(',') || undefined,
    markets: catalog.size,
    added,
    relistedChanged: relisted,
    editedChanged: edited,
    heldMiB: MiB(held),
    bytesPerMarket: Math.round(held / catalog.size),
    heldRelistedMiB: MiB(heldRelisted),
    heldEditedMiB: MiB(heldEdited),
  }),
);
