import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { VenueConfig } from '../../../src/config/schema.js';
import type { MarketUpsert } from '../../../src/core/types.js';
import { FeedStats } from '../../../src/venues/common/stats.js';
import { ExchangeMapper } from '../../../src/venues/exchange/mappers.js';
import { exchangeBookSchema, exchangeEventsSchema } from '../../../src/venues/exchange/raw.js';

/*
 * No public protocol exists for these venues: crossbook defines its own ("crossbook exchange
 * protocol v1", documented in src/venues/exchange/raw.ts). Every frame below was written by hand
 * to follow that design; none is a venue capture.
 */

const venues = loadConfig({ env: {} }).venues;
const venueE: VenueConfig = venues.find((v) => v.label === 'venue_e')!; // two-sided
const venueF: VenueConfig = venues.find((v) => v.label === 'venue_f')!; // yes-only
const venueH: VenueConfig = venues.find((v) => v.label === 'venue_h')!; // yes-only, ids prefixed
const mapper = (v: VenueConfig): ExchangeMapper => new ExchangeMapper(v, new FeedStats());
const L = 1_764_000_000_500;
const TS = 1_764_000_000_000;
const START = '2026-11-22T18:00:00.000Z';

const catalog = (state: 'scheduled' | 'live' | 'final' = 'scheduled'): Record<string, unknown> => ({
  events: [
    {
      id: 'EV-E00001',
      name: 'New England Patriots @ Seattle Seahawks',
      sport: 'football',
      league: 'NFL',
      category: 'Sports',
      start_time: START,
      state,
      futures: false,
      markets: [
        {
          id: '123456789',
          market_id: '900000001',
          name: 'Seattle Seahawks',
          market_name: 'Moneyline',
          outcome: 'Seattle Seahawks',
          status: 'open',
          open_time: '2026-10-23T00:00:00.000Z',
          close_time: '2026-11-22T22:00:00.000Z',
          result: null,
          books: ['yes'],
          tags: ['Sports', 'NFL'],
        },
        {
          id: '223456789',
          name: 'Over 44.5',
          market_name: 'Total',
          outcome: 'Over',
          status: 'pending',
          open_time: '2026-10-23T00:00:00.000Z',
          close_time: null,
          result: null,
          books: ['yes'],
        },
      ],
    },
  ],
  ts: TS,
});

const extra = (eventState: string, marketName: string): Record<string, unknown> => ({
  live: eventState === 'live',
  league: 'NFL',
  futures: false,
  sport: 'football',
  eventState,
  marketName,
  ...(marketName === 'Moneyline' ? { venueMarketId: '900000001' } : {}),
  startTime: Date.parse(START),
});

const SEAHAWKS_H = {
  type: 'market',
  venue: 'venue_h',
  timestamp: TS,
  localTimestamp: L,
  marketId: 'venue_h_123456789',
  title: 'Seattle Seahawks',
  eventTitle: 'New England Patriots @ Seattle Seahawks',
  eventId: 'EV-E00001',
  outcome: 'Seattle Seahawks',
  category: 'Sports',
  tags: ['Sports', 'NFL'],
  status: 'active',
  openTime: Date.parse('2026-10-23T00:00:00.000Z'),
  closeTime: Date.parse('2026-11-22T22:00:00.000Z'),
  yesInstrument: '123456789',
  extra: extra('scheduled', 'Moneyline'),
};
const OVER_H = {
  type: 'market',
  venue: 'venue_h',
  timestamp: TS,
  localTimestamp: L,
  marketId: 'venue_h_223456789',
  title: 'Over 44.5',
  eventTitle: 'New England Patriots @ Seattle Seahawks',
  eventId: 'EV-E00001',
  outcome: 'Over',
  category: 'Sports',
  status: 'initialized',
  openTime: Date.parse('2026-10-23T00:00:00.000Z'),
  yesInstrument: '223456789',
  extra: extra('scheduled', 'Total'),
};

