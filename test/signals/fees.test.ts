import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { takerFee } from '../../src/signals/fees.js';

const venues = Object.fromEntries(loadConfig({ env: {} }).venues.map((v) => [v.label, v]));
/** dollars → units (10_000 = $1) */
const $ = (d: number): number => Math.round(d * 10_000);
const fee = (label: string, cents: number, contracts: number, ctx = {}): number => takerFee(venues[label]!.fees, cents * 100, contracts, ctx);

describe('taker fees (spec 2.15, hand-computed)', () => {
  it('venue_a: ceil(0.07 × C × P × (1 − P)) to the cent, exact at 50 cents', () => {
    expect(fee('venue_a', 50, 100)).toBe($(1.75)); // 0.07 × 100 × 0.25 = 1.75 exactly, not rounded up to 1.76
    expect(fee('venue_a', 50, 1)).toBe($(0.02)); // 0.0175 → 0.02
    expect(fee('venue_a', 1, 1)).toBe($(0.01)); // 0.000693 → 0.01
    expect(fee('venue_a', 99, 1)).toBe($(0.01));
    expect(fee('venue_a', 1, 100)).toBe($(0.07)); // 0.0693 → 0.07
    expect(fee('venue_a', 33, 10)).toBe($(0.16)); // 0.15477 → 0.16
    expect(fee('venue_a', 0, 10)).toBe(0);
    expect(fee('venue_a', 100, 10)).toBe(0);
  });

  it('venue_g: 0.06 × P × (1 − P) per contract', () => {
    expect(fee('venue_g', 50, 100) / 10_000).toBeCloseTo(1.5, 9);
    expect(fee('venue_g', 10, 10) / 10_000).toBeCloseTo(0.054, 9);
    expect(fee('venue_g', 99, 1) / 10_000).toBeCloseTo(0.000594, 9);
  });

  it('venue_h: none pre-game, 0.03 live, 0.06 on NFL and NCAAF futures', () => {
    expect(fee('venue_h', 50, 100)).toBe(0);
    expect(fee('venue_h', 50, 100, { live: true })).toBeCloseTo($(0.75), 6);
    expect(fee('venue_h', 50, 100, { futures: true, league: 'NFL' })).toBeCloseTo($(1.5), 6);
    expect(fee('venue_h', 50, 100, { futures: true, league: 'NCAAF' })).toBeCloseTo($(1.5), 6);
    expect(fee('venue_h', 50, 100, { futures: true, league: 'NBA' })).toBe(0);
  });

  it('venue_c: 10% of the profit if the position wins; venue_b and venue_d: none', () => {
    expect(fee('venue_c', 40, 10)).toBeCloseTo($(0.6), 6);
    expect(fee('venue_b', 50, 100)).toBe(0);
    expect(fee('venue_d', 50, 100)).toBe(0);
  });
});
