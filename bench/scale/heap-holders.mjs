// Who holds a heap, precisely: node --max-old-space-size=12000 bench/scale/heap-holders.mjs FILE.heapsnapshot [TOP]
// Reads a V8 heap snapshot as a stream (the text of one at 108k markets is longer than V8's longest string),
// computes the dominator tree (Cooper–Harvey–Kennedy over a reverse postorder; weak edges skipped) and prints:
//  - by holder: each object's self size under the nearest holder on its shortest path from the GC roots, a holder
//    being `Class.field` for an instance of a named class (not Object/Array/Map/Set) and the field it was reached
//    through, or `ctx:name` for a closure or module variable; the holder of what neither names is its parent's;
//  - the TOP objects by retained size (what freeing them would free), with the path that reached them.
// For the components of a capacity report see src/capacity/heap-owners.ts; this is the finer view of "other".
// Cost at 108k (7.9M nodes, 36M edges): 50 s to read, then the dominators in 8 rounds (40 s) on one snapshot and in
// 95 rounds (13 minutes) on another: the iteration converges slowly on some graphs.
// The snapshot is read by the capacity report's streaming reader (src/capacity/heap-owners.ts, every string kept:
// its first 80 characters, up to a first escape). Run on a built checkout.
import { readGraph } from '../../dist/src/capacity/heap-owners.js';
import { edgeIndex, holderTree, NONE } from './heap-paths.mjs';

const file = process.argv[2];
const TOP = Number(process.argv[3] ?? 60);

