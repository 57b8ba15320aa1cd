import { RawWebSocket } from './raw-ws.js';

const SEQ = Buffer.from('"seq":');
/** The timestamp fields latency can be measured from: the send time, or the venue frame's receive time. */
const STAMPS = { ts: Buffer.from('"ts":'), recv_ts: Buffer.from('"recv_ts":') } as const;
const MARKET_ID = Buffer.from('"market_id":"');
const SNAPSHOT = Buffer.from('"snapshot":true');

/** The non-negative integer written in ASCII digits at `at`. */
function digits(b: Buffer, at: number): number {
  let v = 0;
  for (let i = at; i < b.length; i++) {
    const c = b[i]! - 48;
    if (c < 0 || c > 9) break;
    v = v * 10 + c;
  }
  return v;
}

/**
 * The WebSocket load generator: clients that each subscribe to a list of markets on a channel and
 * measure every update: delivery latency (receive time − the message's server `ts`, or with
 * `stamp` `recv_ts`, − when the server received the venue frame behind it), lost updates
 * (per-topic `seq` gaps) and throughput. Clients are {@link RawWebSocket}s and read only what they
 * need from each frame's bytes (indexOf on the frame, digits parsed in place), not JSON.parse,
 * because the generator shares the machine with the service it measures. Used by `crossbook
 * bench`, `crossbook soak` and the fan-out bench. The key goes in `X-API-Key` (a bare baseline
 * ignores it).
 */
export class WsLoad {
  private readonly clients: RawWebSocket[] = [];
  delivered = 0;
  lost = 0;
  /** Clients that could not connect or subscribe, or that the server closed while measuring. */
  failed = 0;
  /** Every 4th latency, ms (enough for p99 at these rates, a quarter of the memory). */
  latencies: number[] = [];
  /** Why the last failed client failed (an HTTP status line, a close code and reason). */
  lastFailure = '';
  private n = 0;

  constructor(
    private readonly wsUrl: string,
    private readonly key: string,
    private readonly channel = 'prices',
    private readonly stamp: keyof typeof STAMPS = 'ts',
    /** The receive time, ms since the epoch (a bench may pass one finer than `Date.now`'s whole ms). */
    private readonly now: () => number = Date.now,
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
    const seqs = new Map<number, number>();
    const TS = STAMPS[this.stamp];
    return new Promise((resolve) => {
      let subscribed = false;
      const done = (): void => {
        clearTimeout(t);
        resolve();
      };
      const fail = (reason: string): void => {
        this.failed++;
        this.lastFailure = reason;
      };
      const t = setTimeout(() => {
        fail('no subscribed reply within 15 s');
        done();
      }, 15_000);
      const ws = new RawWebSocket(
        this.wsUrl,
        { 'X-API-Key': this.key },
        (data, start, end) => {
          if (!subscribed) {
            if (data.toString('latin1', start, Math.min(end, start + 20)) === '{"type":"subscribed"') {
              subscribed = true;
              done();
            }
            return;
          }
          const m = data.subarray(start, end);
          const si = m.lastIndexOf(SEQ);
          const ti = m.lastIndexOf(TS);
          const mi = m.indexOf(MARKET_ID);
          if (si < 0 || mi < 0) return;
          // The topic as a hash of its market id's bytes: no string per message (100 topics a client).
          let topic = 0x811c9dc5;
          for (let i = mi + MARKET_ID.length; i < m.length && m[i] !== 0x22; i++) topic = Math.imul(topic ^ m[i]!, 0x01000193);
          const seq = digits(m, si + SEQ.length);
          const prev = seqs.get(topic);
          seqs.set(topic, seq);
          if (m.indexOf(SNAPSHOT) >= 0) return; // the state on subscribe, not an update
          this.delivered++;
          if (prev !== undefined && seq > prev + 1) this.lost += seq - prev - 1;
          // A message without the stamp (recv_ts: no venue frame behind it) counts for seq, not latency.
          if ((++this.n & 3) === 0 && ti >= 0) this.latencies.push(this.now() - digits(m, ti + TS.length));
        },
        () => ws.send(JSON.stringify({ type: 'subscribe', channel: this.channel, market_ids: ids })),
        (reason) => {
          fail(reason);
          if (!subscribed) done();
        },
      );
      this.clients.push(ws);
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
