import { describe, expect, it } from 'vitest';
import { OpenRollups } from '../../src/persist/rollups.js';

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
});
