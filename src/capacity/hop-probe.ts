import { RawWebSocket } from './raw-ws.js';
import { quantile } from './ws-load.js';

const MARKET = /"market_id":"([^"]+)"/;
const SEQ = /"seq":(\d+)/g;

/** The message of one update, as `<market_id>:<seq>` (its envelope's seq, the last one), or undefined for replies and snapshots. */
export function updateKey(text: string): string | undefined {
  if (text.includes('"snapshot":true')) return undefined;
  const m = MARKET.exec(text);
  const seq = [...text.matchAll(SEQ)].at(-1);
  return m && seq ? `${m[1]}:${seq[1]}` : undefined;
}

/**
 * Pairs each update with itself: the edge's copy of an update minus the core's copy of the same
 * update (same market, same seq), given the times they arrived here.
 */
export class HopPairs {
  private readonly core = new Map<string, number>();
  private readonly edge = new Map<string, number[]>();
  /** Edge arrival − core arrival per paired update, ms. */
  hops: number[] = [];

  /** An update's arrival from the core. */
  fromCore(key: string, at: number): void {
    const waiting = this.edge.get(key);
    if (waiting) {
      for (const t of waiting) this.hops.push(t - at);
      this.edge.delete(key);
    }
    this.core.set(key, at);
  }

  /** An update's arrival from an edge (several edges send the same update). */
  fromEdge(key: string, at: number): void {
    const c = this.core.get(key);
    if (c !== undefined) this.hops.push(at - c);
    else this.edge.set(key, [...(this.edge.get(key) ?? []), at]);
  }

  /** Starts a new window: forgets unpaired arrivals and the hops so far. */
  reset(): void {
    this.core.clear();
    this.edge.clear();
    this.hops = [];
  }
}

/**
 * Measures the NATS hop of a core + edges topology: one client on the core and one on each edge,
 * all subscribed to the same markets, and each update's arrival from an edge compared with its
 * arrival from the core on this machine's clock. The core sends to its own client when it
 * publishes to NATS, so the difference is what following the stream adds: NATS, the edge's
 * decode and its send.
 */
export class HopProbe {
  private readonly sockets: RawWebSocket[] = [];
  private readonly pairs = new HopPairs();

  /** Connects to the core (`core`) and the edges; each entry is a WebSocket URL and its key. */
  static async open(core: { ws: string; key: string }, edges: readonly { ws: string; key: string }[], ids: readonly string[]): Promise<HopProbe> {
    const p = new HopProbe();
    await Promise.all([p.connect(core, (k, t) => p.pairs.fromCore(k, t), ids), ...edges.map((e) => p.connect(e, (k, t) => p.pairs.fromEdge(k, t), ids))]);
    return p;
  }

  private connect(to: { ws: string; key: string }, onUpdate: (key: string, at: number) => void, ids: readonly string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      let subscribed = false;
      const t = setTimeout(() => reject(new Error(`hop probe: ${to.ws}: no subscribed reply within 15 s`)), 15_000);
      const ws = new RawWebSocket(
        to.ws,
        { 'X-API-Key': to.key },
        (data, start, end) => {
          const at = performance.now();
          const text = data.toString('utf8', start, end);
          if (!subscribed) {
            if (text.startsWith('{"type":"subscribed"')) {
              subscribed = true;
              clearTimeout(t);
              resolve();
            }
            return;
          }
          const k = updateKey(text);
          if (k) onUpdate(k, at);
        },
        () => ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: ids })),
        (reason) => {
          clearTimeout(t);
          if (!subscribed) reject(new Error(`hop probe: ${to.ws}: ${reason}`));
        },
      );
      this.sockets.push(ws);
    });
  }

  /** Starts a measurement window. */
  reset(): void {
    this.pairs.reset();
  }

  /** The hop's p50 and p99 over the window, ms, and how many updates were paired. */
  figures(): { p50: number; p99: number; paired: number } {
    const h = this.pairs.hops;
    return { paired: h.length, p50: quantile(h, 0.5), p99: quantile(h, 0.99) };
  }

  close(): void {
    for (const s of this.sockets) s.terminate();
    this.sockets.length = 0;
  }
}
