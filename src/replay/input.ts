import { closeSync, createReadStream, openSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import type { NormalizedEvent } from '../core/types.js';

/**
 * What a pipeline replay consumes, in the order live applied it: a normalized event (applied at its
 * `localTimestamp`), or a flush marker where the live per-turn flush ran (`at`: its time). The same
 * shape as the capture reader's `ReplayItem`.
 */
export type ReplayItem =
  { readonly type: 'event'; readonly seq: number; readonly event: NormalizedEvent } | { readonly type: 'flush'; readonly seq: number; readonly at: number };

/** An item's time: an event's receive time, a flush marker's `at`. */
export function itemTime(item: ReplayItem): number {
  return item.type === 'event' ? item.event.localTimestamp : item.at;
}

/** A replay's input: items one at a time, or batches of them, in the order live applied them. */
export type ReplayInput = AsyncIterable<ReplayItem | readonly ReplayItem[]>;

/**
 * The items of `items` before the first one `past` says lies beyond the window, in the input's own
 * shape (a batch is cut there; nothing after it is read).
 */
export async function* itemsBefore(items: ReplayInput, past: (item: ReplayItem) => boolean): AsyncGenerator<ReplayItem | readonly ReplayItem[]> {
  for await (const v of items) {
    if (!Array.isArray(v)) {
      const item = v as ReplayItem;
      if (past(item)) return;
      yield item;
      continue;
    }
    const batch = v as readonly ReplayItem[];
    const cut = batch.findIndex(past);
    if (cut < 0) yield batch;
    else {
      if (cut > 0) yield batch.slice(0, cut);
      return;
    }
  }
}

/** What a live run tells a recorder: each event as it is applied, and each time the turn flushes. */
export interface ReplayTap {
  event(ev: NormalizedEvent): void;
  flush(at: number): void;
  /** The time the flows were wired at (where their timers count from). */
  start?(at: number): void;
}

/**
 * A recorder of a live run in memory, as NDJSON lines of ReplayItems. Each event is serialized as it
 * comes (a mapper may reuse its objects, so nothing is kept by reference).
 */
export class Recording implements ReplayTap {
  readonly lines: string[] = [];
  /** When the live flows were wired: the replay's clock starts there. */
  startedAt: number | undefined;
  private seq = 0;

  start(at: number): void {
    this.startedAt = at;
  }

  event(ev: NormalizedEvent): void {
    this.lines.push(JSON.stringify({ type: 'event', seq: this.seq++, event: ev }));
  }

  flush(at: number): void {
    this.lines.push(JSON.stringify({ type: 'flush', seq: this.seq++, at }));
  }

  /** The recording as replay input (parsed again, as a file of it would be). */
  async *items(): AsyncGenerator<ReplayItem> {
    for (let i = 0; i < this.lines.length; i++) yield parseItem(this.lines[i]!, i + 1);
  }
}

/**
 * A recorder of a live run into an NDJSON file of ReplayItems (`crossbook serve --record FILE`),
 * written a block of lines at a time; `close()` writes the rest.
 */
export class FileRecording implements ReplayTap {
  private readonly fd: number;
  private buf: string[] = [];
  private seq = 0;
  private closed = false;

  constructor(file: string) {
    this.fd = openSync(file, 'w');
  }

  event(ev: NormalizedEvent): void {
    this.push(JSON.stringify({ type: 'event', seq: this.seq++, event: ev }));
  }

  flush(at: number): void {
    this.push(JSON.stringify({ type: 'flush', seq: this.seq++, at }));
  }

  close(): void {
    if (this.closed) return;
    this.drain();
    closeSync(this.fd);
    this.closed = true;
  }

  private push(line: string): void {
    if (this.closed) return;
    this.buf.push(line);
    if (this.buf.length >= 4096) this.drain();
  }

  private drain(): void {
    if (this.buf.length > 0) writeSync(this.fd, this.buf.join('\n') + '\n');
    this.buf = [];
  }
}

const EVENT_TYPES = ['market', 'market_status', 'quote', 'book_snapshot', 'book_delta', 'trade', 'feed'] as const satisfies readonly NormalizedEvent['type'][];

const ms = z.number().int().min(0);
/** The envelope and the fields every event has; the rest of an event is the mappers' own output. */
const ItemSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('event'),
    seq: z.number().int().min(0),
    event: z.looseObject({ type: z.enum(EVENT_TYPES), venue: z.string().min(1), timestamp: z.number(), localTimestamp: ms }),
  }),
  z.object({ type: z.literal('flush'), seq: z.number().int().min(0), at: ms }),
]);

/** One line of replay input; a clear error naming the line when it is not one. */
export function parseItem(line: string, lineNo: number): ReplayItem {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (e) {
    throw new Error(`replay input line ${lineNo}: not JSON (${(e as Error).message})`);
  }
  const r = ItemSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new Error(`replay input line ${lineNo}: ${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`);
  }
  return raw as ReplayItem;
}

/** Replay input from an NDJSON file of ReplayItems (blank lines skipped), one item at a time. */
export async function* readItemsFile(file: string): AsyncGenerator<ReplayItem> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    yield parseItem(line, n);
  }
}