const snap = (market: string, book: 'yes' | 'no', seq: number, bids: string[][], asks: string[][]): Record<string, unknown> => ({
  type: 'snapshot',
  market,
  book,
  seq,
  bids,
  asks,
  ts: TS + seq,
});
const upd = (market: string, book: 'yes' | 'no', seq: number, changes: string[][]): Record<string, unknown> => ({
  type: 'update',
  market,
  book,
  seq,
  changes,
  ts: TS + seq,
});

describe('exchange wire schemas over our own hand-written documents', () => {
  it('accept the catalog and a REST book', () => {
    expect(exchangeEventsSchema.safeParse(catalog()).success).toBe(true);
    expect(exchangeBookSchema.safeParse({ type: 'book', market: 'M', book: 'no', bids: [['0.5200', '10']], asks: [], ts: TS }).success).toBe(true);
  });
  it('reject a bad state and a time without zone', () => {
    const c = catalog() as { events: Record<string, unknown>[] };
    c.events[0]!['state'] = 'halftime';
    expect(exchangeEventsSchema.safeParse(c).success).toBe(false);
    const d = catalog() as { events: Record<string, unknown>[] };
    d.events[0]!['start_time'] = '2026-11-22 18:00';
    expect(exchangeEventsSchema.safeParse(d).success).toBe(false);
  });
});

describe('ExchangeMapper: catalog', () => {
  it('maps each outcome of venue_h to its own prefixed market, with the fee inputs in extra', () => {
    const m = mapper(venueH);
    expect(m.map(catalog(), L)).toStrictEqual([SEAHAWKS_H, OVER_H]);
    expect(m.map(catalog(), L + 1)).toEqual([]);
    expect(m.subscribable()).toEqual(['123456789', '223456789']);
  });

  it('re-emits markets when their event goes live', () => {
    const m = mapper(venueH);
    m.map(catalog(), L);
    expect(m.map(catalog('live'), L)).toStrictEqual([
      { ...SEAHAWKS_H, extra: extra('live', 'Moneyline') },
      { ...OVER_H, extra: extra('live', 'Total') },
    ]);
  });

  it('gives a two-sided venue a NO instrument and no prefix', () => {
    const c = catalog() as { events: { markets: Record<string, unknown>[] }[] };
    c.events[0]!.markets[0]!['books'] = ['yes', 'no'];
    const [first] = mapper(venueE).map(c, L);
    expect(first).toMatchObject({ venue: 'venue_e', marketId: '123456789', yesInstrument: '123456789', noInstrument: '123456789:no' });
    // A yes-only venue never gets a NO instrument, whatever the catalog says.
    expect(mapper(venueF).map(c, L)[0]).not.toHaveProperty('noInstrument');
  });

  it('counts bad events and markets and keeps the good ones', () => {
    const c = catalog() as { events: unknown[] };
    const ev = c.events[0] as { markets: unknown[] };
    ev.markets.push({ id: 5, name: 'x' }, { ...(ev.markets[0] as object), id: '9', books: [] });
    c.events.push({ id: 'EV-2', name: 'Bad', state: 'live' }, 7);
    const m = mapper(venueH);
    expect(m.map(c, L).map((e) => ('marketId' in e ? e.marketId : e.type))).toEqual(['venue_h_123456789', 'venue_h_223456789']);
    expect(Object.fromEntries(m.stats.malformed)).toEqual({ market: 2, event: 2 });
    expect(m.map({ events: 'soon' }, L)).toEqual([]);
    expect(m.stats.malformed.get('events')).toBe(1);
  });
});

