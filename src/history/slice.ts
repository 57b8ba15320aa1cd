import { closeSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { namesMatching } from '../capture/store.js';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompressSync, constants } from 'node:zlib';
import { Packr, pack, unpack } from 'msgpackr';
import type { Level, NormalizedEvent, VenueLabel } from '../core/types.js';
import type { QuoteRecord } from '../state/quotes.js';

/**
 * The derived history index: one file per slice of receive time (`capture.checkpointIntervalMs`,
 * 5 minutes by default) in `DATA_DIR/capture/_history/<sliceStart>.hist`, written once when the
 * slice is over. It holds, per market, the market's state when the slice began (its books' levels
 * and its quote, as the replayed state held them) and the market's normalized events of the
 * slice, and per venue its feed events (disconnects and gaps reset books): everything needed to
 * rebuild one market at any moment of the slice without reading the other markets' frames. Each
 * market's part is compressed on its own and found through a directory at the head of the file,
 * so a read decompresses one market's five minutes.
 *
 * Layout: 8-byte magic, u32 directory length, the directory (msgpack: `{m: {key: [off, len]}, v:
 * {venue: [off, len]}}`, offsets from the end of the directory), then the Brotli parts.
 */
const MAGIC = Buffer.from('CBHIST1\n');
const SLICE = /^(\d+)\.hist$/;
const compress = promisify(brotliCompress);
/** Brotli quality 3, as the capture blocks: the parts are small and written once per slice. */
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 3 } };

/** The directory's packer: a slice of 100k markets has more keys than msgpack's 16-bit map size. */
const DIR_PACKR = new Packr({ variableMapSize: true });

/** Parts compressed at once: each Brotli job holds its own native state, so 100k at once took GBs. */
const COMPRESS_LANES = 8;

/** A book as a slice begins: absolute levels, venue time, receive time of its last change, ready. */
export type BookStart = readonly [instrument: string, bids: readonly Level[], asks: readonly Level[], ts: number, recvTs: number, ready: boolean];

/** An event with the capture sequence number of the record it came from (the order events are applied in). */
export type SeqEvent = readonly [seq: number, event: NormalizedEvent];

/** One market in a slice: its state as the slice began and its events in the slice. */
export interface MarketPart {
  readonly books: readonly BookStart[];
  readonly quote: QuoteRecord | undefined;
  readonly events: readonly SeqEvent[];
}

/** A slice: its start, every market's part and every venue's feed events. */
export interface Slice {
  readonly start: number;
  readonly markets: ReadonlyMap<string, MarketPart>;
  readonly venues: ReadonlyMap<VenueLabel, readonly SeqEvent[]>;
}

/** The key of a market in a slice. */
export function partKey(venue: VenueLabel, marketId: string): string {
  return `${venue}\u0000${marketId}`;
}

type Dir = { m: Record<string, [number, number]>; v: Record<string, [number, number]> };

/** Writes a slice whole (to a temporary name, then renamed: a reader never sees half of one). Returns its bytes. */
export async function writeSlice(dir: string, s: Slice): Promise<number> {
  mkdirSync(dir, { recursive: true });
  const d: Dir = { m: {}, v: {} };
  const entries: [Record<string, [number, number]>, string, unknown][] = [];
  for (const [k, part] of s.markets) entries.push([d.m, k, part]);
  for (const [v, events] of s.venues) entries.push([d.v, v, events]);
  // Compressed on the thread pool, COMPRESS_LANES at a time (one round trip per part in turn is seconds
  // for thousands of markets; all at once held a Brotli state per market, GBs at 100k).
  const parts: Buffer[] = new Array<Buffer>(entries.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < entries.length; i = next++) parts[i] = await compress(pack(entries[i]![2]), BROTLI);
  };
  await Promise.all(Array.from({ length: COMPRESS_LANES }, lane));
  let off = 0;
  for (let i = 0; i < entries.length; i++) {
    const [to, key] = entries[i]!;
    to[key] = [off, parts[i]!.length];
    off += parts[i]!.length;
  }
  const head = DIR_PACKR.pack(d);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length);
  const file = join(dir, `${s.start}.hist`);
  const body = Buffer.concat([MAGIC, len, head, ...parts]);
  await writeFile(`${file}.tmp`, body);
  await rename(`${file}.tmp`, file);
  return body.length;
}

/** The slice starts kept in `dir`, oldest first. */
export function sliceStarts(dir: string): number[] {
  return namesMatching(dir, SLICE)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/** Removes the slice files that start before `t`. */
export function pruneSlices(dir: string, t: number): number {
  let n = 0;
  for (const s of sliceStarts(dir))
    if (s < t) {
      rmSync(join(dir, `${s}.hist`), { force: true });
      n++;
    }
  return n;
}

/** A slice file opened for reading: its directory parsed once, parts read on demand. */
export class SliceFile {
  private constructor(
    private readonly file: string,
    private readonly dir: Dir,
    private readonly base: number,
  ) {}

  /** Opens `dir/<start>.hist` (a damaged file throws, naming it). */
  static open(dir: string, start: number): SliceFile {
    const file = join(dir, `${start}.hist`);
    const fd = openSync(file, 'r');
    try {
      const h = Buffer.alloc(MAGIC.length + 4);
      readSync(fd, h, 0, h.length, 0);
      if (!h.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error(`${file} is not a crossbook history slice (bad magic)`);
      const len = h.readUInt32LE(MAGIC.length);
      const d = Buffer.alloc(len);
      readSync(fd, d, 0, len, h.length);
      return new SliceFile(file, DIR_PACKR.unpack(d) as Dir, h.length + len);
    } finally {
      closeSync(fd);
    }
  }

  /** A market's part (undefined: the market had no state and no events in the slice). */
  market(key: string): MarketPart | undefined {
    return this.part(this.dir.m[key]) as MarketPart | undefined;
  }

  /** A venue's feed events in the slice. */
  venue(venue: VenueLabel): readonly SeqEvent[] {
    return (this.part(this.dir.v[venue]) as SeqEvent[] | undefined) ?? [];
  }

  private part(at: [number, number] | undefined): unknown {
    if (at === undefined) return undefined;
    const fd = openSync(this.file, 'r');
    try {
      const b = Buffer.alloc(at[1]);
      readSync(fd, b, 0, at[1], this.base + at[0]);
      return unpack(brotliDecompressSync(b));
    } catch (e) {
      throw new Error(`history slice ${this.file} does not read back at ${at[0]}: ${(e as Error).message}`);
    } finally {
      closeSync(fd);
    }
  }
}
