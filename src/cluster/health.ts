/** An edge's link to the core, as /status shows it. */
export interface ClusterStatus {
  readonly role: 'edge';
  /** following: the stream arrives; interrupted: NATS unreachable or the stream silent; resyncing: re-bootstrapping from a snapshot. */
  readonly link: 'following' | 'interrupted' | 'resyncing';
  readonly nats_connected: boolean;
  /** The core's epoch the edge follows. */
  readonly epoch: number;
  /** Stream sequence of the last message applied. */
  readonly stream_seq: number;
  readonly last_message_at: string | null;
  /** Times the link was interrupted since start. */
  readonly interruptions: number;
  /** Times the edge started again from a snapshot (a gap in the stream, or a new core) since start. */
  readonly rebootstraps: number;
}

/** An edge calls the stream stalled after this long without a message (the core beats every second). */
export const STALL_MS = 3_000;

/**
 * What an edge knows of its link to the core: whether NATS is reachable, when the last stream
 * message came, and what it does about it. Transitions are reported by the methods' return value
 * (true when the link just changed between working and not), so the caller tells its clients once.
 */
export class LinkHealth {
  natsConnected = true;
  epoch: number;
  streamSeq: number;
  lastMessageAt = 0;
  interruptions = 0;
  rebootstraps = 0;
  private resyncing = false;
  private down = false;

  constructor(epoch: number, streamSeq: number, now: number) {
    this.epoch = epoch;
    this.streamSeq = streamSeq;
    this.lastMessageAt = now;
  }

  /** A stream message arrived: true when it ends an interruption. */
  message(streamSeq: number, now: number): boolean {
    this.streamSeq = streamSeq;
    this.lastMessageAt = now;
    return this.update(now);
  }

  /** NATS went away or came back: true when the link changed. */
  nats(connected: boolean, now: number): boolean {
    this.natsConnected = connected;
    return this.update(now);
  }

  /** Starting again from a snapshot (true) or done (false). */
  rebootstrap(active: boolean): void {
    this.resyncing = active;
    if (active) this.rebootstraps++;
  }

  /** Looks at the clock: true when the link changed (the stream went silent). */
  update(now: number): boolean {
    const down = !this.natsConnected || now - this.lastMessageAt > STALL_MS;
    if (down === this.down) return false;
    this.down = down;
    if (down) this.interruptions++;
    return true;
  }

  get interrupted(): boolean {
    return this.down;
  }

  status(): ClusterStatus {
    return {
      role: 'edge',
      link: this.resyncing ? 'resyncing' : this.down ? 'interrupted' : 'following',
      nats_connected: this.natsConnected,
      epoch: this.epoch,
      stream_seq: this.streamSeq,
      last_message_at: this.lastMessageAt > 0 ? new Date(this.lastMessageAt).toISOString() : null,
      interruptions: this.interruptions,
      rebootstraps: this.rebootstraps,
    };
  }
}