const t0 = performance.now();
const g = readGraph(file, undefined);
const m = g.edgeTo.length;
const idx = edgeIndex(g);
const { n, nodeTypes, first, skip, str } = idx;
console.error(`read ${n} nodes, ${m} edges in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const T = Object.fromEntries(nodeTypes.map((t, i) => [t, i]));

// --- reverse postorder (iterative DFS from the root) ---
const post = new Uint32Array(n); // post[i] = postorder number of node i (+1; 0 = unreached)
const order = new Uint32Array(n); // order[k] = node with postorder k
{
  const stack = new Uint32Array(n);
  const edgeAt = new Uint32Array(n);
  const seen = new Uint8Array(n);
  let sp = 0;
  let k = 0;
  stack[sp++] = 0;
  seen[0] = 1;
  edgeAt[0] = first[0];
  while (sp > 0) {
    const v = stack[sp - 1];
    let e = edgeAt[v];
    const end = first[v + 1];
    while (e < end && (skip(e) || seen[g.edgeTo[e]])) e++;
    if (e < end) {
      edgeAt[v] = e + 1;
      const w = g.edgeTo[e];
      seen[w] = 1;
      edgeAt[w] = first[w];
      stack[sp++] = w;
    } else {
      sp--;
      order[k] = v;
      post[v] = ++k;
    }
  }
  var reached = k;
}
console.error(`reached ${reached} of ${n} nodes`);

// --- predecessors (reverse edges among reached nodes) ---
const predCount = new Uint32Array(n + 1);
for (let v = 0; v < n; v++) {
  if (!post[v]) continue;
  for (let e = first[v]; e < first[v + 1]; e++) if (!skip(e)) predCount[g.edgeTo[e] + 1]++;
}
for (let i = 0; i < n; i++) predCount[i + 1] += predCount[i];
const preds = new Uint32Array(predCount[n]);
{
  const fill = predCount.slice(0, n);
  for (let v = 0; v < n; v++) {
    if (!post[v]) continue;
    for (let e = first[v]; e < first[v + 1]; e++) if (!skip(e)) preds[fill[g.edgeTo[e]]++] = v;
  }
}

// --- dominators, by postorder numbers ---
const idom = new Uint32Array(n).fill(NONE); // node -> node
idom[0] = 0;
{
  let changed = true;
  let rounds = 0;
  while (changed) {
    changed = false;
    rounds++;
    for (let k = reached - 1; k >= 0; k--) {
      const b = order[k];
      if (b === 0) continue;
      let nd = NONE;
      for (let p = predCount[b]; p < predCount[b + 1]; p++) {
        const q = preds[p];
        if (idom[q] === NONE) continue;
        if (nd === NONE) {
          nd = q;
          continue;
        }
        let f1 = q;
        let f2 = nd;
        while (f1 !== f2) {
          while (post[f1] < post[f2]) f1 = idom[f1];
          while (post[f2] < post[f1]) f2 = idom[f2];
        }
        nd = f1;
      }
      if (idom[b] !== nd) {
        idom[b] = nd;
        changed = true;
      }
    }
  }
  console.error(`dominators in ${rounds} rounds, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
// retained sizes: children before parents = increasing postorder
const retained = new Float64Array(n);
for (let k = 0; k < reached; k++) {
  const v = order[k];
  retained[v] += g.size[v];
  if (v !== 0) retained[idom[v]] += retained[v];
}

// --- BFS shortest-path tree, with holder labels ---
const label = (i) => {
  const t = nodeTypes[g.type[i]];
  return t === 'object' || t === 'closure' || t === 'native'
    ? `${t} ${str(g.name[i])}`
    : t === 'string' || t === 'concatenated string' || t === 'sliced string'
      ? t
      : `${t}`;
};
const { holder, holders, edgeLabel, pathOf: pathTo } = holderTree(g, idx, label);
const pathOf = (i, steps = 5) => pathTo(i, steps);
const MiB = (b) => (b / 2 ** 20).toFixed(1);
let total = 0;
for (let i = 0; i < n; i++) if (holder[i] >= 0) total += g.size[i];
console.log(`total reachable ${MiB(total)} MiB, ${n} nodes`);

// self size by holder, with the top node labels within
const byHolder = new Float64Array(holders.length);
const byHolderLabel = new Map();
for (let i = 0; i < n; i++) {
  const h = holder[i];
  if (h < 0) continue;
  byHolder[h] += g.size[i];
  const key = `${h}\u0000${label(i)}`;
  byHolderLabel.set(key, (byHolderLabel.get(key) ?? 0) + g.size[i]);
}
const perHolder = new Map();
for (const [key, b] of byHolderLabel) {
  const [h, l] = key.split('\u0000');
  const a = perHolder.get(+h) ?? [];
  a.push([l, b]);
  perHolder.set(+h, a);
}
console.log(`\n== by holder (self sizes, shortest-path tree), top ${TOP} ==`);
[...byHolder.keys()]
  .sort((a, b) => byHolder[b] - byHolder[a])
  .slice(0, TOP)
  .forEach((h) => {
    const parts = perHolder
      .get(h)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([l, b]) => `${l} ${MiB(b)}`)
      .join(', ');
    console.log(`${MiB(byHolder[h]).padStart(7)}  ${holders[h]}   [${parts}]`);
  });

// top retained: nodes with retained >= 1 MiB that are not dominated by another such node of the list of the same
// size chain — print the biggest objects whose retained is > 0.5 MiB and whose idom's retained is much larger.
console.log(`\n== top ${TOP} objects by retained size (dominator tree), excluding roots/synthetic ==`);
const cand = [];
for (let i = 1; i < n; i++) {
  if (!post[i] || retained[i] < 2 ** 20) continue;
  const t = nodeTypes[g.type[i]];
  if (t === 'synthetic') continue;
  cand.push(i);
}
cand.sort((a, b) => retained[b] - retained[a]);
for (const i of cand.slice(0, TOP * 2)) {
  console.log(`${MiB(retained[i]).padStart(7)} self ${MiB(g.size[i]).padStart(6)}  ${label(i)}  ← ${pathOf(i)}`);
}

