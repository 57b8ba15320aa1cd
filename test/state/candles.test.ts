import { describe, expect, it } from 'vitest';
import { CandleStore, MINUTE, type Candle, type HeldCandle } from '../../src/state/candles.js';

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

  it('skips the walk only while no open bucket can have ended: a bucket opened for an older minute, and what a partial close leaves', () => {
    const { candles, closed } = store();
    candles.observe('venue_a', 'B', 5000, undefined, 0, T + MINUTE + 5_000);
    // Opened after B, for the minute before B's (a market whose first frame is late): the flush at
    // that minute's end must see it, though the newest open bucket has not ended.
    candles.observe('venue_b', 'A', 4000, undefined, 0, T + 30_000);
    candles.flush(T + MINUTE - 1);
    expect(closed).toEqual([]);
    candles.flush(T + MINUTE);
    expect(closed.map((c) => [c.marketId, c.t])).toEqual([['A', T]]);
    // What the partial close left (B, a minute later) closes at its own end, not before.
    candles.flush(T + 2 * MINUTE - 1);
    expect(closed).toHaveLength(1);
    candles.observe('venue_a', 'C', 6000, undefined, 0, T + 2 * MINUTE + 1_000);
    candles.flush(T + 2 * MINUTE);
    expect(closed.map((c) => [c.marketId, c.t])).toEqual([
      ['A', T],
      ['B', T + MINUTE],
    ]);
    candles.flush(T + 3 * MINUTE);
    expect(closed.map((c) => c.marketId)).toEqual(['A', 'B', 'C']);
  });
});

describe('CandleStore observe through a held slot (a state book keeps its market open candle)', () => {
  it('builds and closes the same candles as looking each market up, across minutes, flushes and late observations', () => {
    const held = store();
    const looked = store();
    // One slot per market and one shared by two markets, as a YES and a NO book of one market, or a stale one, may be.
    const slots = new Map<string, HeldCandle>();
    const shared: HeldCandle = { candleSlot: -1, candleOf: undefined, candleEpoch: 0 };
    let x = 0.61;
    const next = (): number => (x = (x * 7919 + 0.137) % 1);
    let ts = T;
    for (let k = 0; k < 5_000; k++) {
      const r = next();
      if (r < 0.01) {
        held.candles.flush(ts);
        looked.candles.flush(ts);
        continue;
      }
      // Mostly forward in time (minutes go by), now and then a late observation of an earlier minute.
      ts += r < 0.05 ? -Math.floor(next() * 2 * MINUTE) : Math.floor(next() * 8_000);
      const m = `M${Math.floor(next() * 6)}`;
      const venue = next() < 0.8 ? 'venue_a' : 'venue_b';
      let slot = slots.get(m);
      if (slot === undefined) slots.set(m, (slot = { candleSlot: -1, candleOf: undefined, candleEpoch: 0 }));
      const price = 1000 + Math.floor(next() * 8000);
      const volume = next() < 0.2 ? 1 + Math.floor(next() * 10) : 0;
      const args = [venue, m, price, price + 50, volume, ts, price - 100, price + 100, price * volume] as const;
      held.candles.observe(...args, m === 'M5' ? shared : slot);
      looked.candles.observe(...args);
    }
    held.candles.flush(ts, true);
    looked.candles.flush(ts, true);
    expect(held.closed.length).toBeGreaterThan(100);
    expect(held.closed).toEqual(looked.closed);
  });
});

