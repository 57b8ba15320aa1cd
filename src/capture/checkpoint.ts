import { pack } from 'msgpackr';
import type { Level, VenueLabel } from '../core/types.js';
import type { OrderBook } from '../core/book.js';

/** One book in a checkpoint: absolute L2 levels, best first, as the state held them. */
export interface CheckpointBook {
  readonly venue: VenueLabel;
  readonly instrument: string;
  readonly bids: readonly Level[];
  readonly asks: readonly Level[];
  /** The book's venue time. */
  readonly ts: number;
}

/**
 * The books of the state at one moment, with the capture sequence number they cover: every record
 * up to `seq` had been applied, none after. Any moment is then this checkpoint plus the records
 * after `seq` up to it, a run bounded by the checkpoint interval.
 */
export interface Checkpoint {
  readonly seq: number;
  /** When it was taken (the clock's ms). */
  readonly t: number;
  readonly books: readonly CheckpointBook[];
}

/** The ready books of `books` (a BookStore's `entries()`), copied: the state goes on changing them. The object `packCheckpoint` writes. */
export function checkpointOf(books: Iterable<readonly [VenueLabel, string, OrderBook]>, seq: number, t: number): Checkpoint {
  const out: CheckpointBook[] = [];
  for (const [venue, instrument, b] of books) if (b.ready) out.push(checkpointBook(venue, instrument, b));
  return { seq, t, books: out };
}

/** A ready book as a checkpoint holds it, its levels copied. */
function checkpointBook(venue: VenueLabel, instrument: string, b: OrderBook): CheckpointBook {
  return { venue, instrument, bids: b.levelsOf(true), asks: b.levelsOf(false), ts: b.timestamp };
}

/**
 * The msgpack bytes of `checkpointOf(books, seq, t)`, the same bytes `pack` gives it, packed a
 * book at a time: no copy of every book at once in the heap (at 108k markets ~100 MiB of level
 * arrays, every checkpoint interval), and no 30 MB value through msgpackr's shared buffer, which
 * keeps the size of the largest value it ever packed for good.
 */
export function packCheckpoint(books: Iterable<readonly [VenueLabel, string, OrderBook]>, seq: number, t: number): Buffer {
  // Each book's bytes copied at once into 1 MiB chunks: msgpackr's buffer is reused for the next book, not kept by a part.
  const chunks: Buffer[] = [];
  let chunk = Buffer.allocUnsafe(0);
  let pos = 0;
  let n = 0;
  for (const [venue, instrument, b] of books)
    if (b.ready) {
      const p = pack(checkpointBook(venue, instrument, b));
      if (pos + p.length > chunk.length) {
        if (pos > 0) chunks.push(chunk.subarray(0, pos));
        chunk = Buffer.allocUnsafe(Math.max(CHUNK, p.length));
        pos = 0;
      }
      pos += p.copy(chunk, pos);
      n++;
    }
  if (pos > 0) chunks.push(chunk.subarray(0, pos));
  // `{ seq, t, books: [] }` ends with the empty array's one-byte head: the head of n books replaces it.
  const head = pack({ seq, t, books: [] } satisfies Checkpoint);
  return Buffer.concat([head.subarray(0, head.length - 1), arrayHead(n), ...chunks]);
}

/** Bytes of the chunks `packCheckpoint` copies the books into. */
const CHUNK = 1 << 20;

/** A msgpack array's head for `n` elements (fixarray, array 16, array 32). */
function arrayHead(n: number): Buffer {
  if (n < 16) return Buffer.of(0x90 | n);
  if (n < 0x10000) return Buffer.of(0xdc, n >> 8, n & 0xff);
  const b = Buffer.allocUnsafe(5);
  b[0] = 0xdd;
  b.writeUInt32BE(n, 1);
  return b;
}