// the dominator children of the biggest few, one level down, by label
const children = new Map();
for (let i = 1; i < n; i++) {
  if (!post[i]) continue;
  const d = idom[i];
  if (retained[d] < 8 * 2 ** 20) continue;
  let c = children.get(d);
  if (!c) children.set(d, (c = new Map()));
  const l = label(i);
  const x = c.get(l) ?? [0, 0];
  x[0] += retained[i];
  x[1]++;
  c.set(l, x);
}
console.log(`\n== objects retaining >= 8 MiB: their dominator children by label (retained MiB, count) ==`);
for (const i of cand.filter((i) => retained[i] >= 8 * 2 ** 20).slice(0, TOP)) {
  const c = [...(children.get(i) ?? [])].sort((a, b) => b[1][0] - a[1][0]).slice(0, 6);
  console.log(`${MiB(retained[i]).padStart(7)}  ${label(i)} ← ${pathOf(i, 3)}\n          ${c.map(([l, [b, k]]) => `${l} ${MiB(b)} (${k})`).join('; ')}`);
}

// DETAIL=Class,Class…: for each listed class, its instances' retained size field by field (a field's
// target counted when the instance dominates it), and one level into each field that is a Map or array:
// the retained sizes of what its table dominates, by label.
if (process.env.DETAIL) {
  const want = new Set(process.env.DETAIL.split(','));
  const isObj = T.object;
  const tableKids = (t) => {
    const agg = new Map();
    for (let e = first[t]; e < first[t + 1]; e++) {
      if (skip(e)) continue;
      const w = g.edgeTo[e];
      if (idom[w] !== t) continue;
      const l = label(w);
      const x = agg.get(l) ?? [0, 0];
      x[0] += retained[w];
      x[1]++;
      agg.set(l, x);
    }
    return [...agg]
      .sort((a, b) => b[1][0] - a[1][0])
      .slice(0, 5)
      .map(([l, [b, k]]) => `${l} ${MiB(b)}/${k}`)
      .join(', ');
  };
  const perClass = new Map();
  for (let i = 0; i < n; i++) {
    if (g.type[i] !== isObj || !post[i]) continue;
    const c = str(g.name[i]);
    if (!want.has(c)) continue;
    let p = perClass.get(c);
    if (!p) perClass.set(c, (p = { n: 0, self: 0, ret: 0, fields: new Map() }));
    p.n++;
    p.self += g.size[i];
    p.ret += retained[i];
    for (let e = first[i]; e < first[i + 1]; e++) {
      if (skip(e)) continue;
      const w = g.edgeTo[e];
      const f = edgeLabel(e);
      let x = p.fields.get(f);
      if (!x) p.fields.set(f, (x = { dom: 0, k: 0, sample: -1, label: label(w) }));
      if (idom[w] === i) {
        x.dom += retained[w];
        x.k++;
        if (x.sample < 0 || retained[w] > retained[x.sample]) x.sample = w;
      }
    }
  }
  console.log(`\n== DETAIL: per class, retained by field (MiB) ==`);
  for (const [c, p] of perClass) {
    console.log(`${c}: ${p.n} instances, self ${MiB(p.self)}, retained ${MiB(p.ret)}`);
    for (const [f, x] of [...p.fields].sort((a, b) => b[1].dom - a[1].dom).slice(0, 14)) {
      if (x.dom < 0.05 * 2 ** 20) continue;
      let inner = '';
      if (x.sample >= 0 && /Map|Set|Array|array/.test(label(x.sample))) {
        // a Map's table: its largest dominated child
        let t = x.sample;
        for (let e = first[t]; e < first[t + 1]; e++) if (idom[g.edgeTo[e]] === t && retained[g.edgeTo[e]] > retained[t] / 2) t = g.edgeTo[e];
        inner = `  {${tableKids(t)}}`;
      }
      console.log(`   .${f.padEnd(18)} ${MiB(x.dom).padStart(7)} (${x.k}, ${x.label})${inner}`);
    }
  }
}
