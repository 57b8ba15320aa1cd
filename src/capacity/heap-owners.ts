import { readFileSync } from 'node:fs';

/** The components a capacity report prices per market, and the classes whose objects belong to each. */
export const COMPONENTS: Readonly<Record<string, readonly string[]>> = {
  state: ['EngineState', 'MarketCatalog', 'BookStore', 'QuoteStore', 'TradeStore', 'CandleStore', 'HealthStore'],
  mappers: ['KalshiMapper', 'PolymarketMapper', 'ExchangeMapper', 'PolymarketUsMapper', 'PredictItMapper', 'ManifoldMapper', 'FeedRuntime'],
  matching: ['MatchingService', 'Matcher', 'OverrideStore'],
  search: ['EventIndex', 'GroupViews', 'FragmentCache'],
  signals: ['SignalEngine', 'AlertEngine', 'LifecycleTracker', 'OpportunityLog'],
  ledger: ['WalletLedger'],
  hub: ['WsHub'],
  simulator: ['SimWorld'],
};

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: readonly string[];
      readonly node_types: readonly [readonly string[], ...unknown[]];
      readonly edge_fields: readonly string[];
      readonly edge_types: readonly [readonly string[], ...unknown[]];
    };
  };
  readonly nodes: readonly number[];
  readonly edges: readonly number[];
  readonly strings: readonly string[];
}

/**
 * Bytes of a V8 heap snapshot (`.heapsnapshot`) by component. Each object goes to the nearest
 * owner on its shortest path from the GC roots (a breadth-first spanning tree, weak edges
 * skipped): an owner is an instance of one of the classes in COMPONENTS. A shortest-path tree is
 * not the dominator tree, so an object shared by two components counts once, for the nearer one;
 * what no owner reaches (code, the module graph, LMDB's and uWS's buffers) is `other`.
 */
export function heapByComponent(file: string): Record<string, number> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const meta = snap.snapshot.meta;
  const F = meta.node_fields.length;
  const E = meta.edge_fields.length;
  const nodeTypes = meta.node_types[0];
  const weak = meta.edge_types[0].indexOf('weak');
  const [iType, iName, iSize, iEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f)) as [number, number, number, number];
  const [eType, eTo] = ['type', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [number, number];
  const objectType = nodeTypes.indexOf('object');
  const componentOf = new Map<string, string>();
  for (const [c, classes] of Object.entries(COMPONENTS)) for (const k of classes) componentOf.set(k, c);
  const { nodes, edges, strings } = snap;
  const n = nodes.length / F;
  const firstEdge = new Uint32Array(n);
  for (let i = 0, e = 0; i < n; i++) {
    firstEdge[i] = e;
    e += nodes[i * F + iEdges]! * E;
  }
  // owner[i]: index into `names` of the component node i belongs to; -1 = unvisited, 0 = other.
  const names = ['other', ...Object.keys(COMPONENTS)];
  const owner = new Int8Array(n).fill(-1);
  const queue = new Uint32Array(n);
  let head = 0;
  let tail = 0;
  owner[0] = 0;
  queue[tail++] = 0;
  while (head < tail) {
    const i = queue[head++]!;
    const own = nodes[i * F + iType] === objectType ? componentOf.get(strings[nodes[i * F + iName]!]!) : undefined;
    const o = own !== undefined ? names.indexOf(own) : owner[i]!;
    owner[i] = o;
    for (let k = 0, fe = firstEdge[i]!; k < nodes[i * F + iEdges]!; k++) {
      if (edges[fe + k * E + eType] === weak) continue;
      const to = edges[fe + k * E + eTo]! / F;
      if (owner[to] !== -1) continue;
      owner[to] = o;
      queue[tail++] = to;
    }
  }
  const out: Record<string, number> = Object.fromEntries(names.map((c) => [c, 0]));
  for (let i = 0; i < n; i++) if (owner[i]! >= 0) out[names[owner[i]!]!]! += nodes[i * F + iSize]!;
  return out;
}
