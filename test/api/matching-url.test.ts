import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerMatching } from '../../src/api/matching.js';
import type { MarketUpsert } from '../../src/core/types.js';
import { MatchingService } from '../../src/matching/service.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { apiHarness, type ApiHarness } from './harness.js';

/**
 * GET /matching-markets/url resolves a market page URL by the URL grammar of the venue's protocol
 * (spec 4.3). `_meta.resolved` lists the markets the URL named, whether or not they are matched.
 * Ids follow each venue's real form: Kalshi tickers, Polymarket slugs, PredictIt numeric ids.
 */
let h: ApiHarness;
let matching: MatchingService;
const T = Date.now();
const market = (venue: string, marketId: string, more: Partial<MarketUpsert> = {}): MarketUpsert => ({
  type: 'market',
  venue,
  marketId,
  title: `market ${marketId}`,
  status: 'active',
  timestamp: T,
  localTimestamp: T,
  ...more,
});

beforeAll(async () => {
  h = await apiHarness();
  h.apply(
    market('venue_a', 'KXNFLGAME-26DEC09NESEA-NE', { eventId: 'KXNFLGAME-26DEC09NESEA', seriesId: 'KXNFLGAME' }),
    market('venue_a', 'KXNFLGAME-26DEC09NESEA-SEA', { eventId: 'KXNFLGAME-26DEC09NESEA', seriesId: 'KXNFLGAME' }),
    market('venue_b', '0xabc1', { extra: { slug: 'nfl-ne-sea-2026-12-09', eventSlug: 'nfl-week-14' } }),
    market('venue_b', '0xabc2', { extra: { slug: 'nfl-ne-sea-2026-12-09-spread', eventSlug: 'nfl-week-14' } }),
    market('venue_c', '30001', { eventId: '8000' }),
    market('venue_c', '30002', { eventId: '8000' }),
    market('venue_h', 'venue_h_OUT1'),
  );
  matching = new MatchingService(h.state, new VenueDirectory(h.config), h.persistence.db('groups'));
  registerMatching(h.api, h.ctx, matching);
});
afterAll(async () => {
  matching.close();
  await h.close();
});

const resolve = async (url: string): Promise<{ status: number; platform?: string; resolved?: string[]; error?: string }> => {
  const r = await h.get(`/matching-markets/url?url=${encodeURIComponent(url)}`);
  return r.status === 200 ? { status: 200, platform: r.body._meta.platform, resolved: r.body._meta.resolved } : { status: r.status, error: r.body.error };
};

describe('GET /matching-markets/url: each protocol reads its own page URLs', () => {
  it('venue_a (kalshi.com/markets/<series>/<slug>/<ticker>): market ticker, else event ticker, else series', async () => {
    expect(await resolve('https://kalshi.com/markets/kxnflgame/nfl-game/kxnflgame-26dec09nesea-ne')).toEqual({
      status: 200,
      platform: 'venue_a',
      resolved: ['KXNFLGAME-26DEC09NESEA-NE'],
    });
    expect((await resolve('https://www.kalshi.com/markets/kxnflgame/nfl-game/kxnflgame-26dec09nesea')).resolved).toEqual([
      'KXNFLGAME-26DEC09NESEA-NE',
      'KXNFLGAME-26DEC09NESEA-SEA',
    ]);
    expect((await resolve('https://kalshi.com/markets/kxnflgame')).resolved).toEqual(['KXNFLGAME-26DEC09NESEA-NE', 'KXNFLGAME-26DEC09NESEA-SEA']);
    // A series ticker deeper in the path is not a series page.
    expect((await resolve('https://kalshi.com/markets/x/y/kxnflgame')).status).toBe(400);
  });

  it('venue_b (polymarket.com/event/<event slug>[/<market slug>], /market/<slug>): market slug, else event slug', async () => {
    expect(await resolve('https://polymarket.com/event/nfl-week-14/nfl-ne-sea-2026-12-09-spread')).toEqual({
      status: 200,
      platform: 'venue_b',
      resolved: ['0xabc2'],
    });
    expect((await resolve('https://polymarket.com/event/nfl-week-14')).resolved).toEqual(['0xabc1', '0xabc2']);
    expect((await resolve('https://polymarket.com/market/nfl-ne-sea-2026-12-09')).resolved).toEqual(['0xabc1']);
    expect((await resolve('https://polymarket.com/event/nfl-week-14/no-such-market')).resolved).toEqual(['0xabc1', '0xabc2']);
    expect((await resolve('https://polymarket.com/event/nfl-ne-sea-2026-12-09')).resolved).toEqual(['0xabc1']);
  });

  it('venue_c (predictit.org/markets/detail/<id>[/<name>]): every contract of the market, or the contract', async () => {
    expect(await resolve('https://www.predictit.org/markets/detail/8000/Who-will-win')).toEqual({
      status: 200,
      platform: 'venue_c',
      resolved: ['30001', '30002'],
    });
    expect((await resolve('https://www.predictit.org/markets/detail/30002')).resolved).toEqual(['30002']);
    expect((await resolve('https://www.predictit.org/markets/8000')).resolved).toEqual(['30001', '30002']);
  });

  it('a protocol without a grammar of its own: the last segment is the market id, deep links included', async () => {
    expect(await resolve('https://venue-h.example/outcome/OUT1')).toEqual({ status: 200, platform: 'venue_h', resolved: ['venue_h_OUT1'] });
    expect((await resolve('venueh://outcome/OUT1')).resolved).toEqual(['venue_h_OUT1']);
  });

  it('answers 400 naming the venue when the URL names no market it knows', async () => {
    const r = await resolve('https://kalshi.com/markets/kxnope/x/kxnope-1');
    expect(r.status).toBe(400);
    expect(r.error).toMatch(/no venue_a market found/);
    expect((await resolve('https://www.predictit.org/markets/detail/')).status).toBe(400);
  });
});
