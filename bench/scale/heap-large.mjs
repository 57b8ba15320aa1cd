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

const file = process.argv[2];
const MIN = Number(process.argv[3] ?? 256) * 1024;
const LARGE = 128 * 1024;
const t0 = performance.now();
const g = readGraph(file, undefined);
const str = (i) => g.names.get(i) ?? '';
const n = g.type.length;
const m = g.edgeTo.length;
console.error(`read ${n} nodes, ${m} edges in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const nodeTypes = g.meta.node_types[0];
const edgeTypes = g.meta.edge_types[0];
const ET = Object.fromEntries(edgeTypes.map((t, i) => [t, i]));
const first = new Uint32Array(n + 1);
for (let i = 0, e = 0; i < n; i++) {
  first[i] = e;
  e += g.edgeCount[i];
}
first[n] = m;
const skip = (e) => g.edgeType[e] === ET.weak || g.edgeType[e] === ET.shortcut;
const NONE = 0xffffffff;
const label = (i) => {
  const t = nodeTypes[g.type[i]];
  return t === 'object' || t === 'closure' || t === 'native' || t === 'array' || t === 'hidden' || t === 'code' ? `${t} ${str(g.name[i]).slice(0, 60)}` : t;
};
const edgeLabel = (e) => {
  const t = edgeTypes[g.edgeType[e]];
  return t === 'element' || t === 'hidden' ? `[${g.edgeName[e]}]` : str(g.edgeName[e]);
};
const GENERIC = new Set(['Object', 'Array', 'Map', 'Set', 'system', '(object properties)', '(object elements)', 'Function', 'Promise', 'WeakMap', 'Error']);
const via = new Uint32Array(n).fill(NONE);
const holder = new Int32Array(n).fill(-1);
const holders = ['(root)'];
const holderIdx = new Map([['(root)', 0]]);
const hid = (s) => {
  let h = holderIdx.get(s);
  if (h === undefined) {
    h = holders.length;
    holders.push(s);
    holderIdx.set(s, h);
  }
  return h;
};
{
  const queue = new Uint32Array(n);
  let head = 0;
  let tail = 0;
  queue[tail++] = 0;
  holder[0] = 0;
  while (head < tail) {
    const v = queue[head++];
    const vt = nodeTypes[g.type[v]];
    const vName = str(g.name[v]);
    const named = vt === 'object' && !GENERIC.has(vName) && !vName.startsWith('(') && !vName.startsWith('system');
    for (let e = first[v]; e < first[v + 1]; e++) {
      if (skip(e)) continue;
      const w = g.edgeTo[e];
      if (holder[w] !== -1) continue;
      via[w] = e;
      let h = holder[v];
      const et = edgeTypes[g.edgeType[e]];
      if (named && (et === 'property' || et === 'internal')) h = hid(`${vName}.${edgeLabel(e)}`);
      else if (et === 'context' && holders[holder[v]].indexOf('ctx:') === -1) h = hid(`${holders[holder[v]]} ctx:${edgeLabel(e)}`);
      else if (et === 'context') h = hid(`ctx:${edgeLabel(e)}`);
      holder[w] = h;
      queue[tail++] = w;
    }
  }
}
const from = (e) => {
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (first[mid] <= e) lo = mid;
    else hi = mid - 1;
  }
  return lo;
};
const pathOf = (i, steps = 7) => {
  const out = [];
  for (let at = i, k = 0; k < steps && at !== 0 && via[at] !== NONE; k++) {
    const e = via[at];
    at = from(e);
    out.unshift(`${label(at)}.${edgeLabel(e)}`);
  }
  return out.join(' → ');
};
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
