import type { PubAck } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import type { ClusterLink } from './link.js';

/** Header of every stream message: the core's epoch (its hub's). */
export const EPOCH_HEADER = 'Cb-Epoch';
/** Header of every stream message: its number in the core's sending order (1, 2, …), so an edge sees a message it never got. */
export const SEQ_HEADER = 'Cb-Seq';

/** How many messages the core holds while NATS is unreachable or slow to acknowledge; past it the oldest is dropped. */
export const PUBLISH_BUFFER = 100_000;
/** Publishes awaiting JetStream's acknowledgement before new messages wait in the buffer. */
export const PUBLISH_IN_FLIGHT = 5_000;
/** A refused or unacknowledged publish is sent again after this long, at most PUBLISH_ATTEMPTS times in all. */
export const RETRY_MS = 250;
export const PUBLISH_ATTEMPTS = 20;

/** What the publisher has done since start (exported on /metrics). */
export interface PublisherStats {
  /** Acknowledged by the stream. */
  published: number;
  /** Publishes refused or timed out; each is sent again (its msgID makes a stored one a duplicate). */
  failed: number;
  /** Dropped from a full buffer, oldest first, or refused PUBLISH_ATTEMPTS times: edges re-bootstrap past them. */
  dropped: number;
  /** Waiting in the buffer now. */
  buffered: number;
  /** Sent, awaiting acknowledgement now. */
  inFlight: number;
  /** NATS reachable now. */
  connected: boolean;
}

interface Pending {
  readonly subject: string;
  readonly body: Uint8Array;
  readonly n: number;
  attempts: number;
}

/**
 * The core's side of the stream: numbers every message (headers `Cb-Epoch`, `Cb-Seq`) and sends it
 * in order; while NATS is unreachable, or `inFlight` publishes are unacknowledged, messages wait in
 * a buffer of at most `capacity`, and the oldest are dropped past it (counted), so the core holds
 * nothing unbounded. A publish refused or unacknowledged (NATS going down refuses those in flight)
 * is sent again, before anything newer, after RETRY_MS: each message's msgID (`<epoch>.<n>`) lets
 * JetStream drop one it had stored, and an edge puts one that comes after newer ones back in order.
 */
export class StreamPublisher {
  readonly stats: PublisherStats = { published: 0, failed: 0, dropped: 0, buffered: 0, inFlight: 0, connected: true };
  private readonly queue: Pending[] = [];
  /** Refused publishes to send again, by number. */
  private readonly retry: Pending[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private head = 0;
  private n = 0;
  private last: Promise<PubAck> | undefined;
  private readonly capacity: number;
  private readonly maxInFlight: number;

  constructor(
    private readonly link: ClusterLink,
    readonly epoch: number,
    private readonly onError: (e: unknown, stats: PublisherStats) => void,
    opts: { capacity?: number; inFlight?: number } = {},
  ) {
    this.capacity = opts.capacity ?? PUBLISH_BUFFER;
    this.maxInFlight = opts.inFlight ?? PUBLISH_IN_FLIGHT;
  }

  /** The number of the last message handed to `send` (the state a snapshot cuts includes up to it). */
  get sent(): number {
    return this.n;
  }

  /** True when every message handed to `send` has gone to NATS (none waits in the buffer). */
  get drained(): boolean {
    return this.queue.length === this.head && this.retry.length === 0;
  }

  /** The acknowledgement of the last message sent to NATS, if any was. */
  get lastAck(): Promise<PubAck> | undefined {
    return this.last;
  }

  /** Numbers a message and sends it, or buffers it behind those waiting. */
  send(subject: string, body: Uint8Array): void {
    const m: Pending = { subject, body, n: ++this.n, attempts: 0 };
    if (this.drained && this.canSend()) return this.publish(m);
    this.queue.push(m);
    if (this.queue.length - this.head > this.capacity) {
      this.head++;
      this.stats.dropped++;
    }
    this.compact();
    this.stats.buffered = this.queue.length - this.head + this.retry.length;
  }

  /** NATS went away or came back; coming back sends what waits. */
  setConnected(connected: boolean): void {
    this.stats.connected = connected;
    if (connected) this.drain();
  }

  private canSend(): boolean {
    return this.stats.connected && this.stats.inFlight < this.maxInFlight;
  }

  private drain(): void {
    // While refused publishes wait to be sent again, nothing newer goes ahead of them.
    if (this.retryTimer) return;
    while (this.retry.length > 0 && this.canSend()) this.publish(this.retry.shift()!);
    while (this.retry.length === 0 && this.queue.length > this.head && this.canSend()) this.publish(this.queue[this.head++]!);
    this.compact();
    this.stats.buffered = this.queue.length - this.head + this.retry.length;
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  private publish(m: Pending): void {
    const h = headers();
    h.set(EPOCH_HEADER, String(this.epoch));
    h.set(SEQ_HEADER, String(m.n));
    this.stats.inFlight++;
    m.attempts++;
    const ack = this.link.js.publish(m.subject, m.body, { headers: h, msgID: `${this.epoch}.${m.n}` });
    this.last = ack;
    ack.then(
      () => {
        this.stats.published++;
        this.settled();
      },
      (e: unknown) => {
        this.stats.failed++;
        this.onError(e, this.stats);
        this.again(m);
        this.settled();
      },
    );
  }

  /** Queues a refused publish to be sent again after RETRY_MS, in number order; past PUBLISH_ATTEMPTS it is dropped. */
  private again(m: Pending): void {
    if (m.attempts >= PUBLISH_ATTEMPTS) {
      this.stats.dropped++;
      return;
    }
    let i = this.retry.length;
    while (i > 0 && this.retry[i - 1]!.n > m.n) i--;
    this.retry.splice(i, 0, m);
    this.retryTimer ??= setTimeout(() => {
      this.retryTimer = undefined;
      this.drain();
    }, RETRY_MS).unref();
  }

  private settled(): void {
    this.stats.inFlight--;
    if (!this.drained) this.drain();
  }
}
