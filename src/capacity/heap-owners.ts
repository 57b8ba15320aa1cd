import { closeSync, openSync, readSync } from 'node:fs';

/** The components a capacity report prices per market, and the classes whose objects belong to each. */
export const COMPONENTS: Readonly<Record<string, readonly string[]>> = {
  state: ['EngineState', 'MarketCatalog', 'BookStore', 'QuoteStore', 'TradeStore', 'CandleStore', 'HealthStore'],
  mappers: ['KalshiMapper', 'PolymarketMapper', 'ExchangeMapper', 'PolymarketUsMapper', 'PredictItMapper', 'ManifoldMapper', 'FeedRuntime'],
  matching: ['MatchingService', 'Matcher', 'OverrideStore'],
  search: ['EventIndex', 'GroupViews', 'FragmentCache', 'SearchIndex'],
  signals: ['SignalEngine', 'AlertEngine', 'LifecycleTracker', 'OpportunityLog'],
  ledger: ['WalletLedger'],
  hub: ['WsHub'],
  simulator: ['SimWorld'],
  // The capture log's writer: its per-stream columns hold every record not yet sealed and written.
  capture: ['Capture', 'CaptureStore'],
};

export interface Meta {
  readonly node_fields: readonly string[];
  readonly node_types: readonly [readonly string[], ...unknown[]];
  readonly edge_fields: readonly string[];
  readonly edge_types: readonly [readonly string[], ...unknown[]];
}

/** The parts of a snapshot the attribution reads, field by field (the rest is skipped while reading). */
export interface Graph {
  readonly meta: Meta;
  readonly type: Uint8Array;
  readonly name: Uint32Array;
  readonly size: Uint32Array;
  readonly edgeCount: Uint32Array;
  readonly edgeType: Uint8Array;
  /** Node index (not the snapshot's field offset) each edge points to. */
  readonly edgeTo: Uint32Array;
  /** Each edge's name (string table index) or element index; read only when every string is. */
  readonly edgeName: Uint32Array | undefined;
  /** Index in the snapshot's string table → the class name among `wanted` it is, when it is one. */
  readonly names: Map<number, string>;
}

const CHUNK = 1 << 24;

/**
 * Reads a `.heapsnapshot` as a stream: its node and edge arrays into typed arrays of the fields
 * used, and from the string table only the entries equal to a name in `wanted`. A snapshot of a
 * heap over about 250 MiB is a JSON text longer than V8's longest string, so it cannot be parsed whole.
 * (Also bench/scale/heap-holders.mjs's reader, with every string.)
 */
export function readGraph(file: string, wanted: ReadonlySet<string> | undefined): Graph {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let len = readSync(fd, buf, 0, CHUNK, 0);
    let filePos = len;
    const head = buf.toString('latin1', 0, Math.min(len, 1 << 20));
    const nodesAt = head.indexOf('"nodes":[');
    const meta = (JSON.parse(`${head.slice(0, nodesAt).replace(/,\s*$/, '')}}`) as { snapshot: { meta: Meta; node_count: number; edge_count: number } })
      .snapshot;
    const F = meta.meta.node_fields.length;
    const E = meta.meta.edge_fields.length;
    const [iType, iName, iSize, iEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => meta.meta.node_fields.indexOf(f));
    const [eType, eTo, eName] = ['type', 'to_node', 'name_or_index'].map((f) => meta.meta.edge_fields.indexOf(f));
    const g = {
      meta: meta.meta,
      type: new Uint8Array(meta.node_count),
      name: new Uint32Array(meta.node_count),
      size: new Uint32Array(meta.node_count),
      edgeCount: new Uint32Array(meta.node_count),
      edgeType: new Uint8Array(meta.edge_count),
      edgeTo: new Uint32Array(meta.edge_count),
      edgeName: wanted ? undefined : new Uint32Array(meta.edge_count),
      names: new Map<number, string>(),
    };
    let pos = nodesAt + 9;
    /** The next byte, reading on through the file; -1 at its end. */
    const next = (): number => {
      if (pos >= len) {
        len = readSync(fd, buf, 0, CHUNK, filePos);
        filePos += len;
        pos = 0;
        if (len === 0) return -1;
      }
      return buf[pos++]!;
    };
    /** Reads the integers of one array up to its `]`, handing each with its position to `put`. */
    const ints = (put: (k: number, v: number) => void): void => {
      let v = 0;
      let inNum = false;
      for (let k = 0, c = next(); c !== -1; c = next()) {
        if (c >= 48 && c <= 57) {
          v = v * 10 + c - 48;
          inNum = true;
        } else if (inNum) {
          put(k++, v);
          v = 0;
          inNum = false;
        }
        if (c === 93) return;
      }
    };
    /** Skips to just past `marker` (ASCII). */
    const seek = (marker: string): void => {
      let m = 0;
      for (let c = next(); c !== -1; c = next()) {
        m = c === marker.charCodeAt(m) ? m + 1 : c === marker.charCodeAt(0) ? 1 : 0;
        if (m === marker.length) return;
      }
    };
    ints((k, v) => {
      const i = (k / F) | 0;
      const f = k - i * F;
      if (f === iType) g.type[i] = v;
      else if (f === iName) g.name[i] = v;
      else if (f === iSize) g.size[i] = v;
      else if (f === iEdges) g.edgeCount[i] = v;
    });
    seek('"edges":[');
    ints((k, v) => {
      const i = (k / E) | 0;
      const f = k - i * E;
      if (f === eType) g.edgeType[i] = v;
      else if (f === eTo) g.edgeTo[i] = v / F;
      else if (f === eName && g.edgeName) g.edgeName[i] = v;
    });
    seek('"strings":[');
    readNames(next, wanted, g.names);
    return g;
  } finally {
    closeSync(fd);
  }
}

