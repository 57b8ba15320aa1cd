import type { MarketUpsert } from '../../core/types.js';

/**
 * `o` without the keys whose value is undefined (normalized events carry no undefined fields):
 * `o` itself when it has none, else a copy of the others in order. A copy rather than `delete`,
 * which turns an object into a hash table (dictionary mode): records the catalog keeps, such as
 * `extra`, stay compact.
 */
export function without<T extends object>(o: T): T {
  const r = o as Record<string, unknown>;
  const keys = Object.keys(r);
  let i = 0;
  while (i < keys.length && r[keys[i]!] !== undefined) i++;
  if (i === keys.length) return o;
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const v = r[k];
    if (v !== undefined) out[k] = v;
  }
  return out as T;
}

/** The first issue of a zod error as "path: message", for a one-line malformed-frame log. */
export function issue(e: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  const i = e.issues[0];
  return i ? `${i.path.map(String).join('.')}: ${i.message}` : 'invalid';
}

/**
 * What a market upsert says, without its timestamps, as a 53-bit hash: what the de-duplication of
 * upserts remembers per market, eight bytes rather than the record's JSON. Two upserts
 * that JSON.stringify would write alike hash alike; a change the hash misses is a one in 2^53
 * chance per change.
 */
export function upsertHash(m: MarketUpsert): number {
  const h = new Hash();
  for (const k in m) {
    if (k === 'timestamp' || k === 'localTimestamp') continue;
    const v = (m as unknown as Record<string, unknown>)[k];
    if (v === undefined) continue;
    h.string(k);
    h.value(v);
  }
  return h.digest();
}

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);

/** Two 32-bit FNV-1a lanes with different seeds over a value's JSON-like structure. */
class Hash {
  private a = 0x811c9dc5;
  private b = 0x01000193 ^ 0x5bd1e995;

  word(x: number): void {
    this.a = Math.imul(this.a ^ x, 0x01000193);
    this.b = Math.imul(this.b ^ x, 0x5bd1e995);
    this.b ^= this.b >>> 15;
  }

  string(s: string): void {
    this.word(0x100000 + s.length);
    for (let i = 0; i < s.length; i++) this.word(s.charCodeAt(i));
  }

  value(v: unknown): void {
    switch (typeof v) {
      case 'string':
        this.string(v);
        return;
      case 'number':
        F64[0] = v;
        this.word(0x200000);
        this.word(U32[0]!);
        this.word(U32[1]!);
        return;
      case 'boolean':
        this.word(v ? 0x300001 : 0x300000);
        return;
      case 'object':
        if (v === null) this.word(0x400000);
        else if (Array.isArray(v)) {
          this.word(0x500000 + v.length);
          for (const x of v as unknown[]) this.value(x === undefined ? null : x);
        } else {
          this.word(0x600000);
          for (const k in v) {
            const x = (v as Record<string, unknown>)[k];
            if (x === undefined) continue;
            this.string(k);
            this.value(x);
          }
          this.word(0x600001);
        }
        return;
      default:
        this.word(0x700000); // functions, symbols, bigints: not in normalized events
    }
  }

  /** 53 bits: all of lane a and the top 21 of lane b. */
  digest(): number {
    return (this.a >>> 0) * 0x200000 + ((this.b >>> 11) & 0x1fffff);
  }
}
