import WebSocket from 'ws';

/**
 * The WebSocket load generator: clients that each subscribe to a list of markets on the prices
 * channel and measure every update: delivery latency (receive time − the message's server `ts`),
 * lost updates (per-topic `seq` gaps) and throughput. It reads only what it needs from each frame
 * with indexOf, not JSON.parse, because it shares the machine with the service.
 */
export class WsLoad {
  private readonly clients: WebSocket[] = [];
  delivered = 0;
  lost = 0;
  failed = 0;
  /** Every 4th latency, ms (enough for p99 at these rates, a quarter of the memory). */
  latencies: number[] = [];
  private n = 0;

  constructor(
    private readonly wsUrl: string,
    private readonly key: string,
    private readonly channel = 'prices',
  ) {}

  get size(): number {
    return this.clients.length;
  }

  /** Opens clients until there are `total`; client i subscribes to `subsOf(i)`. Connects 50 at a time. */
  async grow(total: number, subsOf: (i: number) => string[]): Promise<void> {
    while (this.clients.length < total) {
      const batch: Promise<void>[] = [];
      for (let k = 0; k < 50 && this.clients.length < total; k++) batch.push(this.open(subsOf(this.clients.length)));
      await Promise.all(batch);
    }
  }

  private open(ids: string[]): Promise<void> {
    const ws = new WebSocket(`${this.wsUrl}?api_key=${this.key}`, { perMessageDeflate: false });
    this.clients.push(ws);
    const seqs = new Map<string, number>();
    return new Promise((resolve) => {
      const done = (): void => resolve();
      const t = setTimeout(() => {
        this.failed++;
        done();
      }, 15_000);
      ws.on('open', () => ws.send(JSON.stringify({ type: 'subscribe', channel: this.channel, market_ids: ids })));
      ws.on('error', () => {
        this.failed++;
        clearTimeout(t);
        done();
      });
      ws.on('message', (d: Buffer) => {
        const s = d.toString('latin1');
        if (s.startsWith('{"type":"subscribed"')) {
          clearTimeout(t);
          return done();
        }
        const si = s.lastIndexOf('"seq":');
        const ti = s.lastIndexOf('"ts":');
        const mi = s.indexOf('"market_id":"');
        if (si < 0 || ti < 0 || mi < 0) return;
        const topic = s.slice(mi + 13, s.indexOf('"', mi + 13));
        const seq = Number(s.slice(si + 6, s.indexOf(',', si)));
        const prev = seqs.get(topic);
        seqs.set(topic, seq);
        if (s.includes('"snapshot":true')) return; // the state on subscribe, not an update
        this.delivered++;
        if (prev !== undefined && seq > prev + 1) this.lost += seq - prev - 1;
        if ((++this.n & 3) === 0) this.latencies.push(Date.now() - Number(s.slice(ti + 5, s.indexOf('}', ti))));
      });
    });
  }

  /** Starts a new measurement window. */
  reset(): void {
    this.delivered = 0;
    this.lost = 0;
    this.failed = 0;
    this.latencies = [];
  }

  close(): void {
    for (const c of this.clients) c.terminate();
    this.clients.length = 0;
  }
}

/** The q-quantile of unsorted samples (sorts in place); 0 for none. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return 0;
  xs.sort((a, b) => a - b);
  return xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
}
