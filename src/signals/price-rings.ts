import { PAYOUT } from '../core/price.js';

const MINUTE = 60_000;
/** Minutes of YES price kept per market (a power of two ≥ the longest window read). */
export const RING_MINUTES = 64;
const LOW = RING_MINUTES;
const HIGH = 2 * RING_MINUTES;
const NEWEST = 3 * RING_MINUTES;
/** Int32 cells of a market's ring: its minutes, lows, highs, then the newest minute seen. */
const SLOT = NEWEST + 1;
/** Rings per chunk of the slab (772 KiB a chunk). */
const CHUNK_SLOTS = 1024;

/**
 * Per-market minute lows and highs of the YES price over the last `RING_MINUTES` minutes (the
 * captain_hook alert's window low), for every market traded within them. All rings live in a
 * slab of Int32Array chunks, a market holding a slot of `SLOT` cells: minute numbers, lows and
 * highs (integer units, as every price here), and the newest minute. A ring of its own per market
 * (a Float64Array) cost its 1,544-byte backing store allocated with malloc, the typed array and
 * ArrayBuffer objects and the allocator's header, about 2 KB a market; at 108k markets traded
 * within the hour that was ~200 MiB of process memory. A slot is 772 bytes, reused once freed.
 */
export class PriceRings {
  /** market key → its slot. */
  private readonly slots = new Map<string, number>();
  private readonly chunks: Int32Array[] = [];
  private readonly free: number[] = [];
  private used = 0;

  /** Markets holding a ring. */
  get size(): number {
    return this.slots.size;
  }

  /** Records a trade's YES price `yes` (units) at `ts` in market `mk`'s ring. */
  observe(mk: string, yes: number, ts: number): void {
    let s = this.slots.get(mk);
    if (s === undefined) this.slots.set(mk, (s = this.take()));
    const r = this.chunks[(s / CHUNK_SLOTS) | 0]!;
    const at = (s % CHUNK_SLOTS) * SLOT;
    const minute = Math.floor(ts / MINUTE);
    const i = at + (minute & (RING_MINUTES - 1));
    if (r[i] !== minute) {
      if (r[i]! > minute) return; // older than the ring
      r[i] = minute;
      r[LOW + i] = yes;
      r[HIGH + i] = yes;
      if (minute > r[at + NEWEST]!) r[at + NEWEST] = minute;
    } else {
      if (yes < r[LOW + i]!) r[LOW + i] = yes;
      if (yes > r[HIGH + i]!) r[HIGH + i] = yes;
    }
  }

  /**
   * The lowest price of `outcome` in market `mk`'s trades within `windowMs` before `now` (at most
   * `RING_MINUTES` minutes), units; undefined when none. A NO price is the mirror of the YES high.
   */
  windowLow(mk: string, outcome: 'yes' | 'no', now: number, windowMs: number): number | undefined {
    const s = this.slots.get(mk);
    if (s === undefined) return undefined;
    const r = this.chunks[(s / CHUNK_SLOTS) | 0]!;
    const at = (s % CHUNK_SLOTS) * SLOT;
    const to = Math.floor(now / MINUTE);
    const from = to - Math.min(RING_MINUTES - 1, Math.ceil(windowMs / MINUTE));
    let out: number | undefined;
    for (let i = at; i < at + RING_MINUTES; i++) {
      const m = r[i]!;
      if (m < from || m > to) continue;
      const v = outcome === 'yes' ? r[LOW + i]! : PAYOUT - r[HIGH + i]!;
      if (out === undefined || v < out) out = v;
    }
    return out;
  }

  /** Frees the rings of markets with no trade in the `RING_MINUTES` minutes up to `now` (no window reads them). */
  prune(now: number): void {
    const oldest = Math.floor(now / MINUTE) - (RING_MINUTES - 1);
    for (const [mk, s] of this.slots) {
      if (this.chunks[(s / CHUNK_SLOTS) | 0]![(s % CHUNK_SLOTS) * SLOT + NEWEST]! >= oldest) continue;
      this.slots.delete(mk);
      this.free.push(s);
    }
  }

  /** A cleared slot: a freed one, else the next of the slab (a new chunk when the last is full). */
  private take(): number {
    const s = this.free.pop() ?? this.used++;
    const c = (s / CHUNK_SLOTS) | 0;
    if (c === this.chunks.length) this.chunks.push(new Int32Array(CHUNK_SLOTS * SLOT));
    const at = (s % CHUNK_SLOTS) * SLOT;
    // Minutes -1: no minute seen (lows and highs are read only beside a minute).
    this.chunks[c]!.fill(-1, at, at + RING_MINUTES).fill(-1, at + NEWEST, at + SLOT);
    return s;
  }
}
