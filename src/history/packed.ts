import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { pack, unpack } from 'msgpackr';

/** Bytes a chunk of the log holds by default (a record larger than that gets a chunk of its own). */
export const PACKED_CHUNK = 1 << 20;
/** A record's head: the address of the record it links back to (48-bit signed, -1 for none) and its length (u32). */
const HEAD = 10;
/** Bytes read at once for a record of a chunk on disk (its head and, for most records, all of it). */
const READ = 4096;

/**
 * Values kept as msgpack bytes in 1 MiB chunks instead of as JS objects: the history index's open
 * slice (every event of up to `HISTORY_LIMITS.sliceEvents`, and each market's state as the slice
 * began) held as objects cost hundreds of bytes per event and a copied book of level pairs per
 * market in the V8 heap; packed they cost their msgpack bytes. A value is packed with msgpackr's
 * `pack`, as the slice file packs it (`slice.ts`), so reading one back gives what the same value
 * written to the slice file and read from it gives. Each record links back to an earlier one (its
 * market's event before it), so a market's events are a chain read from its last address without a
 * list per market.
 *
 * Given a `file`, a chunk once full is written to it and let go: memory holds the chunk being filled
 * and nothing else, and a record of an earlier chunk is read back from the file (one read for most
 * records). At 108k markets the service's open slice (up to `HISTORY_LIMITS.sliceEvents` events and a
 * start per market) held 130–170 MiB of chunks; on disk it is page cache, which the kernel reclaims,
 * not the process's memory. `dispose()` closes and removes the file.
 */
export class PackedLog {
  /** The chunks in memory (with a file: only the last; the others undefined, on disk at `offsets`). */
  private readonly chunks: (Buffer | undefined)[] = [];
  /** Where each chunk written out starts in the file. */
  private readonly offsets: number[] = [];
  /** Bytes of each chunk written out. */
  private readonly lengths: number[] = [];
  private fd: number | undefined;
  private fileEnd = 0;
  private pos: number;
  private total = 0;

  /** `chunk`: bytes a chunk holds (default `PACKED_CHUNK`; a test makes it small to spill often). */
  constructor(
    private readonly file?: string,
    private readonly chunk = PACKED_CHUNK,
  ) {
    this.pos = chunk;
  }

  /** Packs `value` and appends it, linked back to the record at `prev` (-1: none). Returns its address. */
  add(value: unknown, prev: number): number {
    return this.addPacked(pack(value), prev);
  }

  /** Appends a value's packed bytes as they are (`packedAt` of a record, of this log or another), linked back to `prev`. Returns its address. */
  addPacked(bytes: Uint8Array, prev: number): number {
    const need = HEAD + bytes.length;
    let chunk = this.chunks[this.chunks.length - 1];
    if (chunk === undefined || this.pos + need > chunk.length) {
      if (chunk !== undefined && this.file !== undefined) this.spill(chunk);
      chunk = Buffer.allocUnsafeSlow(Math.max(this.chunk, need));
      this.chunks.push(chunk);
      this.pos = 0;
    }
    const at = (this.chunks.length - 1) * this.chunk + this.pos;
    chunk.writeIntLE(prev, this.pos, 6);
    chunk.writeUInt32LE(bytes.length, this.pos + 6);
    chunk.set(bytes, this.pos + HEAD);
    this.pos += need;
    this.total += need;
    return at;
  }

  /** The value at `at` (an address `add` returned). */
  read(at: number): unknown {
    const [chunk, off] = this.locate(at);
    return valueAt(chunk, off);
  }

  /** The packed bytes of the value at `at` (a view: copy them, or add them to a log, before the next read). */
  packedAt(at: number): Uint8Array {
    const [chunk, off] = this.locate(at);
    return chunk.subarray(off + HEAD, off + HEAD + chunk.readUInt32LE(off + 6));
  }

  /** The values of the chain ending at `last` (each record's link back), oldest first; empty for undefined or -1. */
  chain(last: number | undefined): unknown[] {
    const out: unknown[] = [];
    for (let at = last ?? -1; at >= 0;) {
      const [chunk, off] = this.locate(at);
      out.push(valueAt(chunk, off));
      at = chunk.readIntLE(off, 6);
    }
    return out.reverse();
  }

  /** Closes and removes the file (if any); the log is not read after. */
  dispose(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    if (this.file !== undefined) rmSync(this.file, { force: true });
  }

  /** Writes a full chunk to the file and lets go of it. */
  private spill(chunk: Buffer): void {
    const k = this.chunks.length - 1;
    if (this.fd === undefined) {
      mkdirSync(dirname(this.file!), { recursive: true });
      this.fd = openSync(this.file!, 'w+');
    }
    let done = 0;
    while (done < this.pos) done += writeSync(this.fd, chunk, done, this.pos - done, this.fileEnd + done);
    this.offsets[k] = this.fileEnd;
    this.lengths[k] = this.pos;
    this.fileEnd += this.pos;
    this.chunks[k] = undefined;
  }

  /** Bytes appended (records and their heads). */
  get bytes(): number {
    return this.total;
  }

  /** The bytes holding the record at `at` and its offset in them: its chunk in memory, or the record read from the file. */
  private locate(at: number): [Buffer, number] {
    const k = Math.floor(at / this.chunk);
    const chunk = this.chunks[k];
    if (chunk !== undefined) return [chunk, at % this.chunk];
    const base = this.offsets[k];
    if (base === undefined || this.fd === undefined) throw new RangeError(`no packed record at ${at}`);
    const off = at % this.chunk;
    const end = this.lengths[k]!;
    if (off + HEAD > end) throw new RangeError(`no packed record at ${at}`);
    // A fresh buffer per read: an unpacked value may keep a view of it (msgpack binary).
    let buf = Buffer.allocUnsafe(Math.min(READ, end - off));
    readFully(this.fd, buf, base + off);
    const need = HEAD + buf.readUInt32LE(6);
    if (need > buf.length) {
      buf = Buffer.allocUnsafe(need);
      readFully(this.fd, buf, base + off);
    }
    return [buf, 0];
  }
}

/** Fills `buf` from `fd` at `position`. */
function readFully(fd: number, buf: Buffer, position: number): void {
  for (let done = 0; done < buf.length;) {
    const n = readSync(fd, buf, done, buf.length - done, position + done);
    if (n === 0) throw new RangeError(`packed log file ends before ${position + buf.length}`);
    done += n;
  }
}

/** The value of the record at `off` in `chunk`: its packed bytes, after its head. */
function valueAt(chunk: Buffer, off: number): unknown {
  return unpack(chunk.subarray(off + HEAD, off + HEAD + chunk.readUInt32LE(off + 6)));
}
