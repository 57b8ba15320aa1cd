// The heap the cross-venue matcher holds (issue 34): every listing of ROOT's dist/ world at sim.scale SCALE
// (default 166, the 108k service's; SYNTHETIC DATA) upserted into one fresh Matcher as MatchingService.upsert
// gives it (the key joined from venue and id, the close time in ms, the category), in a seeded shuffle. Prints
// the heap held after a full GC with the matcher kept against the same inputs without it (the inputs' strings
// are the catalog's in the service, not the matcher's), then the same listings again (a catalog refresh that
// changed nothing the matcher reads: no listing should be placed again) and once more with every tenth
// listing's outcome changed (each of those read again); and a hash of every group (`groups()`, as JSON) after
// each pass, so that two builds can be held to the same groups. OUT=file writes the last pass's groups.
//   node --expose-gc bench/scale/matcher-heap.mjs ROOT [SCALE]
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.argv[2];
const scale = Number(process.argv[3] ?? 166);
if (!root || !globalThis.gc) {
  console.error('usage: node --expose-gc bench/scale/matcher-heap.mjs ROOT [SCALE]');
  process.exit(2);
}
const dist = `${pathToFileURL(resolve(root)).href}/dist/src`;
const { loadConfig } = await import(`${dist}/config/load.js`);
const { createWorld } = await import(`${dist}/sim/world.js`);
const { Matcher } = await import(`${dist}/matching/matcher.js`);

const gcHeap = () => {
  for (let i = 0; i < 4; i++) globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const venues = loadConfig({ env: {} }).venues.filter((v) => v.enabled);
let inputs = [];
{
  // A fixed clock: the listings' times follow it, and two builds then see the same inputs.
  const world = createWorld({ seed: 11, venues, scale, depth: 1, now: () => Date.UTC(2026, 10, 30, 12) });
  for (const v of venues)
    for (const l of world.listings(v.label))
      inputs.push({
        key: [v.label, l.id].join(':'),
        platform: v.label,
        protocol: v.protocol,
        market_id: l.id,
        title: l.title,
        event_title: l.eventTitle,
        outcome: l.outcome,
        close_time: l.closeTime,
        category: l.category,
      });
}
// A seeded shuffle (mulberry32), so that venues arrive interleaved as the service's feeds list them.
let s = 5;
const rnd = () => {
  s = (s + 0x6d2b79f5) | 0;
  let t = Math.imul(s ^ (s >>> 15), 1 | s);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
for (let i = inputs.length - 1; i > 0; i--) {
  const j = Math.floor(rnd() * (i + 1));
  [inputs[i], inputs[j]] = [inputs[j], inputs[i]];
}
await new Promise((r) => setTimeout(r, 500));
const before = gcHeap();
const groupsHash = (m) => {
  const text = JSON.stringify(m.groups());
  if (process.env.OUT) writeFileSync(process.env.OUT, text);
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
};
const matcher = new Matcher();
let t0 = process.cpuUsage();
for (const x of inputs) matcher.upsert(x);
const buildCpu = process.cpuUsage(t0);
const held = gcHeap() - before;
const built = matcher.stats();
const hashBuilt = groupsHash(matcher);
// The same listings again, as fresh objects (a refresh hands new records): nothing to place.
t0 = process.cpuUsage();
for (const x of inputs) matcher.upsert({ ...x });
const relistCpu = process.cpuUsage(t0);
const relisted = matcher.stats();
const hashRelisted = groupsHash(matcher);
// Every tenth listing's outcome changed: each is read and placed again.
for (let i = 0; i < inputs.length; i += 10) matcher.upsert({ ...inputs[i], outcome: `${inputs[i].outcome ?? ''} (edited)` });
const edited = matcher.stats();
const hashEdited = groupsHash(matcher);
const heldEdited = gcHeap() - before;
const MiB = (b) => +(b / 2 ** 20).toFixed(2);
console.log(
  JSON.stringify({
    root,
    scale,
    listings: inputs.length,
    groups: built.groups,
    heldMiB: MiB(held),
    bytesPerListing: Math.round(held / inputs.length),
    buildCpuS: +((buildCpu.user + buildCpu.system) / 1e6).toFixed(2),
    relistComparisons: relisted.comparisons - built.comparisons,
    relistCpuMs: Math.round((relistCpu.user + relistCpu.system) / 1e3),
    editedComparisons: edited.comparisons - relisted.comparisons,
    heldEditedMiB: MiB(heldEdited),
    hashBuilt,
    hashRelisted,
    hashEdited,
  }),
);
