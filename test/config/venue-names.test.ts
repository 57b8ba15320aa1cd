import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { apiHarness, type ApiHarness } from '../api/harness.js';

const T = Date.UTC(2026, 10, 20, 12);
const M = 'KXNFLGAME-26NOV23NESEA-SEA';

describe('venue-name presets (config/venue-names.json)', () => {
  it('hosted names the venues as the hosted service does; neutral keeps the labels', () => {
    const hosted = loadConfig({ env: { CROSSBOOK_VENUE_NAMES: 'hosted' } });
    expect(Object.fromEntries(hosted.venues.map((v) => [v.label, v.slug]))).toEqual({
      venue_a: 'kalshi',
      venue_b: 'polymarket',
      venue_c: 'predictit',
      venue_d: 'manifold',
      venue_e: 'exchange_e',
      venue_f: 'exchange_f',
      venue_g: 'polymarket_us',
      venue_h: 'prophetx',
    });
    expect(loadConfig({ env: {}, venueNames: 'neutral' }).venues.map((v) => v.slug)).toEqual(loadConfig({ env: {} }).venues.map((v) => v.slug));
  });

  it('lets an explicit slug override win over the preset, and the option over the environment', () => {
    const c = loadConfig({ env: { CROSSBOOK_VENUE_NAMES: 'hosted', CROSSBOOK_VENUE__venue_a__slug: 'kx' } });
    expect(c.venues.find((v) => v.label === 'venue_a')!.slug).toBe('kx');
    expect(c.venues.find((v) => v.label === 'venue_b')!.slug).toBe('polymarket');
    expect(loadConfig({ env: { CROSSBOOK_VENUE_NAMES: 'hosted' }, venueNames: 'neutral' }).venues[0]!.slug).toBe('venue_a');
  });

  it('refuses an unknown preset with the known ones named', () => {
    expect(() => loadConfig({ env: { CROSSBOOK_VENUE_NAMES: 'polymarketish' } })).toThrow(
      /unknown venue-name preset "polymarketish" \(known: neutral, hosted\)/,
    );
  });
});

describe('the API under the hosted preset', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await apiHarness({ env: { CROSSBOOK_VENUE_NAMES: 'hosted' } });
    const base = { venue: 'venue_a', timestamp: T, localTimestamp: T } as const;
    h.apply(
      { ...base, type: 'market', marketId: M, title: 'Seattle to win?', status: 'active' },
      { ...base, type: 'book_snapshot', marketId: M, instrument: M, bids: [[4100, 10]], asks: [[4300, 5]] },
    );
  });
  afterAll(() => h.close());

  it('speaks kalshi in platform values, filters and the venue_a catalog path', async () => {
    const all = await h.get('/markets?platform=kalshi');
    expect(all.status).toBe(200);
    expect(all.body.markets.map((m: { platform: string; market_id: string }) => [m.platform, m.market_id])).toEqual([['kalshi', M]]);
    expect((await h.get('/markets?platform=venue_a')).status).toBe(400);
    const ob = await h.get(`/orderbook?platform=kalshi&market_id=${M}`);
    expect(ob.status).toBe(200);
    expect((await h.get(`/kalshi/markets/${M}`)).status).toBe(200);
  });
});
