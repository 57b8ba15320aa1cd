import type { Logger } from '../../core/log.js';

/**
 * Counters every mapper and feed keeps. A malformed frame is counted and logged once per kind,
 * so a venue sending garbage for a minute costs one log line, not a million.
 */
export class FeedStats {
  frames = 0;
  events = 0;
  /** Frames that were acks, heartbeats or variants we do not use: counted, not logged. */
  ignored = 0;
  gaps = 0;
  reconnects = 0;
  readonly malformed = new Map<string, number>();
  readonly unknown = new Map<string, number>();
  lastFrameAt = 0;

  constructor(private readonly logger?: Logger) {}

  /** Counts a malformed frame of `kind`; logs the first of each kind. */
  malformedFrame(kind: string, detail: string, sample?: unknown): void {
    const n = (this.malformed.get(kind) ?? 0) + 1;
    this.malformed.set(kind, n);
    if (n === 1) this.logger?.warn({ kind, detail, sample: truncate(sample) }, 'malformed venue frame dropped');
  }

  /** Counts a frame of a type we do not know; logs the first of each type. */
  unknownFrame(kind: string): void {
    const n = (this.unknown.get(kind) ?? 0) + 1;
    this.unknown.set(kind, n);
    if (n === 1) this.logger?.info({ kind }, 'unknown venue frame type ignored');
  }

  get malformedTotal(): number {
    let t = 0;
    for (const n of this.malformed.values()) t += n;
    return t;
  }

  toJSON(): Record<string, unknown> {
    return {
      frames: this.frames,
      events: this.events,
      ignored: this.ignored,
      gaps: this.gaps,
      reconnects: this.reconnects,
      malformed: Object.fromEntries(this.malformed),
      unknown: Object.fromEntries(this.unknown),
      lastFrameAt: this.lastFrameAt,
    };
  }
}

function truncate(v: unknown): unknown {
  if (v === undefined) return undefined;
  const s = typeof v === 'string' ? v : safeStringify(v);
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}

function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
