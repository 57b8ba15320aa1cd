import { describe, expect, it } from 'vitest';
import { CandleStore, MINUTE, type Candle } from '../../src/state/candles.js';

const T = Date.UTC(2026, 10, 24, 12, 0); // a whole minute

function store(): { candles: CandleStore; closed: Candle[] } {
  const candles = new CandleStore();
  const closed: Candle[] = [];
  candles.closed$.subscribe((c) => closed.push({ ...c }));
  return { candles, closed };
}

describe('CandleStore flush (the once-a-second close of one-minute buckets)', () => {
  it('closes a bucket when the clock reaches its end, not before, and only once', () => {
    const { candles, closed } = store();
    candles.observe('venue_a', 'M', 4000, 4100, 5, T + 1_000, 4000, 4200, 4000 * 5);
    candles.observe('venue_a', 'M', 4300, undefined, 0, T + 30_000, 4300, undefined);
    candles.flush(T + MINUTE - 1);
    expect(closed).toEqual([]);
    candles.flush(T + MINUTE);
    // bid and ask as at the last observation (the ask side had emptied); notional: the trade's price × size
    expect(closed).toEqual([
      {
        venue: 'venue_a',
        marketId: 'M',
        t: T,
        o: 4000,
        h: 4300,
        l: 4000,
        c: 4300,
        mid: 4300,
        volume: 5,
        trades: 1,
        bid: 4300,
        ask: undefined,
        notional: 20_000,
      },
    ]);
    expect(closed[0]).toHaveProperty('ask', undefined);
    candles.flush(T + 2 * MINUTE);
    expect(closed).toHaveLength(1);
    expect(candles.current('venue_a', 'M')).toBeUndefined();
  });

  it('closes each market on its own minute and everything at shutdown; an observation older than the open bucket is dropped', () => {
    const { candles, closed } = store();
    candles.observe('venue_a', 'A', 4000, undefined, 0, T + 59_000);
    candles.observe('venue_a', 'B', 5000, undefined, 0, T + MINUTE);
    candles.observe('venue_a', 'B', 5100, undefined, 0, T + 10_000); // late: B's open bucket is the next minute
    candles.flush(T + MINUTE);
    expect(closed.map((c) => c.marketId)).toEqual(['A']);
    expect(candles.current('venue_a', 'B')).toMatchObject({ t: T + MINUTE, o: 5000, c: 5000 });
    candles.flush(T + MINUTE + 1, true);
    expect(closed.map((c) => [c.marketId, c.t])).toEqual([
      ['A', T],
      ['B', T + MINUTE],
    ]);
  });
});
