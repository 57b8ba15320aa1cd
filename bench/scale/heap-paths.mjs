// The shortest-path tree from the GC roots of a heap snapshot read by the capacity report's reader
// (src/capacity/heap-owners.ts readGraph), with each node's holder: `Class.field` for what an instance of a named
// class (not Object/Array/Map/Set) reached through that field, `ctx:name` for a closure or module variable; the
// holder of what neither names is its parent's. Shared by heap-holders.mjs and heap-large.mjs.

/** Edge index of `g`: each node's first edge, and which edges a walk skips (weak, shortcut). */
export function edgeIndex(g) {
  const n = g.type.length;
  const nodeTypes = g.meta.node_types[0];
  const edgeTypes = g.meta.edge_types[0];
  const ET = Object.fromEntries(edgeTypes.map((t, i) => [t, i]));
  const first = new Uint32Array(n + 1);
  for (let i = 0, e = 0; i < n; i++) {
    first[i] = e;
    e += g.edgeCount[i];
  }
  first[n] = g.edgeTo.length;
  const skip = (e) => g.edgeType[e] === ET.weak || g.edgeType[e] === ET.shortcut;
  const str = (i) => g.names.get(i) ?? '';
  return { n, nodeTypes, edgeTypes, first, skip, str };
}

export const NONE = 0xffffffff;
const GENERIC = new Set(['Object', 'Array', 'Map', 'Set', 'system', '(object properties)', '(object elements)', 'Function', 'Promise', 'WeakMap', 'Error']);

/**
 * The tree by breadth-first search from node 0: `via[i]` the edge that reached node i, `holder[i]` its holder's
 * index in `holders` (-1: unreached), `pathOf(i, steps)` the last `steps` hops to it, each node written by `label`.
 */
export function holderTree(g, idx, label) {
  const { n, nodeTypes, edgeTypes, first, skip, str } = idx;
  const edgeLabel = (e) => {
    const t = edgeTypes[g.edgeType[e]];
    return t === 'element' || t === 'hidden' ? `[${g.edgeName[e]}]` : str(g.edgeName[e]);
  };
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
  const pathOf = (i, steps) => {
    const out = [];
    for (let at = i, k = 0; k < steps && at !== 0 && via[at] !== NONE; k++) {
      const e = via[at];
      at = from(e);
      out.unshift(`${label(at)}.${edgeLabel(e)}`);
    }
    return out.join(' → ');
  };
  return { via, holder, holders, pathOf, edgeLabel };
}