describe('ExchangeMapper: two-sided book stream (venue_e)', () => {
  it('maps YES and NO snapshots and absolute updates, best first, in units', () => {
    const m = mapper(venueE);
    const out = [
      ...m.map(
        snap(
          'E-1',
          'yes',
          1,
          [
            ['0.4800', '120'],
            ['0.4700', '50'],
          ],
          [['0.5000', '80']],
        ),
        L,
      ),
      ...m.map(
        snap(
          'E-1',
          'no',
          2,
          [['0.5000', '80']],
          [
            ['0.5200', '120'],
            ['0.5300', '50'],
          ],
        ),
        L,
      ),
      ...m.map(
        upd('E-1', 'yes', 3, [
          ['bid', '0.4800', '0'],
          ['bid', '0.4900', '10'],
        ]),
        L,
      ),
      ...m.map(
        upd('E-1', 'no', 4, [
          ['ask', '0.5200', '0'],
          ['ask', '0.5100', '10'],
        ]),
        L,
      ),
    ];
    expect(out).toStrictEqual([
      {
        type: 'book_snapshot',
        venue: 'venue_e',
        timestamp: TS + 1,
        localTimestamp: L,
        marketId: 'E-1',
        instrument: 'E-1',
        bids: [
          [4800, 120],
          [4700, 50],
        ],
        asks: [[5000, 80]],
      },
      {
        type: 'book_snapshot',
        venue: 'venue_e',
        timestamp: TS + 2,
        localTimestamp: L,
        marketId: 'E-1',
        instrument: 'E-1:no',
        bids: [[5000, 80]],
        asks: [
          [5200, 120],
          [5300, 50],
        ],
      },
      {
        type: 'book_delta',
        venue: 'venue_e',
        timestamp: TS + 3,
        localTimestamp: L,
        marketId: 'E-1',
        instrument: 'E-1',
        changes: [
          ['bid', 4800, 0],
          ['bid', 4900, 10],
        ],
      },
      {
        type: 'book_delta',
        venue: 'venue_e',
        timestamp: TS + 4,
        localTimestamp: L,
        marketId: 'E-1',
        instrument: 'E-1:no',
        changes: [
          ['ask', 5200, 0],
          ['ask', 5100, 10],
        ],
      },
    ]);
  });

  it('on a seq gap drops both books, asks for a resync, and resumes after the new snapshots', () => {
    const m = mapper(venueE);
    m.map(snap('E-1', 'yes', 1, [['0.4800', '1']], []), L);
    m.map(snap('E-1', 'no', 2, [], [['0.5200', '1']]), L);
    expect(m.map(upd('E-1', 'yes', 4, [['bid', '0.4700', '5']]), L)).toStrictEqual([
      { type: 'feed', venue: 'venue_e', timestamp: TS + 4, localTimestamp: L, state: 'gap', instrument: 'E-1', detail: 'seq 4 after 2' },
      { type: 'feed', venue: 'venue_e', timestamp: TS + 4, localTimestamp: L, state: 'gap', instrument: 'E-1:no', detail: 'seq 4 after 2' },
    ]);
    expect(m.stats.gaps).toBe(1);
    expect(m.marketOf('E-1:no')).toBe('E-1');
    // Frames already in flight are dropped until the snapshots come.
    expect(m.map(upd('E-1', 'yes', 5, [['bid', '0.4700', '6']]), L)).toEqual([]);
    expect(m.map(snap('E-1', 'yes', 6, [['0.4700', '6']], []), L).map((e) => e.type + ('state' in e ? `:${e.state}` : ''))).toEqual([
      'book_snapshot',
      'feed:resynced',
    ]);
    // The NO book is not ready yet: an in-sequence NO update is dropped, a YES one applies.
    expect(m.map(upd('E-1', 'no', 7, [['ask', '0.5300', '1']]), L)).toEqual([]);
    expect(m.map(upd('E-1', 'yes', 8, [['bid', '0.4600', '1']]), L).map((e) => e.type)).toEqual(['book_delta']);
    expect(m.map(snap('E-1', 'no', 9, [], [['0.5300', '1']]), L).map((e) => e.type + ('state' in e ? `:${e.state}` : ''))).toEqual([
      'book_snapshot',
      'feed:resynced',
    ]);
    expect(m.map(upd('E-1', 'no', 10, [['ask', '0.5300', '0']]), L).map((e) => e.type)).toEqual(['book_delta']);
    expect(m.stats.gaps).toBe(1);
  });

  it('ignores replays and deltas before any snapshot', () => {
    const m = mapper(venueE);
    expect(m.map(upd('E-1', 'yes', 1, [['bid', '0.4800', '1']]), L)).toEqual([]);
    m.map(snap('E-1', 'yes', 3, [], []), L);
    expect(m.map(upd('E-1', 'yes', 3, [['bid', '0.4800', '1']]), L)).toEqual([]);
    expect(m.map(snap('E-1', 'yes', 2, [['0.1000', '1']], []), L)).toEqual([]);
    expect(m.stats.gaps).toBe(0);
    expect(m.stats.ignored).toBe(3);
    m.reset();
    expect(m.map(upd('E-1', 'yes', 4, [['bid', '0.4800', '1']]), L)).toEqual([]);
  });

  it('maps a NO taker on a two-sided venue to a buy on the NO book', () => {
    const m = mapper(venueE);
    m.map(snap('E-1', 'yes', 1, [], []), L);
    expect(m.map({ type: 'trade', market: 'E-1', seq: 2, id: 't-9', price: '0.4800', size: '10', taker: 'no', ts: TS }, L)).toStrictEqual([
      {
        type: 'trade',
        venue: 'venue_e',
        timestamp: TS,
        localTimestamp: L,
        marketId: 'E-1',
        instrument: 'E-1:no',
        tradeId: 't-9',
        price: 5200,
        yesPrice: 4800,
        size: 10,
        side: 'buy',
        takerSide: 'no',
      },
    ]);
  });
});