describe('CandleStore open candles packed in slots (issue 34: no object per open candle)', () => {
  it('hands out values: a candle read with current() or openCandles() does not change with later observations', () => {
    const { candles } = store();
    candles.observe('venue_a', 'M', 4000, undefined, 0, T + 1_000);
    const read = candles.current('venue_a', 'M')!;
    const listed = [...candles.openCandles()][0]!;
    candles.observe('venue_a', 'M', 4500, 4400, 2, T + 2_000, 4300, 4600, 9000);
    expect(read).toMatchObject({ h: 4000, c: 4000, volume: 0, trades: 0 });
    expect(listed).toMatchObject({ h: 4000, c: 4000, volume: 0, trades: 0 });
    expect(candles.current('venue_a', 'M')).toMatchObject({ h: 4500, c: 4500, mid: 4400, volume: 2, trades: 1, bid: 4300, ask: 4600, notional: 9000 });
  });

  it("a held slot that a flush freed and another market took is not written through: the holder's market opens a candle of its own", () => {
    const { candles, closed } = store();
    const heldA: HeldCandle = { candleSlot: -1, candleOf: undefined, candleEpoch: 0 };
    candles.observe('venue_a', 'A', 4000, undefined, 0, T + 1_000, undefined, undefined, 0, heldA);
    candles.flush(T + MINUTE); // A closes; its slot is free
    candles.observe('venue_a', 'B', 7000, undefined, 0, T + MINUTE + 1_000); // B takes it
    candles.observe('venue_a', 'A', 4100, undefined, 3, T + MINUTE + 2_000, undefined, undefined, 12_300, heldA);
    expect(candles.current('venue_a', 'B')).toMatchObject({ marketId: 'B', o: 7000, h: 7000, l: 7000, c: 7000, volume: 0 });
    expect(candles.current('venue_a', 'A')).toMatchObject({ marketId: 'A', t: T + MINUTE, o: 4100, c: 4100, volume: 3, trades: 1, notional: 12_300 });
    candles.flush(T + 2 * MINUTE);
    expect(closed.map((c) => [c.marketId, c.t, c.o])).toEqual([
      ['A', T, 4000],
      ['B', T + MINUTE, 7000],
      ['A', T + MINUTE, 4100],
    ]);
  });

  it('closes the same candles as one object per open candle did, across many markets, rolled buckets, flushes and reused slots', () => {
    // The representation before this change (a mutable object per open candle, the fields as observed), as the reference.
    const ref = new Map<string, Candle>();
    const refClosed: Candle[] = [];
    const refObserve = (
      venue: string,
      marketId: string,
      price: number,
      mid: number | undefined,
      volume: number,
      ts: number,
      bid?: number,
      ask?: number,
      notional = 0,
    ): void => {
      const t = ts - (ts % MINUTE);
      const k = `${venue}:${marketId}`;
      let c = ref.get(k);
      if (c && c.t !== t) {
        if (t < c.t) return;
        refClosed.push({ ...c });
        c = undefined;
      }
      if (!c) ref.set(k, (c = { venue, marketId, t, o: price, h: price, l: price, c: price, mid: mid ?? price, volume: 0, trades: 0, bid, ask, notional: 0 }));
      else {
        if (price > c.h) c.h = price;
        if (price < c.l) c.l = price;
        c.c = price;
        c.mid = mid ?? price;
        c.bid = bid;
        c.ask = ask;
      }
      if (volume > 0) {
        c.volume += volume;
        c.trades++;
        c.notional = (c.notional ?? 0) + notional;
      }
    };
    const refFlush = (now: number, all = false): void => {
      for (const [k, c] of ref)
        if (all || c.t + MINUTE <= now) {
          ref.delete(k);
          refClosed.push({ ...c });
        }
    };
    const { candles, closed } = store();
    const slots = new Map<string, HeldCandle>();
    let x = 0.37;
    const next = (): number => (x = (x * 7919 + 0.291) % 1);
    let ts = T;
    for (let k = 0; k < 20_000; k++) {
      const r = next();
      if (r < 0.005) {
        candles.flush(ts);
        refFlush(ts);
        continue;
      }
      ts += r < 0.03 ? -Math.floor(next() * MINUTE) : Math.floor(next() * 3_000);
      const m = `M${Math.floor(next() * 40)}`;
      const venue = next() < 0.7 ? 'venue_a' : 'venue_b';
      let slot = slots.get(m);
      if (slot === undefined) slots.set(m, (slot = { candleSlot: -1, candleOf: undefined, candleEpoch: 0 }));
      const price = 100 + Math.floor(next() * 9800);
      const volume = next() < 0.3 ? next() * 25 : 0; // fractional sizes: sums must match to the bit
      const mid = next() < 0.1 ? undefined : price + 0.5;
      const bid = next() < 0.1 ? undefined : price - 100;
      const ask = next() < 0.1 ? undefined : price + 100;
      candles.observe(venue, m, price, mid, volume, ts, bid, ask, price * volume, slot);
      refObserve(venue, m, price, mid, volume, ts, bid, ask, price * volume);
      if (k % 997 === 0)
        expect([...candles.openCandles()].sort((a, b) => (a.venue + a.marketId < b.venue + b.marketId ? -1 : 1))).toEqual(
          [...ref.values()].sort((a, b) => (a.venue + a.marketId < b.venue + b.marketId ? -1 : 1)),
        );
    }
    candles.flush(ts, true);
    refFlush(ts, true);
    expect(closed.length).toBeGreaterThan(1_000);
    // Order within a flush follows the maps' order, which differs: compared per market, in closing order.
    const perMarket = (cs: Candle[]): Map<string, Candle[]> => {
      const out = new Map<string, Candle[]>();
      for (const c of cs) out.set(`${c.venue}:${c.marketId}`, [...(out.get(`${c.venue}:${c.marketId}`) ?? []), c]);
      return out;
    };
    const got = perMarket(closed);
    const want = perMarket(refClosed);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [k, cs] of want) expect(got.get(k)).toStrictEqual(cs);
  });
});
