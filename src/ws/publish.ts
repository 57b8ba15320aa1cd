import { Subject } from 'rxjs';
import type { Clock } from '../core/clock.js';
import type { FrameTimes } from '../core/types.js';
import type { Retained } from './backpressure.js';
import { NumText, TextBytes } from './booktext.js';
import { DATA } from './conn.js';
import { NONE, type Held, type Subs, type Topics } from './topics.js';

/** One publication of the hub: what a cluster core sends its edges, with the seq and epoch assigned once. */
export interface Publication {
  readonly topic: string;
  /** The message body, or its JSON text when the hub serialized it directly (order books). */
  readonly body: Record<string, unknown> | string;
  readonly seq: number;
  readonly epoch: number;
  readonly ts: number;
  /** The venue's time and our receive time of the frame behind the update (ms), when one was. */
  readonly venueTs?: number | undefined;
  readonly recvTs?: number | undefined;
}

/** Where publications go: uWS's `app.publish` (the text or bytes of one message to every subscriber of a topic). */
export type PublishSink = (topic: string, message: string | Uint8Array) => unknown;

/**
 * Publishing: each message serialized once with its envelope (seq, epoch, ts, and the frame's
 * venue_ts and recv_ts) and published once, whatever the number of subscribers; subscribers in
 * the hosted dialect get it on the topic's `DATA` twin with the body again under `data`, built from
 * the same JSON text. The envelope is appended to the JSON text rather than spread into a copy of
 * the body, so a publish allocates nothing that outlives it (a per-publish copy gets promoted and
 * old-generation pauses set the fan-out tail; BENCHMARKS.md has the measurement). A message that
 * goes out only as the plain message can be written as bytes into one reused buffer (`bytes`).
 */
export class Publisher {
  /** Every publication, as published (observed by a cluster core's publisher). */
  readonly published$ = new Subject<Publication>();
  /** Messages published (each counted once, however many subscribers). */
  published = 0;
  /** Where an orderbook_update or price_update that goes out only as the plain message is written. */
  readonly bytes = new TextBytes();
  /** The envelope's times and epoch as last written into `bytes` (`TextBytes.numVia`). */
  private readonly venueTs = new NumText();
  private readonly recvTs = new NumText();
  private readonly epochText = new NumText();
  private readonly ts = new NumText();

  /** @param epoch announced in every message; a cluster edge takes a new core's (`WsHub.adoptSeqs`) */
  constructor(
    private readonly sink: PublishSink,
    private readonly topics: Topics,
    private readonly retained: Retained,
    private readonly clock: Clock,
    public epoch: number,
  ) {}

  /** Publishes `body` on `topic` with the topic's next seq; `subs`: its subscribers, when the caller asked already. */
  publish(topic: string, body: Record<string, unknown> | string, subs?: Held, at?: FrameTimes): void {
    // `subs` is the answer for this very topic, so its seq cell is the topic's.
    const seq = subs?.seq !== undefined ? ++subs.seq.n : this.topics.next(topic);
    this.emit(topic, body, seq, this.epoch, this.clock.now(), subs, at?.timestamp, at?.localTimestamp);
  }

  /**
   * A publication whose seq and epoch a cluster core assigned: published here with those numbers,
   * so every edge sends the same seq for the same update.
   */
  accept(p: Publication): void {
    const cell = this.topics.cell(p.topic);
    if (p.seq > cell.n) cell.n = p.seq;
    this.emit(p.topic, p.body, p.seq, p.epoch, p.ts, undefined, p.venueTs, p.recvTs);
  }

  /**
   * Serializes once (a body may come pre-serialized) and publishes with its envelope; the send time
   * `ts` is read once per publication, whatever the number of subscribers.
   */
  private emit(
    topic: string,
    body: Record<string, unknown> | string,
    seq: number,
    epoch: number,
    ts: number,
    subs?: Subs,
    venueTs?: number,
    recvTs?: number,
  ): void {
    const json = typeof body === 'string' ? body : JSON.stringify(body);
    const head = json.slice(0, -1);
    const times = recvTs === undefined ? '' : `"venue_ts":${venueTs ?? recvTs},"recv_ts":${recvTs},`;
    const tail = `${times}"seq":${seq},"epoch":${epoch},"ts":${ts}}`;
    const keep = this.retained.keeps(topic);
    const s = subs ?? this.topics.subs(topic) ?? NONE;
    const plain = keep || s.plain;
    const data = keep || s.data;
    const msg = plain ? `${head},${tail}` : '';
    const dataMsg = data ? `${head},"data":${json},${tail}` : '';
    if (keep) this.retained.set(topic, seq, msg, dataMsg);
    this.published++;
    if (msg) this.sink(topic, msg);
    if (dataMsg) this.sink(topic + DATA, dataMsg);
    if (this.published$.observed)
      this.published$.next(recvTs === undefined ? { topic, body, seq, epoch, ts } : { topic, body, seq, epoch, ts, venueTs, recvTs });
  }

  /**
   * A message only connections in the hosted dialect read, sent on `topic`'s hosted twin with the
   * topic's current seq (it repeats the event the topic's last publication carried): `body` at the
   * top level, `data` under data.
   */
  publishHosted(topic: string, body: Readonly<Record<string, unknown>>, data: Readonly<Record<string, unknown>>): void {
    if (this.topics.subs(topic)?.data !== true) return;
    const json = JSON.stringify(body);
    this.sink(
      topic + DATA,
      `${json.slice(0, -1)},"data":${JSON.stringify(data)},"seq":${this.topics.seqOf(topic)},"epoch":${this.epoch},"ts":${this.clock.now()}}`,
    );
  }

  /**
   * Whether a publication on `topic` goes out only as the plain message (no hosted-dialect twin,
   * no coalescing client keeping it, nobody observing `published$`), so it can be written as bytes.
   */
  plainOnly(topic: string, subs: Subs): boolean {
    return subs.plain && !subs.data && !this.published$.observed && !this.retained.keeps(topic);
  }

  /** Publishes the body in `bytes` (without its closing brace, `reset()` before it was written) with its envelope, as `publish` would the text. */
  sendBytes(topic: string, subs: Held, at: FrameTimes | undefined): void {
    const seq = subs.seq !== undefined ? ++subs.seq.n : this.topics.next(topic);
    this.tailBytes(seq, this.clock.now(), at);
    this.published++;
    this.sink(topic, this.bytes.view());
  }

  /** The envelope `emit` appends (`,` then seq, epoch, ts and the frame's times, and `}`), into `bytes`. */
  private tailBytes(seq: number, ts: number, at: FrameTimes | undefined): void {
    const w = this.bytes;
    if (at !== undefined) {
      w.ascii(',"venue_ts":');
      w.numVia(this.venueTs, at.timestamp);
      w.ascii(',"recv_ts":');
      w.numVia(this.recvTs, at.localTimestamp);
    }
    w.ascii(',"seq":');
    w.num(seq);
    w.ascii(',"epoch":');
    w.numVia(this.epochText, this.epoch);
    w.ascii(',"ts":');
    w.numVia(this.ts, ts);
    w.char(125);
  }
}
