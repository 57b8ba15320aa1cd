/**
 * The floor of the ingest bench's state path on this host: what reading and applying its Kalshi
 * `orderbook_delta` frames costs when nothing but that is done, the least way JavaScript allows.
 * One record per market, found by one lookup of the frame's ticker: its index into one pool of
 * every market's levels (a Float64Array) and counts (an Int32Array); nothing allocated per delta
 * but the frame's text and its ticker; no event, no top of book, no quote, no candle, no consumer.
 * The frame is read by the mapper's own scanner (`scanDelta`) and number parsers, with the checks
 * the mapper's hot path makes (seq continuity per sid, price inside the payout, a size that stays
 * zero or more), so the floor differs from the path that runs only in what it leaves out. The
 * bench checks that it ends with the same books as every other path.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type * as UWS from 'uWebSockets.js';
import { RawWebSocket } from '../src/capacity/raw-ws.js';
import { loadUws } from '../src/server/uws.js';
import { parseDollarsAt, parseSizeAt, PAYOUT, roundSize } from '../src/core/price.js';
import { deltaText, scanDelta } from '../src/venues/kalshi/scan.js';
import { askChild } from './lib.js';

/** Levels a side holds at most (the bench's books stay well under it; a delta past it is refused). */
const CAP = 32;
/** A market's slots in the pool: bid prices, bid sizes, ask prices, ask sizes, CAP each. */
const STRIDE = 4 * CAP;

interface Snapshot {
  sid: number;
  seq: number;
  msg: { market_ticker: string; yes_dollars_fp?: [string, string][]; no_dollars_fp?: [string, string][] };
}

const level = ([p, s]: [string, string]): [number, number] => [parseDollarsAt(p, 0, p.length), parseSizeAt(s, 0, s.length)];

/** The floor's books, built from the bench's snapshot frames (JSON.parse there: setup, untimed). */
export class FloorBooks {
  /** ticker → the market's index. */
  private readonly index = new Map<string, number>();
  private readonly pool: Float64Array;
  /** Per market: bid count, ask count. */
  private readonly counts: Int32Array;
  private readonly sidOf: Int32Array;
  private readonly ts: Float64Array;
  /** sid → last seq. */
  private readonly lastSeq: Float64Array;
  private readonly d = deltaText();
  /** Frames the floor could not read or apply (the bench expects none). */
  refused = 0;
  /** Whether the last frame applied changed its side's best level (price or size): a price message's cause. */
  topChanged = false;

  constructor(snapshots: Iterable<string>) {
    const frames = [...snapshots].map((t) => JSON.parse(t) as Snapshot);
    this.pool = new Float64Array(frames.length * STRIDE);
    this.counts = new Int32Array(frames.length * 2);
    this.sidOf = new Int32Array(frames.length);
    this.ts = new Float64Array(frames.length);
    this.lastSeq = new Float64Array(Math.max(0, ...frames.map((f) => f.sid)) + 1);
    frames.forEach((f, m) => {
      this.index.set(f.msg.market_ticker, m);
      this.sidOf[m] = f.sid;
      this.lastSeq[f.sid] = Math.max(f.seq, this.lastSeq[f.sid]!);
      for (const [p, s] of (f.msg.yes_dollars_fp ?? []).map(level)) this.put(m, true, p, s);
      // A NO bid at p is a YES ask at 100 − p.
      for (const [p, s] of (f.msg.no_dollars_fp ?? []).map(level)) this.put(m, false, PAYOUT - p, s);
    });
  }

  /** The markets' tickers, by index. */
  get tickers(): string[] {
    return [...this.index.keys()];
  }

  /** Reads and applies one delta frame: its market's index, or -1 (and counted) when the floor cannot. */
  apply(text: string): number {
    const d = this.d;
    const m = scanDelta(text, d) ? this.index.get(d.ticker) : undefined;
    if (m === undefined || this.sidOf[m] !== d.sid || d.seq !== this.lastSeq[d.sid]! + 1) return this.refuse();
    const price = parseDollarsAt(text, d.priceStart, d.priceEnd);
    const delta = parseSizeAt(text, d.deltaStart, d.deltaEnd);
    if (!(price > 0 && price < PAYOUT) || Number.isNaN(delta) || delta === 0) return this.refuse();
    const at = d.yes ? price : PAYOUT - price;
    const next = roundSize(this.sizeOf(m, d.yes, at) + delta);
    if (next < 0 || !this.put(m, d.yes, at, next)) return this.refuse();
    this.lastSeq[d.sid] = d.seq;
    this.ts[m] = d.tsMs;
    return m;
  }

  private refuse(): -1 {
    this.refused++;
    return -1;
  }

  private sizeOf(m: number, bid: boolean, price: number): number {
    const p = this.pool;
    const at = m * STRIDE + (bid ? 0 : 2 * CAP);
    const n = this.counts[2 * m + (bid ? 0 : 1)]!;
    for (let i = at; i < at + n; i++) if (p[i] === price) return p[i + CAP]!;
    return 0;
  }

