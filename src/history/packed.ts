import { pack, unpack } from 'msgpackr';

/** Bytes a chunk of the log holds (a record larger than that gets a chunk of its own). */
const CHUNK = 1 << 20;
/** A record's head: the address of the record it links back to (48-bit signed, -1 for none) and its length (u32). */
const HEAD = 10;

/**
 * Values kept as msgpack bytes in 1 MiB chunks instead of as JS objects: the history index's open
 * slice (every event of up to `HISTORY_LIMITS.sliceEvents`, and each market's state as the slice
 * began) held as objects cost hundreds of bytes per event and a copied book of level pairs per
 * market in the V8 heap; packed they cost their msgpack bytes. A value is packed with msgpackr's
 * `pack`, as the slice file packs it (`slice.ts`), so reading one back gives what the same value
 * written to the slice file and read from it gives. Each record links back to an earlier one (its
 * market's event before it), so a market's events are a chain read from its last address without a
 * list per market.
 */
export class PackedLog {
  private readonly chunks: Buffer[] = [];
  private pos = CHUNK;
  private total = 0;

  /** Packs `value` and appends it, linked back to the record at `prev` (-1: none). Returns its address. */
  add(value: unknown, prev: number): number {
    const bytes = pack(value);
    const need = HEAD + bytes.length;
    let chunk = this.chunks[this.chunks.length - 1];
    if (chunk === undefined || this.pos + need > chunk.length) {
      chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK, need));
      this.chunks.push(chunk);
      this.pos = 0;
    }
    const at = (this.chunks.length - 1) * CHUNK + this.pos;
    chunk.writeIntLE(prev, this.pos, 6);
    chunk.writeUInt32LE(bytes.length, this.pos + 6);
    bytes.copy(chunk, this.pos + HEAD);
    this.pos += need;
    this.total += need;
    return at;
  }

  /** The value at `at` (an address `add` returned). */
  read(at: number): unknown {
    const [chunk, off] = this.locate(at);
    return valueAt(chunk, off);
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

  /** Bytes appended (records and their heads). */
  get bytes(): number {
    return this.total;
  }

  private locate(at: number): [Buffer, number] {
    const chunk = this.chunks[Math.floor(at / CHUNK)];
    if (chunk === undefined) throw new RangeError(`no packed record at ${at}`);
    return [chunk, at % CHUNK];
  }
}

/** The value of the record at `off` in `chunk`: its packed bytes, after its head. */
function valueAt(chunk: Buffer, off: number): unknown {
  return unpack(chunk.subarray(off + HEAD, off + HEAD + chunk.readUInt32LE(off + 6)));
}
