import { closeSync, fstatSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { namesMatching } from '../capture/store.js';
import { open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
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
 * market's part is compressed on its own and found through a directory, so a read decompresses one
 * market's slice. A slice also ends early, at any moment, once its events pass a size
 * (`HISTORY_LIMITS.sliceEvents`): the next one starts there.
 *
 * Layout (CBHIST2, written as it goes by SliceWriter): 8-byte magic, the Brotli parts, the
 * directory (msgpack: `{m: {key: [off, len]}, v: {venue: [off, len]}}`, offsets from the end of
 * the magic), u32 directory length, the magic again. Files of the first layout (CBHIST1: magic, u32
 * directory length, the directory, then the parts) still read.
 */
const MAGIC = Buffer.from('CBHIST1\n');
/** The layout written since the index moved to its worker thread: parts first, the directory at the end. */
const MAGIC2 = Buffer.from('CBHIST2\n');
const SLICE = /^(\d+)\.hist$/;
/** Brotli quality 3, as the capture blocks: the parts are small and written once per slice. */
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 3 } };

/** The directory's packer: a slice of 100k markets has more keys than msgpack's 16-bit map size. */
const DIR_PACKR = new Packr({ variableMapSize: true });

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

/**
 * A slice's directory: each market's part (`m`) and venue's feed events (`v`) by key, and what the
 * slice covers (`c`: from, to, receive times in ms; absent in files written before it was kept, which
 * are read as covering up to the next slice).
 */
type Dir = { m: Record<string, [number, number]>; v: Record<string, [number, number]>; c?: Covers };

/**
 * The receive times a slice answers for: from when every captured record was being indexed into it
 * (its start, or for a process's first slice the moment the process started) to the moment up to
 * which every record was indexed into it (where the next slice took over, or where its process's
 * index closed). Past `to` and before the next slice's `from` the index holds nothing: the service
 * was stopped, or its close was cut short.
 */
export type Covers = readonly [from: number, to: number];

/** Writes a slice whole (to a temporary name, then renamed: a reader never sees half of one). Returns its bytes. */
export async function writeSlice(dir: string, s: Slice): Promise<number> {
  const w = await SliceWriter.open(dir, s.start);
  try {
    await w.add([...s.markets].map(([k, part]) => ['m', k, part] as const));
    await w.add([...s.venues].map(([v, events]) => ['v', v, events] as const));
    return await w.finish();
  } catch (e) {
    await w.abort();
    throw e;
  }
}

/** One entry of a slice: a market's part (`m`) or a venue's feed events (`v`), by key. */
export type SliceEntry = readonly ['m', string, MarketPart] | readonly ['v', string, readonly SeqEvent[]];

/**
 * A slice file written as it goes: parts are compressed and appended in batches (`add`), the
 * directory follows them (`finish`), so a slice of 100k markets never holds more than a batch of
 * parts, nor the whole file, in memory. Written to a temporary name and renamed into place: a reader
 * never sees half of one.
 */
export class SliceWriter {
  private readonly d: Dir = { m: {}, v: {} };
  private off = 0;

  private constructor(
    private readonly file: string,
    private readonly fh: FileHandle,
  ) {}

  static async open(dir: string, start: number): Promise<SliceWriter> {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${start}.hist`);
    const fh = await open(`${file}.tmp`, 'w');
    await fh.write(MAGIC2, 0, MAGIC2.length, 0);
    return new SliceWriter(file, fh);
  }

  /** Whether an entry of this key was added already. */
  has(kind: 'm' | 'v', key: string): boolean {
    return this.d[kind][key] !== undefined;
  }

  /**
   * Compresses entries and appends them in order. Synchronously, on the calling thread (the history
   * index's, at its background priority): a part is a few hundred bytes, and libuv's pool cost three
   * times the CPU per part (a job and a Brotli state each, 63–74 against 21 µs) and ran at the main
   * thread's priority; a slice of 39k markets written at shutdown took 23 s that way on a loaded host.
   */
  async add(entries: readonly SliceEntry[]): Promise<void> {
    const parts: Buffer[] = new Array<Buffer>(entries.length);
    for (let i = 0; i < entries.length; i++) parts[i] = brotliCompressSync(pack(entries[i]![2]), BROTLI);
    const at = MAGIC2.length + this.off;
    for (let i = 0; i < entries.length; i++) {
      const [kind, key] = entries[i]!;
      this.d[kind][key] = [this.off, parts[i]!.length];
      this.off += parts[i]!.length;
    }
    if (parts.length > 0) await this.fh.writev(parts, at);
  }

  /** Writes the directory (with what the slice covers) behind the parts, closes and renames the file into place. Returns its bytes. */
  async finish(covers?: Covers): Promise<number> {
    const head = DIR_PACKR.pack(covers === undefined ? this.d : { ...this.d, c: covers });
    const tail = Buffer.alloc(4);
    tail.writeUInt32LE(head.length);
    await this.fh.writev([head, tail, MAGIC2], MAGIC2.length + this.off);
    await this.fh.close();
    await rename(`${this.file}.tmp`, this.file);
    return MAGIC2.length + this.off + head.length + 4 + MAGIC2.length;
  }

  /** Drops a slice that could not be written whole. */
  async abort(): Promise<void> {
    await this.fh.close().catch(() => undefined);
    rmSync(`${this.file}.tmp`, { force: true });
  }
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
      const magic = h.subarray(0, MAGIC.length);
      if (magic.equals(MAGIC2)) return SliceFile.openV2(file, fd);
      if (!magic.equals(MAGIC)) throw new Error(`${file} is not a crossbook history slice (bad magic)`);
      const len = h.readUInt32LE(MAGIC.length);
      const d = Buffer.alloc(len);
      readSync(fd, d, 0, len, h.length);
      return new SliceFile(file, DIR_PACKR.unpack(d) as Dir, h.length + len);
    } finally {
      closeSync(fd);
    }
  }

  /** A slice written by SliceWriter: the directory and its length at the end, before the closing magic. */
  private static openV2(file: string, fd: number): SliceFile {
    const size = fstatSync(fd).size;
    const t = Buffer.alloc(4 + MAGIC2.length);
    if (size < MAGIC2.length + t.length) throw new Error(`${file} is a truncated crossbook history slice`);
    readSync(fd, t, 0, t.length, size - t.length);
    if (!t.subarray(4).equals(MAGIC2)) throw new Error(`${file} is a truncated crossbook history slice (no closing magic)`);
    const len = t.readUInt32LE(0);
    const at = size - t.length - len;
    if (at < MAGIC2.length) throw new Error(`${file} is a damaged crossbook history slice (directory length ${len})`);
    const d = Buffer.alloc(len);
    readSync(fd, d, 0, len, at);
    return new SliceFile(file, DIR_PACKR.unpack(d) as Dir, MAGIC2.length);
  }

  /** What the slice covers (undefined: a file written before slices said so). */
  get covers(): Covers | undefined {
    const c: unknown = this.dir.c;
    // A directory that passed its magic and length checks but holds something else here is read as a file without it.
    return Array.isArray(c) && c.length === 2 && Number.isFinite(c[0]) && Number.isFinite(c[1]) && c[0] <= c[1] ? (c as unknown as Covers) : undefined;
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
