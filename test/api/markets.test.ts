import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedEvent } from '../../src/core/types.js';
import { apiHarness, type ApiHarness } from './harness.js';

let h: ApiHarness;
const T = Date.UTC(2026, 10, 22, 12);
const ev = { timestamp: T, localTimestamp: T };

beforeAll(async () => {
  h = await apiHarness();
  const evs: NormalizedEvent[] = [];
  for (let i = 0; i < 30; i++)
    evs.push({
      ...ev,
      venue: 'venue_a',
      type: 'market',
      marketId: `KXTEST-26NOV22-T${String(i).padStart(2, '0')}`,
      title: `Test market ${i}?`,
      seriesTitle: 'Test series',
      status: i < 25 ? 'active' : 'finalized',
      category: i % 2 ? 'Crypto' : 'Sports',
      closeTime: T + 86_400_000,
    });
  evs.push({
    ...ev,
    venue: 'venue_b',
    type: 'market',
    marketId: '0xabc',
    title: 'Will Bitcoin reach $140,000 by December 31, 2026?',
    status: 'active',
    yesInstrument: 'Y1',
    noInstrument: 'N1',
    extra: { slug: 'will-bitcoin-reach-140k', eventSlug: 'btc-2026' },
  });
  evs.push({ ...ev, venue: 'venue_b', type: 'book_snapshot', marketId: '0xabc', instrument: 'Y1', bids: [[4200, 100]], asks: [[4500, 50]] });
  evs.push({ ...ev, venue: 'venue_b', type: 'trade', marketId: '0xabc', tradeId: 'x', price: 6000, yesPrice: 6000, size: 1 });
  evs.push({
    ...ev,
    venue: 'venue_a',
    type: 'book_snapshot',
    marketId: 'KXTEST-26NOV22-T01',
    instrument: 'KXTEST-26NOV22-T01',
    bids: [[0, 10]],
    asks: [
      [3300, 5],
      [3400, 7],
    ],
  });
  evs.push({
    ...ev,
    venue: 'venue_h',
    type: 'market',
    marketId: 'venue_h_123456789',
    title: 'Seattle Seahawks',
    status: 'active',
    yesInstrument: '123456789',
    extra: { marketName: 'Moneyline', venueMarketId: '900000001' },
  });
  evs.push({ ...ev, venue: 'venue_h', type: 'book_snapshot', marketId: 'venue_h_123456789', instrument: '123456789', bids: [[5500, 10]], asks: [[5700, 10]] });
  h.apply(...evs);
});
afterAll(() => h.close());

