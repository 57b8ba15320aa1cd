import { uncompress } from 'lz4-napi';

/**
 * LZ4 for the normalized cache's blocks (src/capture/normblock.ts): blocks are compressed here, in
 * JavaScript, into memory V8 and glibc own, and decompressed by lz4-napi (lz4_flex) on libuv's pool.
 *
 * Why not lz4-napi's `compress`: the addon allocates with mimalloc (its own 1 GiB arena beside
 * glibc's). Each block's output was a 1.1 MiB allocation made on a pool thread and freed on the
 * history thread when its Buffer was collected; mimalloc keeps freed pages for the thread that owns
 * them and purges them only when that thread allocates again after a delay, so at 108k markets the
 * arena held 30–58 MiB of RSS that no heap figure shows (issue 34, BENCHMARKS.md `mem16`). Purging
 * at once (`MIMALLOC_PURGE_DELAY=0`) kept 7 MiB but made every /replay decompression 4–5× slower
 * (the pages faulted in again), so the reads keep the addon and only the writer leaves it.
 *
 * The format is lz4_flex's `compress_prepend_size`: the input's length (u32 LE), then one LZ4 block
 * (sequences of a token, literals, a 2-byte offset and a match; the last 5 bytes literals, no match
 * starting within the last 12 bytes), so `lz4Uncompress` reads it and blocks written before read the same.
 */

/** Decompresses a `lz4CompressSync` output (or lz4-napi's `compress`), on libuv's pool. */
export const lz4Uncompress = uncompress;

const MIN_MATCH = 4;
const LAST_LITERALS = 5;
const MF_LIMIT = 12;
const MAX_OFFSET = 65535;
const HASH_LOG = 16;

/** Bytes an input of `n` bytes can take compressed, with the 4-byte length (LZ4_compressBound plus it). */
function bound(n: number): number {
  return 4 + n + Math.floor(n / 255) + 16;
}

// Per thread: the hash table of positions and the output written before it is copied out (the
// copy is the only allocation per block: a fresh Buffer of the compressed size).
const table = new Int32Array(1 << HASH_LOG);
let scratch = Buffer.alloc(0);

const read32 = (b: Uint8Array, i: number): number => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);

/** Writes an LZ4 length's extra bytes (for a length past what its 4-bit field holds). */
function writeLength(dst: Uint8Array, op: number, n: number): number {
  let l = n - 15;
  while (l >= 255) {
    dst[op++] = 255;
    l -= 255;
  }
  dst[op++] = l;
  return op;
}

/** Writes a token (its match length 0, set after), the literals `src[from, to)` and their length; returns the end. */
function writeLiterals(src: Uint8Array, from: number, to: number, dst: Uint8Array, op: number): number {
  const n = to - from;
  dst[op++] = (n < 15 ? n : 15) << 4;
  if (n >= 15) op = writeLength(dst, op, n);
  if (n > 0) dst.set(src.subarray(from, to), op);
  return op + n;
}

/**
 * `src` compressed as lz4_flex's `compress_prepend_size` lays it out (the greedy single-probe
 * search of LZ4's fast mode; lz4_flex and the reference encoder pick matches the same way, so the
 * ratio is theirs within a few percent). Synchronous, on the calling thread.
 */
export function lz4CompressSync(src: Uint8Array): Buffer {
  const n = src.length;
  if (scratch.length < bound(n)) scratch = Buffer.allocUnsafe(bound(n));
  const dst = scratch;
  dst.writeUInt32LE(n, 0);
  let op = 4;
  let anchor = 0;
  if (n > MF_LIMIT) {
    table.fill(-1);
    const lastStart = n - MF_LIMIT;
    const matchEnd = n - LAST_LITERALS;
    let ip = 0;
    let misses = 0;
    while (ip <= lastStart) {
      const seq = read32(src, ip);
      const h = Math.imul(seq, 2654435761) >>> (32 - HASH_LOG);
      const ref = table[h]!;
      table[h] = ip;
      if (ref < 0 || ip - ref > MAX_OFFSET || read32(src, ref) !== seq) {
        // LZ4's acceleration: the longer nothing matched, the further each probe skips.
        ip += 1 + (misses++ >> 6);
        continue;
      }
      misses = 0;
      let s = ip;
      let r = ref;
      while (s > anchor && r > 0 && src[s - 1] === src[r - 1]) {
        s--;
        r--;
      }
      let end = ip + MIN_MATCH;
      while (end < matchEnd && src[end] === src[end - ip + ref]) end++;
      const token = op;
      op = writeLiterals(src, anchor, s, dst, op);
      const offset = s - r;
      dst[op++] = offset & 0xff;
      dst[op++] = offset >>> 8;
      const ml = end - s - MIN_MATCH;
      dst[token] = dst[token]! | (ml < 15 ? ml : 15);
      if (ml >= 15) op = writeLength(dst, op, ml);
      anchor = ip = end;
      // The position two before the match's end, as LZ4 does: a match that repeats is found at once.
      if (ip - 2 <= lastStart && ip - 2 >= 0) table[Math.imul(read32(src, ip - 2), 2654435761) >>> (32 - HASH_LOG)] = ip - 2;
    }
  }
  op = writeLiterals(src, anchor, n, dst, op);
  return Buffer.from(dst.subarray(0, op));
}
