import { describe, expect, it } from 'vitest';
import { OpenRollups, RollupSlots } from '../../src/persist/rollups.js';

describe('OpenRollups', () => {
  it('keeps one rollup per market, past its initial capacity, with an absent mid, bid, ask or notional kept absent', () => {
    const r = new OpenRollups();
    const candle = (i: number) => ({
      venue: i % 2 ? 'venue_a' : 'venue_b',
      marketId: `M${i}`,
      t: 3_600_000 * i,
      o: 4000 + i,
      h: 4100 + i,
      l: 3900 + i,
      c: 4050 + i,
      mid: i % 3 ? 4025.5 + i : undefined,
      volume: 10.25 * i,
      trades: i,
      bid: i % 4 ? 4010 + i : undefined,
      ask: i % 5 ? 4060 + i : undefined,
      notional: i % 6 ? 40_000.5 * i : undefined,
    });
    for (let i = 0; i < 3_000; i++) r.set(candle(i));
    r.set({ ...candle(7), c: 1, trades: 99 });
    expect(r.size).toBe(3_000);
    for (const i of [0, 1, 2, 1023, 1024, 2_999]) expect(r.get(candle(i).venue, `M${i}`)).toEqual(candle(i));
    expect(r.get('venue_a', 'M7')).toEqual({ ...candle(7), c: 1, trades: 99 });
    expect(r.get('venue_a', 'M0')).toBeUndefined();
    expect(r.get('venue_c', 'M1')).toBeUndefined();
  });

  it('hour and day rollups sharing one slot index: one entry per market for both, each store its own values, a slot one store took absent from the other', () => {
    const slots = new RollupSlots();
    const hour = new OpenRollups(slots);
    const day = new OpenRollups(slots);
    const candle = (i: number, t: number) => ({
      venue: `venue_${'abcde'[i % 5]!}`,
      marketId: `M${i}`,
      t,
      o: 4000 + i,
      h: 4100 + i,
      l: 3900 + i,
      c: 4050 + i,
      mid: undefined,
      volume: i,
      trades: 1,
      bid: 4010,
      ask: 4060,
      notional: undefined,
    });
    // As persistence folds a minute: the hour's rollup, then the day's, market after market (past both initial capacities).
    for (let i = 0; i < 5_000; i++) {
      hour.set(candle(i, 3_600_000));
      day.set(candle(i, 0));
    }
    expect(slots.size).toBe(5_000);
    expect([hour.size, day.size]).toEqual([5_000, 5_000]);
    for (const i of [0, 1023, 1024, 4_999]) {
      expect(hour.get(candle(i, 0).venue, `M${i}`)).toEqual(candle(i, 3_600_000));
      expect(day.get(candle(i, 0).venue, `M${i}`)).toEqual(candle(i, 0));
    }
    // A market only one store was given (past the other's capacity, then within it): the other has none.
    hour.set(candle(9_000, 7_200_000));
    expect(hour.get('venue_a', 'M9000')).toEqual(candle(9_000, 7_200_000));
    expect(day.get('venue_a', 'M9000')).toBeUndefined();
    day.set(candle(9_001, 0));
    expect(hour.get('venue_b', 'M9001')).toBeUndefined();
    expect([slots.size, hour.size, day.size]).toEqual([5_002, 5_001, 5_001]);
  });
});
