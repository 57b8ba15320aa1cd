import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { noSide } from '../../src/state/quotes.js';

const venues = loadConfig({ env: {} }).venues;
const base = { venue: 'venue_a', timestamp: 1, localTimestamp: 60_000 };

function apply(s: EngineState, evs: NormalizedEvent[]): void {
  for (const e of evs) applyEvent(s, e);
}

describe('EngineState.applyEvent', () => {
  it('derives the quote from the book: YES ask = 100 − best NO bid (spec 2.1)', () => {
    const s = new EngineState(venues);
    apply(s, [
      { ...base, type: 'market', marketId: 'M', title: 'M?', status: 'active' },
      { ...base, type: 'book_snapshot', marketId: 'M', instrument: 'M', bids: [[4000, 10]], asks: [[4600, 5]] },
    ]);
    const q = s.quotes.get('venue_a', 'M')!;
    expect([q.yesBid, q.yesAsk]).toEqual([4000, 4600]);
    expect(noSide(q)).toEqual({ noBid: 5400, noAsk: 6000 });
    apply(s, [{ ...base, type: 'book_delta', marketId: 'M', instrument: 'M', changes: [['ask', 4600, 0]] }]);
    expect(s.quotes.get('venue_a', 'M')!.yesAsk).toBeUndefined();
  });

  it("moves the store's quote record after a restore replaced the one a book moved before", () => {
    const s = new EngineState(venues);
    apply(s, [
      { ...base, type: 'market', marketId: 'M', title: 'M?', status: 'active' },
      { ...base, type: 'book_snapshot', marketId: 'M', instrument: 'M', bids: [[4000, 10]], asks: [[4600, 5]] },
    ]);
    const before = s.quotes.get('venue_a', 'M')!;
    s.quotes.restore({ venue: 'venue_a', marketId: 'M', yesBid: 1000, yesAsk: 9000, fromBook: false, updatedAt: 1, version: 0 });
    apply(s, [{ ...base, type: 'book_delta', marketId: 'M', instrument: 'M', changes: [['bid', 4100, 1]] }]);
    const q = s.quotes.get('venue_a', 'M')!;
    expect(q).not.toBe(before);
    expect([q.yesBid, q.yesAsk, q.fromBook]).toEqual([4100, 4600, true]);
    expect(before.yesBid).toBe(4000);
  });

  it('builds a market YES book from a NO-token book by complement', () => {
    const s = new EngineState(venues);
    const b = { ...base, venue: 'venue_b' };
    apply(s, [
      { ...b, type: 'market', marketId: 'C', title: 'C?', status: 'active', yesInstrument: 'Y', noInstrument: 'N' },
      { ...b, type: 'book_snapshot', marketId: 'C', instrument: 'N', bids: [[3000, 7]], asks: [[3500, 2]] },
    ]);
    expect(s.books.marketBook('venue_b', 'C')).toMatchObject({ bids: [[6500, 2]], asks: [[7000, 7]], ready: true });
    // the market's candle keeps the YES bid and ask, complemented from the NO token's book too
    expect(s.candles.current('venue_b', 'C')).toMatchObject({ bid: 6500, ask: 7000, mid: 6750 });
  });

  it('a NO-token book that arrived before its market names it is read by complement from then on', () => {
    const s = new EngineState(venues);
    const b = { ...base, venue: 'venue_b' };
    apply(s, [{ ...b, type: 'book_snapshot', marketId: 'C', instrument: 'N', bids: [[3000, 7]], asks: [[3500, 2]] }]);
    apply(s, [
      { ...b, type: 'market', marketId: 'C', title: 'C?', status: 'active', yesInstrument: 'Y', noInstrument: 'N' },
      { ...b, type: 'book_delta', marketId: 'C', instrument: 'N', changes: [['bid', 3100, 4]] },
    ]);
    expect(s.books.roleOf('venue_b', 'N')).toBe('no');
    const q = s.quotes.get('venue_b', 'C')!;
    expect([q.yesBid, q.yesBidSize, q.yesAsk, q.yesAskSize]).toEqual([6500, 2, 6900, 4]);
  });

  it('drops deltas before a snapshot and resets books on a gap or disconnect', () => {
    const s = new EngineState(venues);
    apply(s, [{ ...base, type: 'book_delta', marketId: 'M', instrument: 'M', changes: [['bid', 4000, 1]] }]);
    expect(s.books.marketBook('venue_a', 'M')).toBeUndefined();
    apply(s, [
      { ...base, type: 'book_snapshot', marketId: 'M', instrument: 'M', bids: [[4000, 10]], asks: [] },
      { ...base, type: 'feed', state: 'gap', instrument: 'M' },
    ]);
    expect(s.books.marketBook('venue_a', 'M')!.ready).toBe(false);
    apply(s, [
      { ...base, type: 'book_snapshot', marketId: 'M', instrument: 'M', bids: [[4000, 10]], asks: [] },
      { ...base, type: 'feed', state: 'disconnected' },
    ]);
    expect(s.books.marketBook('venue_a', 'M')!.ready).toBe(false);
    expect(s.health.get('venue_a')!.disconnects).toBe(1);
  });

  it('an invalid delta resets the book instead of corrupting it', () => {
    const s = new EngineState(venues);
    apply(s, [
      { ...base, type: 'book_snapshot', marketId: 'M', instrument: 'M', bids: [[4000, 10]], asks: [[4500, 1]] },
      {
        ...base,
        type: 'book_delta',
        marketId: 'M',
        instrument: 'M',
        changes: [
          ['bid', 4100, 1],
          ['ask', 20_000, 1],
        ],
      },
    ]);
    expect(s.books.integrityErrors).toBe(1);
    expect(s.books.marketBook('venue_a', 'M')!.ready).toBe(false);
    expect(s.quotes.get('venue_a', 'M')!.yesBid).toBeUndefined();
  });

  it('merges sparse upserts and keeps first_seen', () => {
    const s = new EngineState(venues);
    apply(s, [{ ...base, type: 'market', marketId: 'M', title: 'T', status: 'active', closeTime: 5, category: 'Sports' }]);
    apply(s, [{ ...base, localTimestamp: 90_000, type: 'market', marketId: 'M', title: 'T2', status: 'closed' }]);
    const m = s.catalog.get('venue_a', 'M')!;
    expect(m).toMatchObject({ title: 'T2', status: 'closed', closeTime: 5, category: 'Sports', firstSeenAt: 60_000 });
    expect(s.catalog.setStatus({ ...base, type: 'market_status', marketId: 'nope', status: 'finalized' })).toBe(false);
  });

  it('builds one-minute candles with per-bucket volume and dedupes trades', () => {
    const s = new EngineState(venues);
    const closed: unknown[] = [];
    s.candles.closed$.subscribe((c) => closed.push(c));
    const t = (id: string, p: number, size: number, at: number): NormalizedEvent => ({
      ...base,
      localTimestamp: at,
      type: 'trade',
      marketId: 'M',
      tradeId: id,
      price: p,
      yesPrice: p,
      size,
    });
    apply(s, [t('1', 4000, 5, 60_000), t('2', 4200, 3, 61_000), t('2', 4200, 3, 61_000), t('3', 3900, 1, 119_999), t('4', 4100, 2, 120_000)]);
    // notional: each trade's own price × size (dollar volume); no book, so no bid or ask
    expect(closed).toEqual([
      { venue: 'venue_a', marketId: 'M', t: 60_000, o: 4000, h: 4200, l: 3900, c: 3900, mid: 3900, volume: 9, trades: 3, notional: 4000 * 5 + 4200 * 3 + 3900 },
    ]);
    expect(s.trades.size).toBe(4);
    expect(s.candles.current('venue_a', 'M')).toMatchObject({ t: 120_000, volume: 2 });
  });
});