describe('GET /markets (spec 4.5)', () => {
  it('pages with a stable cursor until it is null', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await h.get(`/markets?platform=venue_a&limit=10${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.total_count).toBe(25);
      expect(typeof r.body.as_of).toBe('string');
      seen.push(...r.body.markets.map((m: { market_id: string }) => m.market_id));
      cursor = r.body.cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(25);
  });

  it('serializes quotes in cents, a stored zero as 0 and a missing value as null (spec 2.1)', async () => {
    const r = await h.get('/markets?platform=venue_a&q=T01');
    const m = r.body.markets[0];
    expect(m).toMatchObject({
      platform: 'venue_a',
      market_id: 'KXTEST-26NOV22-T01',
      yes_bid: 0,
      yes_ask: 33,
      no_bid: 67,
      no_ask: 100,
      last_price: null,
      series_title: 'Test series',
      status: 'active',
    });
    const other = (await h.get('/markets?platform=venue_a&q=T02')).body.markets[0];
    expect(other).toMatchObject({ yes_bid: null, yes_ask: null, no_bid: null, no_ask: null, last_price: null });
  });

  it('keeps venue_b last_price inside the YES band (spec 2.3 rule 2) and fills ticker_name', async () => {
    const m = (await h.get('/markets?platform=venue_b')).body.markets[0];
    expect(m).toMatchObject({ yes_bid: 42, yes_ask: 45, last_price: 45, ticker_name: 'will-bitcoin-reach-140k' });
    const hm = (await h.get('/markets?platform=venue_h')).body.markets[0];
    // venue_h (spec 2.2): the API id is the outcome's, ticker_name the venue market it belongs to.
    expect(hm).toMatchObject({ market_id: 'venue_h_123456789', ticker_name: '900000001' });
  });

  it('filters by status, category and q', async () => {
    expect((await h.get('/markets?platform=venue_a&status=closed')).body.total_count).toBe(5);
    expect((await h.get('/markets?platform=venue_a&status=all&limit=2000')).body.markets).toHaveLength(30);
    expect((await h.get('/markets?category=crypto&platform=venue_a')).body.total_count).toBe(12);
    expect((await h.get('/markets?q=bitcoin')).body.markets.map((m: { platform: string }) => m.platform)).toEqual(['venue_b']);
    expect((await h.get('/markets?q=test%20series&platform=venue_a')).body.total_count).toBe(25);
  });

  it('adds the rules object with include=rules', async () => {
    const m = (await h.get('/markets?platform=venue_a&limit=1&include=rules')).body.markets[0];
    expect(m.rules).toEqual({ primary: null, secondary: null });
  });

  it('rejects bad parameters with 400', async () => {
    for (const qs of [
      'limit=0',
      'limit=2001',
      'limit=x',
      'status=resolved',
      'status=cancelled',
      'platform=nasdaq',
      'cursor=!!',
      'cursor=eyJ4IjoxfQ',
      'include=everything',
    ])
      expect((await h.get(`/markets?${qs}`)).status, qs).toBe(400);
    expect((await h.get('/markets', null)).status).toBe(401);
  });

  it('serves an unchanged page from cache and a changed quote fresh', async () => {
    const a = await h.get('/markets?platform=venue_b');
    h.apply({ ...ev, localTimestamp: T + 1, venue: 'venue_b', type: 'book_delta', marketId: '0xabc', instrument: 'Y1', changes: [['bid', 4300, 5]] });
    const b = await h.get('/markets?platform=venue_b');
    expect(a.body.markets[0].yes_bid).toBe(42);
    expect(b.body.markets[0].yes_bid).toBe(43);
  });

  it('serves a cached page fresh when a market on it without a quote gets one, also after a quote appeared elsewhere', async () => {
    type Row = { market_id: string; yes_bid: number | null };
    const bid = async (id: string): Promise<number | null | undefined> =>
      ((await h.get('/markets?platform=venue_a&limit=5')).body.markets as Row[]).find((m) => m.market_id === id)?.yes_bid;
    const snapshot = (marketId: string, price: number): NormalizedEvent => ({
      ...ev,
      localTimestamp: T + 2,
      venue: 'venue_a',
      type: 'book_snapshot',
      marketId,
      instrument: marketId,
      bids: [[price, 1]],
      asks: [],
    });
    expect(await bid('KXTEST-26NOV22-T03')).toBeNull();
    h.apply(snapshot('KXTEST-26NOV22-T20', 2000)); // not on the page
    expect(await bid('KXTEST-26NOV22-T03')).toBeNull();
    h.apply(snapshot('KXTEST-26NOV22-T03', 3000));
    expect(await bid('KXTEST-26NOV22-T03')).toBe(30);
  });

  it('sees a listed quote move after requests that found the page current past an unlisted quote change, in the bytes a fresh page has', async () => {
    // The same page under two cache keys: `q` matching every venue_a id gives the same markets and count.
    const raw = async (query: string): Promise<string> =>
      (await fetch(`${h.base}/markets?platform=venue_a&limit=5${query}`, { headers: { 'x-api-key': h.key } })).text();
    const delta = (venue: 'venue_a' | 'venue_h', marketId: string, instrument: string, at: number, side: 'bid' | 'ask', price: number, size: number): void =>
      h.apply({ ...ev, localTimestamp: T + at, venue, type: 'book_delta', marketId, instrument, changes: [[side, price, size]] });
    const first = await raw('');
    // A quote not on the page moves: the next answers walk the page's quotes, find them current and are the same.
    delta('venue_h', 'venue_h_123456789', '123456789', 30, 'ask', 5800, 3);
    expect(await raw('')).toBe(first);
    expect(await raw('')).toBe(first);
    // A quote on the page moves: the page kept at the last check must not be served.
    delta('venue_a', 'KXTEST-26NOV22-T01', 'KXTEST-26NOV22-T01', 31, 'bid', 100, 4);
    const moved = await raw('');
    expect(moved).not.toBe(first);
    expect(
      (JSON.parse(moved) as { markets: { market_id: string; yes_bid: number | null }[] }).markets.find((m) => m.market_id === 'KXTEST-26NOV22-T01')?.yes_bid,
    ).toBe(1);
    // Served again from the kept page, byte for byte what a page built now for the same markets is.
    expect(await raw('')).toBe(moved);
    expect(await raw('&q=kxtest')).toBe(moved);
    delta('venue_a', 'KXTEST-26NOV22-T01', 'KXTEST-26NOV22-T01', 32, 'bid', 100, 0);
    delta('venue_h', 'venue_h_123456789', '123456789', 33, 'ask', 5800, 0);
  });
});

describe('GET /prices/bulk (spec 4.9)', () => {
  it('resolves known ids and lists the rest as unresolved', async () => {
    const r = await h.get('/prices/bulk?ids=venue_b:0xabc,venue_a:KXTEST-26NOV22-T01,venue_a:NOPE,garbage,venue_z:1');
    expect(r.status).toBe(200);
    expect(r.body._meta).toEqual({ requested: 5, resolved: 2, unresolved_ids: ['venue_a:NOPE', 'garbage', 'venue_z:1'] });
    // The last trade (60) is outside the YES band: venue_b last_price is always inside it (spec 2.3 rule 2).
    expect(r.body.prices['venue_b:0xabc']).toMatchObject({ yes_bid: 43, yes_ask: 45, last_price: 45 });
  });

  it('complements NO prices in exact cents on /markets, /prices/bulk and /orderbook (spec 2.1)', async () => {
    // In floating point 100 − 67.4 is 32.599999999999994 and 100 − 85.3 is 14.700000000000003.
    h.apply({
      ...ev,
      venue: 'venue_a',
      type: 'book_snapshot',
      marketId: 'KXTEST-26NOV22-T04',
      instrument: 'KXTEST-26NOV22-T04',
      bids: [[6740, 1]],
      asks: [[8530, 2]],
    });
    const m = (await h.get('/markets?platform=venue_a&q=T04')).body.markets[0];
    expect(m).toMatchObject({ yes_bid: 67.4, yes_ask: 85.3, no_bid: 14.7, no_ask: 32.6 });
    const b = (await h.get('/prices/bulk?ids=venue_a:KXTEST-26NOV22-T04')).body.prices['venue_a:KXTEST-26NOV22-T04'];
    expect(b).toMatchObject({ no_bid: 14.7, no_ask: 32.6 });
    const ob = (await h.get('/orderbook?platform=venue_a&market_id=KXTEST-26NOV22-T04')).body;
    expect(ob.no).toEqual({ bids: [{ price: 14.7, size: 2 }], asks: [{ price: 32.6, size: 1 }] });
    // the platform:market_id form of /prices/bulk is read as the native id when the platform agrees
    expect((await h.get('/orderbook?platform=venue_a&market_id=venue_a:KXTEST-26NOV22-T04')).body).toEqual(ob);
    expect((await h.get('/orderbook?platform=venue_a&market_id=venue_b:KXTEST-26NOV22-T04')).status).toBe(404);
    const a = (await h.get('/venue_a/markets/KXTEST-26NOV22-T04')).body.market;
    expect(a).toMatchObject({ no_bid: 14.7, no_ask: 32.6 });
  });

  it('serves a repeated list from cache until one of its quotes moves', async () => {
    const url = '/prices/bulk?ids=venue_b:0xabc,venue_h:venue_h_123456789';
    const a = await h.get(url);
    const again = await h.get(url);
    expect(again.body).toEqual(a.body);
    h.apply({
      ...ev,
      localTimestamp: T + 2,
      venue: 'venue_h',
      type: 'book_delta',
      marketId: 'venue_h_123456789',
      instrument: '123456789',
      changes: [['bid', 5600, 1]],
    });
    const b = await h.get(url);
    expect(b.body.prices['venue_h:venue_h_123456789'].yes_bid).toBe(56);
    expect(a.body.prices['venue_h:venue_h_123456789'].yes_bid).toBe(55);
    h.apply({
      ...ev,
      localTimestamp: T + 3,
      venue: 'venue_h',
      type: 'book_delta',
      marketId: 'venue_h_123456789',
      instrument: '123456789',
      changes: [['bid', 5600, 0]],
    });
  });

  it('sees a listed quote move after a request that found the list current past an unlisted quote change', async () => {
    const url = '/prices/bulk?ids=venue_b:0xabc,venue_a:KXTEST-26NOV22-T01';
    const first = (await h.get(url)).body;
    // A quote not on the list moves: the next answer walks the list's quotes, finds them current and is the same.
    h.apply({
      ...ev,
      localTimestamp: T + 20,
      venue: 'venue_h',
      type: 'book_delta',
      marketId: 'venue_h_123456789',
      instrument: '123456789',
      changes: [['ask', 5900, 2]],
    });
    expect((await h.get(url)).body).toEqual(first);
    expect((await h.get(url)).body).toEqual(first);
    h.apply({ ...ev, localTimestamp: T + 21, venue: 'venue_b', type: 'book_delta', marketId: '0xabc', instrument: 'Y1', changes: [['bid', 4300, 5]] });
    const moved = (await h.get(url)).body;
    expect(moved.prices['venue_b:0xabc'].yes_bid).toBe(43);
    expect(moved.prices['venue_a:KXTEST-26NOV22-T01']).toEqual(first.prices['venue_a:KXTEST-26NOV22-T01']);
    h.apply({ ...ev, localTimestamp: T + 22, venue: 'venue_b', type: 'book_delta', marketId: '0xabc', instrument: 'Y1', changes: [['bid', 4300, 0]] });
    h.apply({
      ...ev,
      localTimestamp: T + 23,
      venue: 'venue_h',
      type: 'book_delta',
      marketId: 'venue_h_123456789',
      instrument: '123456789',
      changes: [['ask', 5900, 0]],
    });
  });

  it('400 for a missing list, empty items or more than 100 ids', async () => {
    expect((await h.get('/prices/bulk')).status).toBe(400);
    expect((await h.get('/prices/bulk?ids=a,,b')).status).toBe(400);
    const many = Array.from({ length: 101 }, (_, i) => `venue_a:X${i}`).join(',');
    expect((await h.get(`/prices/bulk?ids=${many}`)).status).toBe(400);
  });
});

describe('GET /orderbook (spec 4.10, 2.8)', () => {
  it('serves YES levels in cents with the NO side as complement, empty NO for yes-only venues', async () => {
    const a = await h.get('/orderbook?platform=venue_a&market_id=KXTEST-26NOV22-T01');
    expect(a.body.yes).toEqual({
      bids: [{ price: 0, size: 10 }],
      asks: [
        { price: 33, size: 5 },
        { price: 34, size: 7 },
      ],
    });
    expect(a.body.no).toEqual({
      bids: [
        { price: 67, size: 5 },
        { price: 66, size: 7 },
      ],
      asks: [{ price: 100, size: 10 }],
    });
    const hh = await h.get('/orderbook?platform=venue_h&market_id=venue_h_123456789');
    expect(hh.body.yes.bids).toEqual([{ price: 55, size: 10 }]);
    expect(hh.body.no).toEqual({ bids: [], asks: [] });
  });

  it('answers a repeated query from the book as it stands: after a delta, a resync and a title change', async () => {
    const url = '/orderbook?platform=venue_h&market_id=venue_h_123456789&depth=5';
    const book = { ...ev, venue: 'venue_h' as const, marketId: 'venue_h_123456789', instrument: '123456789' };
    const first = (await h.get(url)).body;
    expect((await h.get(url)).body).toEqual(first);
    h.apply({ ...book, localTimestamp: T + 10, type: 'book_delta', changes: [['ask', 5800, 3]] });
    const moved = (await h.get(url)).body;
    expect(moved.yes.asks).toEqual([...first.yes.asks, { price: 58, size: 3 }]);
    h.apply({ ...book, localTimestamp: T + 11, type: 'book_snapshot', bids: [[5000, 1]], asks: [[6000, 2]] });
    expect((await h.get(url)).body.yes).toEqual({ bids: [{ price: 50, size: 1 }], asks: [{ price: 60, size: 2 }] });
    h.apply({ ...ev, localTimestamp: T + 12, venue: 'venue_h', type: 'market', marketId: 'venue_h_123456789', title: 'Renamed', status: 'active' });
    expect((await h.get(url)).body.title).toBe('Renamed');
  });

  it('answers a market whose book appears after its first answer, and a record replaced in the catalog', async () => {
    const url = '/orderbook?platform=venue_a&market_id=KXTEST-26NOV22-T22';
    const before = (await h.get(url)).body;
    expect(before).toMatchObject({ ready: false, yes: { bids: [], asks: [] }, title: 'Test market 22?' });
    expect((await h.get(url)).body).toEqual(before);
    // A book created for the market (none was there when the answer was kept) is read.
    const book = { ...ev, venue: 'venue_a' as const, marketId: 'KXTEST-26NOV22-T22', instrument: 'KXTEST-26NOV22-T22' };
    h.apply({ ...book, localTimestamp: T + 30, type: 'book_snapshot', bids: [[4000, 3]], asks: [[4100, 4]] });
    expect((await h.get(url)).body).toMatchObject({ ready: true, yes: { bids: [{ price: 40, size: 3 }], asks: [{ price: 41, size: 4 }] } });
    h.apply({
      ...ev,
      localTimestamp: T + 31,
      venue: 'venue_a',
      type: 'market',
      marketId: 'KXTEST-26NOV22-T22',
      title: 'Test market 22, renamed?',
      status: 'active',
    });
    expect((await h.get(url)).body.title).toBe('Test market 22, renamed?');
    h.apply({ ...book, localTimestamp: T + 32, type: 'book_delta', changes: [['bid', 4000, 0]] });
    expect((await h.get(url)).body.yes.bids).toEqual([]);
  });

  it('answers the last query again and a query asked between from their books as they stand, never a page kept for another', async () => {
    const a = '/orderbook?platform=venue_a&market_id=KXTEST-26NOV22-T23';
    const b = '/orderbook?platform=venue_a&market_id=KXTEST-26NOV22-T24';
    const book = (marketId: string) => ({ ...ev, venue: 'venue_a' as const, marketId, instrument: marketId });
    h.apply({ ...book('KXTEST-26NOV22-T23'), localTimestamp: T + 40, type: 'book_snapshot', bids: [[2000, 1]], asks: [[2100, 1]] });
    h.apply({ ...book('KXTEST-26NOV22-T24'), localTimestamp: T + 40, type: 'book_snapshot', bids: [[3000, 1]], asks: [[3100, 1]] });
    const a1 = (await h.get(a)).body;
    expect((await h.get(a)).body).toEqual(a1);
    // The same query again after its book moved: the book as it stands.
    h.apply({ ...book('KXTEST-26NOV22-T23'), localTimestamp: T + 41, type: 'book_delta', changes: [['bid', 2000, 4]] });
    expect((await h.get(a)).body.yes.bids).toEqual([{ price: 20, size: 4 }]);
    // Another query between: each answers its own market, and the first its move made meanwhile.
    expect((await h.get(b)).body).toMatchObject({ market_id: 'KXTEST-26NOV22-T24', yes: { bids: [{ price: 30, size: 1 }] } });
    h.apply({ ...book('KXTEST-26NOV22-T23'), localTimestamp: T + 42, type: 'book_delta', changes: [['ask', 2100, 9]] });
    const a3 = (await h.get(a)).body;
    expect(a3).toMatchObject({ market_id: 'KXTEST-26NOV22-T23', yes: { bids: [{ price: 20, size: 4 }], asks: [{ price: 21, size: 9 }] } });
    expect((await h.get(b)).body.market_id).toBe('KXTEST-26NOV22-T24');
    expect((await h.get(a)).body).toEqual(a3);
  });

  it('400 for venues without books and missing params; 404 for unknown markets', async () => {
    expect((await h.get('/orderbook?platform=venue_c&market_id=1')).status).toBe(400);
    expect((await h.get('/orderbook?platform=venue_a')).status).toBe(400);
    expect((await h.get('/orderbook?platform=venue_a&market_id=NOPE')).status).toBe(404);
  });
});