describe('ExchangeMapper: yes-only book stream (venue_f, venue_h)', () => {
  it('maps the YES book of a prefixed venue_h outcome and refuses NO books', () => {
    const m = mapper(venueH);
    expect(m.map(snap('123456789', 'yes', 1, [['0.6100', '25']], [['0.6300', '40']]), L)).toStrictEqual([
      {
        type: 'book_snapshot',
        venue: 'venue_h',
        timestamp: TS + 1,
        localTimestamp: L,
        marketId: 'venue_h_123456789',
        instrument: '123456789',
        bids: [[6100, 25]],
        asks: [[6300, 40]],
      },
    ]);
    expect(m.map(snap('123456789', 'no', 2, [], []), L)).toEqual([]);
    expect(m.stats.malformed.get('no_book')).toBe(1);
  });

  it('maps a NO taker on a yes-only venue to a sell of YES', () => {
    const m = mapper(venueF);
    m.map(snap('F-1', 'yes', 1, [], []), L);
    expect(m.map({ type: 'trade', market: 'F-1', seq: 2, id: 't-1', price: '0.3000', size: '2.5', taker: 'no', ts: TS }, L)).toStrictEqual([
      {
        type: 'trade',
        venue: 'venue_f',
        timestamp: TS,
        localTimestamp: L,
        marketId: 'F-1',
        instrument: 'F-1',
        tradeId: 't-1',
        price: 3000,
        yesPrice: 3000,
        size: 2.5,
        side: 'sell',
        takerSide: 'no',
      },
    ]);
  });

  it('turns status frames into status changes and market updates (scheduled → live → settled)', () => {
    const m = mapper(venueH);
    m.map(catalog(), L);
    m.map(snap('123456789', 'yes', 1, [], []), L);
    // Event goes live; market status unchanged: only the market record moves.
    expect(m.map({ type: 'status', market: '123456789', seq: 2, status: 'open', result: null, event_state: 'live', ts: TS + 9 }, L)).toStrictEqual([
      { ...SEAHAWKS_H, timestamp: TS + 9, extra: extra('live', 'Moneyline') },
    ]);
    expect(m.map({ type: 'status', market: '123456789', seq: 3, status: 'settled', result: 'yes', event_state: 'final', ts: TS + 10 }, L)).toStrictEqual([
      {
        type: 'market_status',
        venue: 'venue_h',
        timestamp: TS + 10,
        localTimestamp: L,
        marketId: 'venue_h_123456789',
        status: 'finalized',
        result: 'yes',
        settlementValue: 10_000,
      },
      { ...SEAHAWKS_H, timestamp: TS + 10, status: 'finalized', result: 'yes', settlementValue: 10_000, extra: extra('final', 'Moneyline') },
    ]);
    expect(m.subscribable()).toEqual(['223456789']);
    // Without a catalog record only the status change can be told.
    const bare = mapper(venueH);
    bare.map(snap('9', 'yes', 1, [], []), L);
    expect(bare.map({ type: 'status', market: '9', seq: 2, status: 'closed', result: null, event_state: 'final', ts: TS }, L)).toStrictEqual([
      { type: 'market_status', venue: 'venue_h', timestamp: TS, localTimestamp: L, marketId: 'venue_h_9', status: 'closed' },
    ]);
  });

  it("keeps what a status frame needs compactly: an event's markets share one frozen tags list, a live event is the one market's state", () => {
    const doc = catalog();
    const [ev] = doc['events'] as { markets: Record<string, unknown>[] }[];
    ev!.markets.push({
      ...ev!.markets[0]!,
      id: '323456789',
      market_id: null,
      name: 'New England Patriots',
      outcome: 'New England Patriots',
      tags: ['Sports', 'NFL'],
    });
    const m = mapper(venueH);
    const out = m.map(doc, L) as MarketUpsert[];
    expect(out.map((u) => u.marketId)).toEqual(['venue_h_123456789', 'venue_h_223456789', 'venue_h_323456789']);
    // One list for the run of markets with the same tags (the wire's arrays are let go), frozen since records share it.
    expect(out[2]!.tags).toBe(out[0]!.tags);
    expect(Object.isFrozen(out[0]!.tags)).toBe(true);
    expect(() => (out[0]!.tags as string[]).push('x')).toThrow(TypeError);
    expect(out[2]!.tags).toEqual(['Sports', 'NFL']);
    // The first market's event goes live: the other markets' records, rebuilt by their own frames, still say scheduled.
    m.map(snap('123456789', 'yes', 1, [], []), L);
    m.map(snap('323456789', 'yes', 1, [], []), L);
    const live = m.map({ type: 'status', market: '123456789', seq: 2, status: 'open', result: null, event_state: 'live', ts: TS + 9 }, L) as MarketUpsert[];
    expect(live).toStrictEqual([{ ...SEAHAWKS_H, timestamp: TS + 9, extra: extra('live', 'Moneyline') }]);
    const suspended = m.map({ type: 'status', market: '323456789', seq: 2, status: 'suspended', result: null, event_state: 'scheduled', ts: TS + 9 }, L);
    expect(suspended.map((e) => [e.type, (e as MarketUpsert).status, (e as MarketUpsert).extra?.['eventState']])).toEqual([
      ['market_status', 'closed', undefined],
      ['market', 'closed', 'scheduled'],
    ]);
    // The same frame again changes nothing; the live market's next frame still knows it is live.
    expect(m.map({ type: 'status', market: '323456789', seq: 3, status: 'suspended', result: null, event_state: 'scheduled', ts: TS + 10 }, L)).toEqual([]);
    expect(m.map({ type: 'status', market: '123456789', seq: 3, status: 'open', result: null, event_state: 'live', ts: TS + 10 }, L)).toEqual([]);
  });
});