/** Reads the string table (JSON strings up to `]`), recording the indices of entries in `wanted` (every entry's first 80 characters without it). */
function readNames(next: () => number, wanted: ReadonlySet<string> | undefined, out: Map<number, string>): void {
  const longest = wanted ? Math.max(...[...wanted].map((w) => w.length)) : 80;
  let index = 0;
  for (let c = next(); c !== -1 && c !== 93; c = next()) {
    if (c !== 34) continue;
    let s = '';
    let plain = true;
    for (c = next(); c !== -1 && c !== 34; c = next()) {
      if (c === 92) {
        plain = false;
        next();
      } else if (plain && s.length <= longest) s += String.fromCharCode(c);
    }
    if (wanted === undefined) out.set(index, s);
    else if (plain && wanted.has(s)) out.set(index, s);
    index++;
  }
}

/**
 * Bytes of a V8 heap snapshot (`.heapsnapshot`) by component. Each object goes to the nearest
 * owner on its shortest path from the GC roots (a breadth-first spanning tree, weak edges
 * skipped): an owner is an instance of one of the classes in COMPONENTS. A shortest-path tree is
 * not the dominator tree, so an object shared by two components counts once, for the nearer one;
 * what no owner reaches (code, the module graph, LMDB's and uWS's buffers) is `other`.
 */
export function heapByComponent(file: string): Record<string, number> {
  return heapOwners(file, false).byComponent;
}

/** What heapOwners reports. */
export interface HeapOwners {
  /** Bytes by component (`other` for what no owner reaches). */
  readonly byComponent: Record<string, number>;
  /** When asked for: component → the node names (constructor or string kind) of its objects → bytes, largest first. */
  readonly byName: Record<string, [name: string, bytes: number][]> | undefined;
  /**
   * When asked for: the objects of LARGE_OBJECT_BYTES or more (each one a page of V8's large-object
   * space: the backing store of a big array, Map or Set), largest first, with their component and
   * the node that holds them (its name, and the edge's).
   */
  readonly large: LargeObject[] | undefined;
}

/** One object in V8's large-object space, as heapOwners lists it. */
export interface LargeObject {
  readonly component: string;
  /** Its kind and name (`array`, `object Map`, …). */
  readonly label: string;
  /** The path that reached it first (breadth-first), up to three nodes back: node.edge → … */
  readonly holder: string;
  readonly bytes: number;
}

/** V8 puts an object this large (kMaxRegularHeapObjectSize) on a page of its own. */
export const LARGE_OBJECT_BYTES = 128 * 1024;

