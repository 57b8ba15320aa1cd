import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { VenueConfig } from '../../../src/config/schema.js';
import { FeedStats } from '../../../src/venues/common/stats.js';
import { PredictItMapper } from '../../../src/venues/predictit/mappers.js';
import { formatPredictItTime, parsePredictItTime, predictItAllSchema, predictItMarketSchema } from '../../../src/venues/predictit/raw.js';

const FIXTURE = 'test/fixtures/predictit/marketdata_market_7085_2021-02-26.json';
const market7085 = (): Record<string, unknown> => JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>;

const venue: VenueConfig = loadConfig({ env: {} }).venues.find((v) => v.protocol === 'predictit')!;
const LOCAL = 1_700_000_000_000;
/** 2021-02-26T12:05:47.33188 in New York (EST, UTC−5) = 17:05:47.331Z. */
const T = Date.UTC(2021, 1, 26, 17, 5, 47, 331);

const mapper = (): PredictItMapper => new PredictItMapper(venue, new FeedStats());

const EXPECTED_7085 = [
  {
    type: 'market',
    venue: 'venue_c',
    timestamp: T,
    localTimestamp: LOCAL,
    marketId: '24914',
    title: 'Republican',
    eventTitle: 'Which party will win the U.S. Senate election in Ohio in 2022?',
    eventId: '7085',
    outcome: 'Republican',
    status: 'active',
    url: 'https://www.predictit.org/markets/detail/7085/Which-party-will-win-the-US-Senate-election-in-Ohio-in-2022',
    extra: { contractShortName: 'Republican', marketShortName: 'Which party will win the OH Senate race?', displayOrder: 0 },
  },
  // bestBuyNoCost 0.23 → YES bid 0.77; bestBuyYesCost 0.78 = YES ask.
  { type: 'quote', venue: 'venue_c', timestamp: T, localTimestamp: LOCAL, marketId: '24914', yesBid: 7700, yesAsk: 7800, lastPrice: 7700 },
  {
    type: 'market',
    venue: 'venue_c',
    timestamp: T,
    localTimestamp: LOCAL,
    marketId: '24915',
    title: 'Democratic',
    eventTitle: 'Which party will win the U.S. Senate election in Ohio in 2022?',
    eventId: '7085',
    outcome: 'Democratic',
    status: 'active',
    url: 'https://www.predictit.org/markets/detail/7085/Which-party-will-win-the-US-Senate-election-in-Ohio-in-2022',
    extra: { contractShortName: 'Democratic', marketShortName: 'Which party will win the OH Senate race?', displayOrder: 0 },
  },
  { type: 'quote', venue: 'venue_c', timestamp: T, localTimestamp: LOCAL, marketId: '24915', yesBid: 2400, yesAsk: 2500, lastPrice: 2400 },
];

describe('predictit wire schemas over the real fixture', () => {
  it('accepts the captured market and its /all envelope', () => {
    expect(predictItMarketSchema.safeParse(market7085()).success).toBe(true);
    expect(predictItAllSchema.safeParse({ markets: [market7085()] }).success).toBe(true);
  });
  it('rejects wrong types', () => {
    const m = market7085();
    (m['contracts'] as Record<string, unknown>[])[0]!['bestBuyYesCost'] = 'NA';
    expect(predictItMarketSchema.safeParse(m).success).toBe(false);
  });
});