describe('ExchangeMapper: bad input', () => {
  it('counts and drops bad frames without using up a seq or touching the book', () => {
    const m = mapper(venueF);
    m.map(snap('F-1', 'yes', 1, [['0.4000', '1']], []), L);
    const bad: unknown[] = [
      '{"type":"update","market":"F-1","bo', // truncated text
      42,
      null,
      ['update'],
      { type: 'update', market: 'F-1', book: 'yes', seq: '2', changes: [['bid', '0.4000', '2']], ts: TS }, // seq not a number
      { type: 'update', market: 'F-1', book: 'yes', seq: 2, changes: [['bid', 0.4, '2']], ts: TS }, // price not a string
      { type: 'update', market: 'F-1', book: 'yes', seq: 2, changes: [['mid', '0.4000', '2']], ts: TS }, // unknown side
      upd('F-1', 'yes', 2, [['bid', '0.4000', '-2']]), // negative size
      upd('F-1', 'yes', 2, [['bid', '1.4000', '2']]), // above a dollar
      upd('F-1', 'yes', 2, [['bid', '0.40005', '2']]), // finer than a unit
      upd('F-1', 'yes', 2, [['bid', 'NA', '2']]),
      snap('F-1', 'yes', 2, [['0.5000', '-3']], []),
      snap(
        'F-1',
        'yes',
        2,
        [
          ['0.5000', '3'],
          ['0.5000', '4'],
          ['0.6000', '1'],
        ],
        [],
      ), // a price twice
      { type: 'trade', market: 'F-1', seq: 2, id: 't', price: '0.5', size: '0', taker: 'yes', ts: TS }, // empty trade
      { type: 'status', market: 'F-1', seq: 2, status: 'open', result: 'maybe', event_state: 'live', ts: TS },
      { type: 'book_v2', market: 'F-1', seq: 2 },
      { type: 'heartbeat', ts: TS },
      { type: 'subscribed', channel: 'book', markets: ['F-1'] },
    ];
    for (const b of bad) expect(m.map(b, L)).toEqual([]);
    expect(Object.fromEntries(m.stats.malformed)).toEqual({ frame: 4, update: 7, snapshot: 2, trade: 1, status: 1 });
    expect(Object.fromEntries(m.stats.unknown)).toEqual({ book_v2: 1 });
    expect(m.stats.ignored).toBe(2);
    // Seq 2 is still the next one: no gap.
    expect(m.map(upd('F-1', 'yes', 2, [['bid', '0.4000', '2']]), L)).toStrictEqual([
      { type: 'book_delta', venue: 'venue_f', timestamp: TS + 2, localTimestamp: L, marketId: 'F-1', instrument: 'F-1', changes: [['bid', 4000, 2]] },
    ]);
    expect(m.stats.gaps).toBe(0);
  });

  it('sorts levels a venue sent out of order and drops zero sizes from snapshots', () => {
    const [e] = mapper(venueF).map(
      snap(
        'F-1',
        'yes',
        1,
        [
          ['0.4000', '1'],
          ['0.4500', '2'],
          ['0.4200', '0'],
        ],
        [
          ['0.5500', '1'],
          ['0.5000', '2'],
        ],
      ),
      L,
    );
    expect(e).toMatchObject({
      bids: [
        [4500, 2],
        [4000, 1],
      ],
      asks: [
        [5000, 2],
        [5500, 1],
      ],
    });
  });

  it('passes venue errors on as feed errors and maps a REST book', () => {
    const m = mapper(venueE);
    expect(m.map({ type: 'error', code: 'unknown_market', msg: 'unknown market X', market: 'X' }, L)).toStrictEqual([
      { type: 'feed', venue: 'venue_e', timestamp: L, localTimestamp: L, state: 'error', detail: 'unknown_market: unknown market X', instrument: 'X' },
    ]);
    expect(m.map({ type: 'book', market: 'E-1', book: 'no', bids: [['0.5200', '10']], asks: [], ts: TS }, L)).toStrictEqual([
      { type: 'book_snapshot', venue: 'venue_e', timestamp: TS, localTimestamp: L, marketId: 'E-1', instrument: 'E-1:no', bids: [[5200, 10]], asks: [] },
    ]);
    expect(m.map({ type: 'book', market: 'E-1', book: 'no', bids: [[0.52, 10]], asks: [], ts: TS }, L)).toEqual([]);
    expect(m.stats.malformed.get('book')).toBe(1);
  });
});