/** heapByComponent, and with `detail` each component's bytes by node name (reads every string of the snapshot). */
export function heapOwners(file: string, detail: boolean): HeapOwners {
  const componentOf = new Map<string, string>();
  for (const [c, classes] of Object.entries(COMPONENTS)) for (const k of classes) componentOf.set(k, c);
  const g = readGraph(file, detail ? undefined : new Set(componentOf.keys()));
  const objectType = g.meta.node_types[0].indexOf('object');
  const weak = g.meta.edge_types[0].indexOf('weak');
  const n = g.type.length;
  const firstEdge = new Uint32Array(n);
  for (let i = 0, e = 0; i < n; i++) {
    firstEdge[i] = e;
    e += g.edgeCount[i]!;
  }
  // owner[i]: index into `names` of the component node i belongs to; -1 = unvisited, 0 = other.
  const names = ['other', ...Object.keys(COMPONENTS)];
  const ownerOfName = new Map<number, number>();
  for (const [idx, cls] of g.names) if (componentOf.has(cls)) ownerOfName.set(idx, names.indexOf(componentOf.get(cls)!));
  const owner = new Int8Array(n).fill(-1);
  // The node and edge each node was reached through (for naming a large object's holder).
  const via = detail ? new Uint32Array(n) : undefined;
  const queue = new Uint32Array(n);
  let head = 0;
  let tail = 0;
  owner[0] = 0;
  queue[tail++] = 0;
  while (head < tail) {
    const i = queue[head++]!;
    const own = g.type[i] === objectType ? ownerOfName.get(g.name[i]!) : undefined;
    const o = own ?? owner[i]!;
    owner[i] = o;
    for (let e = firstEdge[i]!, end = e + g.edgeCount[i]!; e < end; e++) {
      if (g.edgeType[e] === weak) continue;
      const to = g.edgeTo[e]!;
      if (owner[to] !== -1) continue;
      owner[to] = o;
      if (via) via[to] = e;
      queue[tail++] = to;
    }
  }
  const out: Record<string, number> = Object.fromEntries(names.map((c) => [c, 0]));
  for (let i = 0; i < n; i++) if (owner[i]! >= 0) out[names[owner[i]!]!]! += g.size[i]!;
  return {
    byComponent: out,
    byName: detail ? bytesByName(g, owner, names) : undefined,
    large: via ? largeObjects(g, owner, names, via, firstEdge) : undefined,
  };
}

function largeObjects(g: Graph, owner: Int8Array, names: readonly string[], via: Uint32Array, firstEdge: Uint32Array): LargeObject[] {
  const out: LargeObject[] = [];
  const n = owner.length;
  // Edges point to nodes; the node an edge leaves from is the one whose edge range holds it.
  const from = (e: number): number => {
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (firstEdge[mid]! <= e) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  for (let i = 1; i < n; i++) {
    if (g.size[i]! < LARGE_OBJECT_BYTES || owner[i]! < 0) continue;
    // Three steps back: a Map's table is held by the Map, which some object holds by a name.
    const path: string[] = [];
    for (let at = i, k = 0; k < 3 && at !== 0; k++) {
      const e = via[at]!;
      at = from(e);
      path.unshift(`${labelOf(g, at)}.${edgeName(g, e)}`);
    }
    out.push({ component: names[owner[i]!]!, label: labelOf(g, i), holder: path.join(' → '), bytes: g.size[i]! });
  }
  return out.sort((a, b) => b.bytes - a.bytes);
}

function bytesByName(g: Graph, owner: Int8Array, names: readonly string[]): Record<string, [string, number][]> {
  const by = names.map(() => new Map<string, number>());
  for (let i = 0; i < owner.length; i++) {
    if (owner[i]! < 0) continue;
    const label = labelOf(g, i);
    const m = by[owner[i]!]!;
    m.set(label, (m.get(label) ?? 0) + g.size[i]!);
  }
  return Object.fromEntries(names.map((c, k) => [c, [...by[k]!].sort((a, b) => b[1] - a[1])]));
}

/** A node's kind, and for an object or closure its constructor or function name. */
function labelOf(g: Graph, i: number): string {
  const kind = g.meta.node_types[0][g.type[i]!]!;
  return kind === 'object' || kind === 'closure' ? `${kind} ${g.names.get(g.name[i]!) ?? '?'}` : kind;
}

/** An edge's property name, or `[index]` for an element or hidden edge. */
function edgeName(g: Graph, e: number): string {
  const kind = g.meta.edge_types[0][g.edgeType[e]!];
  const v = g.edgeName?.[e] ?? 0;
  return kind === 'element' || kind === 'hidden' ? `[${v}]` : (g.names.get(v) ?? '?');
}