describe('predictit time', () => {
  it('reads timestamps as New York wall-clock time, DST aware', () => {
    expect(parsePredictItTime('2021-02-26T12:05:47.33188')).toBe(T);
    expect(parsePredictItTime('2022-11-08T23:59:00')).toBe(Date.UTC(2022, 10, 9, 4, 59)); // EST
    expect(parsePredictItTime('2022-07-04T12:00:00')).toBe(Date.UTC(2022, 6, 4, 16, 0)); // EDT
    expect(parsePredictItTime('2022-07-04T12:00:00Z')).toBe(Date.UTC(2022, 6, 4, 12, 0));
    expect(parsePredictItTime('NA')).toBeNaN();
    expect(parsePredictItTime('2022-13-04T12:00:00')).toBeNaN();
  });
  it('formats what it parses', () => {
    for (const t of [T, Date.UTC(2022, 6, 4, 16, 0, 0, 5), Date.UTC(2026, 2, 8, 7, 30)]) expect(parsePredictItTime(formatPredictItTime(t))).toBe(t);
  });
  it('reads the hours around a change of offset right, whichever hour it read before (offsets kept per hour)', () => {
    // 2026-03-08 07:00 UTC: 02:00 EST becomes 03:00 EDT. Minute by minute from 05:00 to 09:00 UTC, forward then back.
    const spring = Array.from({ length: 240 }, (_, i) => Date.UTC(2026, 2, 8, 5) + i * 60_000 + 7);
    for (const t of [...spring, ...[...spring].reverse()]) expect(parsePredictItTime(formatPredictItTime(t))).toBe(t);
    expect(parsePredictItTime('2026-03-08T01:59:00')).toBe(Date.UTC(2026, 2, 8, 6, 59)); // EST
    expect(parsePredictItTime('2026-03-08T03:00:00')).toBe(Date.UTC(2026, 2, 8, 7, 0)); // EDT
    // 2026-11-01 06:00 UTC: 02:00 EDT becomes 01:00 EST; outside the repeated local hour (05:00-07:00 UTC) every minute reads back.
    const fall = Array.from({ length: 300 }, (_, i) => Date.UTC(2026, 10, 1, 3) + i * 60_000).filter(
      (t) => t < Date.UTC(2026, 10, 1, 5) || t >= Date.UTC(2026, 10, 1, 7),
    );
    for (const t of [...fall].reverse()) expect(parsePredictItTime(formatPredictItTime(t))).toBe(t);
    expect(parsePredictItTime('2026-11-01T00:30:00')).toBe(Date.UTC(2026, 10, 1, 4, 30)); // EDT
    expect(parsePredictItTime('2026-11-01T02:30:00')).toBe(Date.UTC(2026, 10, 1, 7, 30)); // EST
  });
});

