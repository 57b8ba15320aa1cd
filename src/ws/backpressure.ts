import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { wire, type Conn, type Socket } from './conn.js';
import { CLOSE, CODES } from './protocol.js';
import type { Topics } from './topics.js';

/** Bytes a close frame takes (2 + 2-byte code + a reason of at most 123 bytes, and the header). */
export const CLOSE_FRAME_ROOM = 131;

/**
 * Latest serialized message per topic, kept only for topics some coalescing client is subscribed
 * to (`watch`: counted per such client), so that a publish nobody coalesces does not outlive the
 * young generation.
 */
export class Retained {
  private readonly latest = new Map<string, { seq: number; msg: string; dataMsg: string }>();
  private readonly watched = new Map<string, number>();

  /** Whether the latest message of `topic` is kept (some coalescing client holds it). */
  keeps(topic: string): boolean {
    return this.watched.size > 0 && this.watched.has(topic);
  }

  set(topic: string, seq: number, msg: string, dataMsg: string): void {
    this.latest.set(topic, { seq, msg, dataMsg });
  }

  get(topic: string): { readonly seq: number; readonly msg: string; readonly dataMsg: string } | undefined {
    return this.latest.get(topic);
  }

  watch(topic: string): void {
    this.watched.set(topic, (this.watched.get(topic) ?? 0) + 1);
  }

  unwatch(topic: string): void {
    const n = (this.watched.get(topic) ?? 1) - 1;
    if (n > 0) return void this.watched.set(topic, n);
    this.watched.delete(topic);
    this.latest.delete(topic);
  }

  /** Topics whose latest message is kept. */
  get size(): number {
    return this.latest.size;
  }
}

export interface BackpressureOptions {
  /** Above this many buffered bytes a client gets coalesced updates (latest per topic) instead of every one. */
  readonly coalesceBytes: number;
  /** Above this many buffered bytes a client is disconnected with a reason. */
  readonly dropBytes: number;
  /** A client coalescing this long without catching up is disconnected with a reason (the second bound in time). */
  readonly stallMs: number;
}

/**
 * What the hub does about a client that reads slower than updates arrive: past `coalesceBytes`
 * buffered it is moved off the pub/sub topics onto coalesced catch-up (the latest message of each
 * of its topics when it drains), and past `dropBytes`, or coalescing for `stallMs` without catching
 * up, it is closed with 4008 and a reason. Closes and notices wait for room in uWS's buffer, whose
 * cap (`maxBackpressure`) makes uWS drop what is sent past it, close frames included.
 */
export class Backpressure {
  /** Clients disconnected for not reading. */
  dropped = 0;

  constructor(
    private readonly opts: BackpressureOptions,
    private readonly topics: Topics,
    private readonly retained: Retained,
    private readonly log: Logger,
    private readonly clock: Clock,
  ) {}

  /** uWS's own per-connection buffer cap: it skips a publish, and drops a close frame, past it. */
  maxBackpressure(): number {
    return this.opts.dropBytes * 2;
  }

  /** Closes a connection with `code` and `reason`, logged, once what it has not read has gone out (`endWhenRoom`). */
  closeWith(ws: Socket, c: Conn, code: number, reason: string): void {
    c.closed = true;
    this.log.warn({ key: c.key?.id, code, reason }, 'closing websocket client');
    this.endWhenRoom(ws, c, code, reason);
  }

  /** Sends `text` now if uWS's buffer has room for it (past its cap uWS drops it), else on a later drain. */
  sendWhenRoom(ws: Socket, c: Conn, text: string): void {
    if (ws.getBufferedAmount() + text.length + CLOSE_FRAME_ROOM <= this.maxBackpressure()) {
      c.notice = undefined;
      ws.send(text);
    } else c.notice = text;
  }

  /**
   * Closes with `code` and `reason` after what the client has not read yet. uWS drops the close
   * frame of a connection whose buffer has reached its cap (the client would see 1006, no reason),
   * so such a close waits for the client to read (`drain`); one that reads nothing for `stallMs`
   * more is cut off.
   */
  endWhenRoom(ws: Socket, c: Conn, code: number, reason: string): void {
    if (c.notice === undefined && ws.getBufferedAmount() + CLOSE_FRAME_ROOM <= this.maxBackpressure()) {
      c.closing = undefined;
      ws.end(code, reason);
    } else c.closing ??= { code, reason, since: this.clock.now() };
  }

  /** One sweep over the open connections: the two bounds above. */
  sweep(conns: Iterable<Socket>): void {
    for (const ws of conns) {
      const c = ws.getUserData();
      if (c.closing && this.clock.now() - c.closing.since > this.opts.stallMs) ws.close();
      if (c.closed) continue;
      const buffered = ws.getBufferedAmount();
      if (!c.coalescing) {
        if (buffered > this.opts.coalesceBytes) this.coalesce(ws, c);
        continue;
      }
      // Second bound: still coalescing and past dropBytes, or not catching up within stallMs.
      const stalled = this.clock.now() - c.coalescingSince > this.opts.stallMs;
      if (buffered > this.opts.dropBytes || stalled) {
        this.dropped++;
        this.log.warn({ key: c.key?.id, buffered, stalled }, 'websocket client too slow; disconnecting');
        c.closed = true;
        this.endWhenRoom(
          ws,
          c,
          CLOSE.BACKPRESSURE,
          stalled ? 'backpressure: client stopped reading (coalesced and not catching up)' : 'backpressure limit exceeded: client is not reading',
        );
      }
    }
  }

  /**
   * First bound: off the topics; from now on this client gets the latest of each topic when it
   * drains. (Even a client already past the second bound is coalesced first and given stallMs to
   * catch up: the sweep can see a burst only after it happened.)
   */
  private coalesce(ws: Socket, c: Conn): void {
    c.coalescing = true;
    c.coalescingSince = this.clock.now();
    this.topics.changed();
    for (const t of c.topics.keys()) {
      c.delivered.set(t, this.topics.seqOf(t));
      this.retained.watch(t);
      ws.unsubscribe(wire(c, t));
    }
    this.sendWhenRoom(
      ws,
      c,
      JSON.stringify({
        type: 'warning',
        code: CODES.COALESCED,
        message: 'you are reading slower than updates arrive: updates are coalesced to the latest per market until you catch up',
        ts: this.clock.now(),
      }),
    );
  }

  /** uWS's drain: a waiting notice or close goes out, and a coalescing client catches up, then rejoins its topics. */
  drain(ws: Socket): void {
    const c = ws.getUserData();
    if (c.notice !== undefined) this.sendWhenRoom(ws, c, c.notice);
    if (c.closing) {
      // uWS drains only once the client read some of its buffer: the stall bound counts from its last read.
      c.closing = { ...c.closing, since: this.clock.now() };
      return this.endWhenRoom(ws, c, c.closing.code, c.closing.reason);
    }
    if (!c.coalescing || c.closed) return;
    if (ws.getBufferedAmount() > this.opts.coalesceBytes / 2) return;
    for (const [t] of c.topics) {
      const l = this.retained.get(t);
      if (l && l.seq > (c.delivered.get(t) ?? 0)) {
        ws.send(c.hosted ? l.dataMsg : l.msg);
        c.delivered.set(t, l.seq);
      }
      if (ws.getBufferedAmount() > this.opts.coalesceBytes) return; // more next drain
    }
    c.coalescing = false;
    c.delivered.clear();
    this.topics.changed();
    for (const t of c.topics.keys()) {
      this.retained.unwatch(t);
      ws.subscribe(wire(c, t));
    }
  }
}
