import { describe, expect, it } from 'vitest';
import { PAYOUT } from '../../src/core/price.js';
import { PriceRings, RING_MINUTES } from '../../src/signals/price-rings.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 2, 10, 12);

describe('PriceRings (the wallet ledger slab of per-market minute lows and highs)', () => {
  it("keeps each minute's low and high, reads a window, and mirrors the YES high for NO", () => {
    const r = new PriceRings();
    r.observe('b:m1', 4000, T0);
    r.observe('b:m1', 3500, T0 + 10_000);
    r.observe('b:m1', 4700, T0 + 20_000);
    r.observe('b:m1', 5200, T0 + 5 * MIN);
    r.observe('b:m2', 100, T0 + 5 * MIN);
    expect(r.size).toBe(2);
    expect(r.windowLow('b:m1', 'yes', T0 + 5 * MIN, 30 * MIN)).toBe(3500);
    expect(r.windowLow('b:m1', 'yes', T0 + 5 * MIN, 2 * MIN)).toBe(5200);
    // The NO low is the mirror of the highest YES price in the window.
    expect(r.windowLow('b:m1', 'no', T0 + 5 * MIN, 30 * MIN)).toBe(PAYOUT - 5200);
    expect(r.windowLow('b:m2', 'yes', T0 + 5 * MIN, 30 * MIN)).toBe(100);
    expect(r.windowLow('b:none', 'yes', T0, 30 * MIN)).toBeUndefined();
  });

  it('ignores a price older than the minute its cell holds now', () => {
    const r = new PriceRings();
    r.observe('b:m1', 4000, T0 + RING_MINUTES * MIN);
    // Same cell (64 minutes earlier), older minute: dropped, the newer minute stays.
    r.observe('b:m1', 100, T0);
    expect(r.windowLow('b:m1', 'yes', T0 + RING_MINUTES * MIN, 30 * MIN)).toBe(4000);
  });

  it('frees the rings of markets with no trade in the ring, and a reused slot starts empty', () => {
    const r = new PriceRings();
    // More markets than a chunk holds, so the slab grows past its first chunk.
    for (let i = 0; i < 1500; i++) r.observe(`b:m${i}`, 1000 + i, T0);
    r.observe('b:late', 9000, T0 + 30 * MIN);
    expect(r.size).toBe(1501);
    r.prune(T0 + RING_MINUTES * MIN);
    expect(r.size).toBe(1);
    expect(r.windowLow('b:m7', 'yes', T0 + 10 * MIN, 30 * MIN)).toBeUndefined();
    expect(r.windowLow('b:late', 'yes', T0 + 40 * MIN, 30 * MIN)).toBe(9000);
    // New markets take freed slots: none of the old markets' minutes shows through.
    r.observe('b:new', 7000, T0 + 70 * MIN);
    expect(r.windowLow('b:new', 'yes', T0 + 70 * MIN, 63 * MIN)).toBe(7000);
    expect(r.windowLow('b:new', 'no', T0 + 70 * MIN, 63 * MIN)).toBe(PAYOUT - 7000);
    expect(r.windowLow('b:new', 'yes', T0 + 10 * MIN, 10 * MIN)).toBeUndefined();
  });
});