  /** Sets the absolute size at `price` on a side (bids highest first, asks lowest first); 0 deletes. False when the side is full. */
  private put(m: number, bid: boolean, price: number, size: number): boolean {
    const p = this.pool;
    const at = m * STRIDE + (bid ? 0 : 2 * CAP);
    const c = 2 * m + (bid ? 0 : 1);
    const n = this.counts[c]!;
    let i = at;
    while (i < at + n && (bid ? p[i]! > price : p[i]! < price)) i++;
    this.topChanged = i === at;
    if (i < at + n && p[i] === price) {
      if (size > 0) p[i + CAP] = size;
      else {
        p.copyWithin(i, i + 1, at + n);
        p.copyWithin(i + CAP, i + CAP + 1, at + CAP + n);
        this.counts[c] = n - 1;
      }
      return true;
    }
    if (size <= 0) return true;
    if (n === CAP) return false;
    p.copyWithin(i + 1, i, at + n);
    p.copyWithin(i + CAP + 1, i + CAP, at + CAP + n);
    p[i] = price;
    p[i + CAP] = size;
    this.counts[c] = n + 1;
    return true;
  }

  /** The market's levels as the top 10 a side, YES bids and asks: what an orderbook message carries. */
  levels(m: number): { bids: [number, number][]; asks: [number, number][] } {
    const side = (bid: boolean): [number, number][] => {
      const at = m * STRIDE + (bid ? 0 : 2 * CAP);
      const n = Math.min(10, this.counts[2 * m + (bid ? 0 : 1)]!);
      return Array.from({ length: n }, (_, i): [number, number] => [this.pool[at + i]!, this.pool[at + CAP + i]!]);
    };
    return { bids: side(true), asks: side(false) };
  }

  /** The top 10 levels of every book, in bench/ingest-workload.ts `digest`'s form. */
  digest(tickers: readonly string[]): string {
    const l = (x: [number, number][]): string => x.map(([p, s]) => `${p}x${s}`).join(',');
    return tickers
      .map((t) => {
        const m = this.index.get(t);
        if (m === undefined) return `${t}|missing`;
        const { bids, asks } = this.levels(m);
        return `${t}|${l(bids)}|${l(asks)}`;
      })
      .join('\n');
  }
}

// ---- the floor of the fan-out: the same messages' count, published bare --------------------------

/**
 * A bare uWebSockets.js server and its clients (in a child process, as the bench's are): client c
 * of `subs.length` holds topic `t:<market>` for each market of `subs[c]`. What the floor of the
 * fan-out costs the main thread: one `publish` of a message built once per topic, nothing written.
 */
export interface FloorFanout {
  publish(topic: string, message: Buffer): void;
  /** Messages the clients received since the last call (it waits until one answer finds none more). */
  received(): Promise<number>;
  close(): Promise<void>;
}

const SELF = fileURLToPath(import.meta.url);

export async function floorFanout(subs: readonly (readonly string[])[]): Promise<FloorFanout> {
  const uws = loadUws();
  const app = uws.App();
  app.ws<{ c: number }>('/*', {
    maxBackpressure: 64 * 1024 * 1024,
    upgrade: (res, req, ctx) =>
      res.upgrade(
        { c: Number(req.getQuery('c')) },
        req.getHeader('sec-websocket-key'),
        req.getHeader('sec-websocket-protocol'),
        req.getHeader('sec-websocket-extensions'),
        ctx,
      ),
    open: (ws) => {
      for (const t of subs[ws.getUserData().c] ?? []) ws.subscribe(t);
    },
  });
  const listen = await new Promise<UWS.us_listen_socket | false>((r) => app.listen('127.0.0.1', 0, r));
  if (listen === false) throw new Error('the floor fan-out could not listen on 127.0.0.1');
  const child = fork(SELF, ['floor-clients', `ws://127.0.0.1:${uws.us_socket_local_port(listen)}/`, String(subs.length)]);
  const answer = async (kind: string): Promise<number> => (await askChild<{ n: number }>(child, kind)).n;
  await answer('ready');
  return {
    publish: (topic, message) => void app.publish(topic, message, false),
    async received() {
      // uWS writes what a publish queued when the loop turns; each answer counts what came since the
      // one before: ask until an answer finds nothing more.
      let total = 0;
      for (;;) {
        await new Promise((r) => setImmediate(r));
        const n = await answer('count');
        if (n === 0) return total;
        total += n;
      }
    },
    async close() {
      await new Promise((r) => {
        child.once('exit', r);
        child.send({ kind: 'close' });
      });
      uws.us_listen_socket_close(listen);
    },
  };
}

/** The child: `n` clients that count what they receive; answers `count` (and resets it) and `close`. */
async function floorClients(url: string, n: number): Promise<void> {
  let got = 0;
  const sockets: RawWebSocket[] = [];
  await Promise.all(
    Array.from(
      { length: n },
      (_, c) =>
        new Promise<void>((open, fail) =>
          sockets.push(
            new RawWebSocket(
              `${url}?c=${c}`,
              {},
              () => void got++,
              open,
              (why) => fail(new Error(why)),
            ),
          ),
        ),
    ),
  );
  process.on('message', (m: { kind: string }) => {
    if (m.kind === 'close') {
      for (const s of sockets) s.terminate();
      process.exit(0);
    }
    process.send!({ kind: m.kind, n: got });
    got = 0;
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ kind: 'ready', n: 0 });
}

if (process.argv[1] === SELF && process.argv[2] === 'floor-clients') await floorClients(process.argv[3]!, Number(process.argv[4]));
