// Who holds the memory outside V8's regular pages: node --max-old-space-size=12000 bench/scale/heap-large.mjs FILE.heapsnapshot [MIN_KIB]
// Reads a V8 heap snapshot (the capacity report's streaming reader) and prints, each with its shortest path from
// the GC roots and its holder (as bench/scale/heap-holders.mjs names one: `Class.field` of a named class, `ctx:name`
// of a closure or module variable):
//  - native nodes (ArrayBuffer backing stores are `native system / JSArrayBufferData`; what process.memoryUsage()
//    counts as arrayBuffers), summed by holder and by kind, and those of MIN_KIB or more one by one;
//  - objects of 128 KiB or more (V8's large-object space: kMaxRegularHeapObjectSize is 128 KiB on x64), summed by
//    holder and listed, with the object that reached them (a Map's or Set's table shows as its `table` edge).
// No dominator tree (heap-holders.mjs has one): a shortest-path tree from the roots only, so it runs in about the
// time of the read (~1 minute at 108k markets). Run on a built checkout.
import { readGraph } from '../../dist/src/capacity/heap-owners.js';
import { edgeIndex, holderTree } from './heap-paths.mjs';

const file = process.argv[2];
const MIN = Number(process.argv[3] ?? 256) * 1024;
const LARGE = 128 * 1024;
const t0 = performance.now();
const g = readGraph(file, undefined);
const idx = edgeIndex(g);
const { n, nodeTypes, str } = idx;
console.error(`read ${n} nodes, ${g.edgeTo.length} edges in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const label = (i) => {
  const t = nodeTypes[g.type[i]];
  return t === 'object' || t === 'closure' || t === 'native' || t === 'array' || t === 'hidden' || t === 'code' ? `${t} ${str(g.name[i]).slice(0, 60)}` : t;
};
const { holder, holders, pathOf: pathTo } = holderTree(g, idx, label);
const pathOf = (i, steps = 7) => pathTo(i, steps);
const MiB = (b) => (b / 2 ** 20).toFixed(1);
const sum = (pick) => {
  const by = new Map();
  let all = 0;
  let unreached = 0;
  for (let i = 0; i < n; i++) {
    if (!pick(i)) continue;
    all += g.size[i];
    if (holder[i] < 0) {
      unreached += g.size[i];
      continue;
    }
    const k = holders[holder[i]];
    const x = by.get(k) ?? [0, 0];
    x[0] += g.size[i];
    x[1]++;
    by.set(k, x);
  }
  return { by: [...by].sort((a, b) => b[1][0] - a[1][0]), all, unreached };
};
const show = (title, pick, top = 40) => {
  const s = sum(pick);
  console.log(`\n== ${title}: ${MiB(s.all)} MiB (unreached from the roots ${MiB(s.unreached)}) by holder ==`);
  for (const [k, [b, c]] of s.by.slice(0, top)) console.log(`${MiB(b).padStart(7)}  ${String(c).padStart(7)}  ${k}`);
  const ones = [];
  for (let i = 0; i < n; i++) if (pick(i) && g.size[i] >= MIN) ones.push(i);
  ones.sort((a, b) => g.size[b] - g.size[a]);
  console.log(`-- each of ${MIN / 1024} KiB or more (${ones.length}) --`);
  for (const i of ones.slice(0, 150)) console.log(`${MiB(g.size[i]).padStart(7)}  ${label(i)}  [${holders[holder[i]] ?? 'unreached'}]  ← ${pathOf(i)}`);
};
const T = Object.fromEntries(nodeTypes.map((t, i) => [t, i]));
const kinds = new Map();
for (let i = 0; i < n; i++) if (g.type[i] === T.native) kinds.set(str(g.name[i]), (kinds.get(str(g.name[i])) ?? 0) + g.size[i]);
console.log(`== native nodes by name ==`);
for (const [k, b] of [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${MiB(b).padStart(7)}  ${k}`);
show('native nodes', (i) => g.type[i] === T.native);
show(`objects of ${LARGE / 1024} KiB or more outside native (large-object space)`, (i) => g.type[i] !== T.native && g.size[i] >= LARGE);