describe('PredictItMapper', () => {
  it('maps the real market: one market and one quote per contract', () => {
    const m = mapper();
    expect(m.map(market7085(), LOCAL)).toEqual(EXPECTED_7085);
    expect(m.stats.malformedTotal).toBe(0);
  });

  it('maps an /all document the same way and emits only changes on later polls', () => {
    const m = mapper();
    expect(m.map({ markets: [market7085()] }, LOCAL)).toEqual(EXPECTED_7085);
    expect(m.map({ markets: [market7085()] }, LOCAL + 1)).toEqual([]);

    const moved = market7085();
    const c = (moved['contracts'] as Record<string, unknown>[])[1]!;
    c['bestBuyYesCost'] = 0.26;
    expect(m.map({ markets: [moved] }, LOCAL + 2)).toEqual([
      { type: 'quote', venue: 'venue_c', timestamp: T, localTimestamp: LOCAL + 2, marketId: '24915', yesBid: 2400, yesAsk: 2600, lastPrice: 2400 },
    ]);

    c['status'] = 'Closed';
    const out = m.map({ markets: [moved] }, LOCAL + 3);
    expect(out).toEqual([{ ...EXPECTED_7085[2], localTimestamp: LOCAL + 3, status: 'closed' }]);
  });

  it('closes a contract that leaves /all once, and lists it again when it comes back', () => {
    const m = mapper();
    m.map({ markets: [market7085()] }, LOCAL);
    const one = market7085();
    one['contracts'] = [(one['contracts'] as unknown[])[0]];
    // 24914 is now the market's only contract, so its title becomes the market name (an upsert).
    const out = m.map({ markets: [one] }, LOCAL + 1);
    expect(out).toContainEqual({ type: 'market_status', venue: 'venue_c', timestamp: T, localTimestamp: LOCAL + 1, marketId: '24915', status: 'closed' });
    expect(m.map({ markets: [one] }, LOCAL + 2).filter((e) => e.type === 'market_status')).toEqual([]);
    expect(m.map({ markets: [market7085()] }, LOCAL + 3).map((e) => `${e.type}:${'marketId' in e ? e.marketId : ''}`)).toEqual([
      'market:24914',
      'market:24915',
      'quote:24915',
    ]);
  });

  it('titles a single-contract market with the market name', () => {
    const one = market7085();
    one['contracts'] = [(one['contracts'] as unknown[])[0]];
    const [up] = mapper().map(one, LOCAL);
    expect(up).toMatchObject({ type: 'market', marketId: '24914', title: one['name'], outcome: 'Republican' });
  });

  it('leaves null prices undefined, never 0, and keeps a real 0', () => {
    const m = market7085();
    const c = (m['contracts'] as Record<string, unknown>[])[0]!;
    c['bestBuyYesCost'] = null;
    c['bestSellNoCost'] = null;
    c['bestBuyNoCost'] = null;
    c['bestSellYesCost'] = null;
    c['lastTradePrice'] = 0;
    const mp = mapper();
    const q = mp.map(m, LOCAL)[1]!;
    expect(q).toStrictEqual({ type: 'quote', venue: 'venue_c', timestamp: T, localTimestamp: LOCAL, marketId: '24914', lastPrice: 0 });
    expect(mp.stats.malformedTotal).toBe(0);
  });

  it('falls back to bestSellYesCost and 1 − bestSellNoCost when the primary price is null', () => {
    const m = market7085();
    const c = (m['contracts'] as Record<string, unknown>[])[0]!;
    c['bestBuyYesCost'] = null;
    c['bestBuyNoCost'] = null;
    expect(mapper().map(m, LOCAL)[1]).toMatchObject({ yesBid: 7700, yesAsk: 7800 });
  });

  it('counts and drops bad contracts and markets without touching the good ones', () => {
    const m = mapper();
    const bad = market7085();
    const cs = bad['contracts'] as Record<string, unknown>[];
    cs[0]!['bestBuyYesCost'] = 'NA'; // wrong type
    const neg = { ...cs[1]!, id: 99, bestSellYesCost: -0.01 }; // negative price
    const over = { ...cs[1]!, id: 98, bestSellYesCost: 1.5 }; // above a dollar
    cs.push(neg, over);
    const out = m.map({ markets: [bad, { ...market7085(), id: '7085' }, 42, null] }, LOCAL);
    expect(out.map((e) => `${e.type}:${'marketId' in e ? e.marketId : ''}`)).toEqual(['market:24915', 'quote:24915']);
    expect(Object.fromEntries(m.stats.malformed)).toEqual({ contract: 3, market: 3 });
  });

  it('counts a bad envelope, a bad date and an unknown status', () => {
    const m = mapper();
    expect(m.map({ markets: 'unavailable' }, LOCAL)).toEqual([]);
    expect(m.map('{"markets":[{"id":70', LOCAL)).toEqual([]); // a truncated body that reached the mapper as text
    const odd = market7085();
    const c = (odd['contracts'] as Record<string, unknown>[])[0]!;
    c['dateEnd'] = 'soon';
    c['status'] = 'Suspended';
    const out = m.map(odd, LOCAL);
    expect(out[0]).toMatchObject({ marketId: '24914', status: 'closed' });
    expect(out[0]).not.toHaveProperty('closeTime');
    expect(Object.fromEntries(m.stats.malformed)).toEqual({ all: 1, market: 1, dateEnd: 1 });
    expect(Object.fromEntries(m.stats.unknown)).toEqual({ 'status:Suspended': 1 });
  });

  it('reads a dateEnd as the close time, and "NA" as none', () => {
    const m = market7085();
    (m['contracts'] as Record<string, unknown>[])[0]!['dateEnd'] = '2022-11-08T23:59:00';
    const out = mapper().map(m, LOCAL);
    expect(out[0]).toMatchObject({ closeTime: Date.UTC(2022, 10, 9, 4, 59) });
    expect(out[2]).not.toHaveProperty('closeTime');
  });

  it('does not close contracts when part of the /all document was malformed', () => {
    const m = mapper();
    m.map({ markets: [market7085()] }, LOCAL);
    expect(m.map({ markets: [{ ...market7085(), id: 'x' }] }, LOCAL + 1)).toEqual([]);
  });

  it('re-emits everything after reset()', () => {
    const m = mapper();
    m.map(market7085(), LOCAL);
    m.reset();
    expect(m.map(market7085(), LOCAL)).toEqual(EXPECTED_7085);
  });
});
