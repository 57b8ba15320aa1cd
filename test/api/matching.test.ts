import type { Subscription } from 'rxjs';
import { matchingFlow } from '../../pipelines/signals.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerMatching } from '../../src/api/matching.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { MatchingService } from '../../src/matching/service.js';
import { apiHarness, type ApiHarness } from './harness.js';

/**
 * The matching endpoints over real market titles (from test/fixtures/matching/dev-pairs.json:
 * the NE at SEA 2026 opener as Kalshi and Polymarket list it), plus a venue_h listing of the same
 * side and a spread listed from the underdog's side (inverted).
 */
let h: ApiHarness;
let matching: MatchingService;
let flow: Subscription;
const T = Date.now();
const e = { timestamp: T, localTimestamp: T };
const close = Date.parse('2026-12-24T05:00:00Z'); // Kalshi game markets close days after the game
const kickoff = Date.parse('2026-12-10T01:20:00Z'); // 8:20 pm ET on Dec 9: Polymarket's end date

beforeAll(async () => {
  h = await apiHarness();
  const evs: NormalizedEvent[] = [
    {
      ...e,
      venue: 'venue_a',
      type: 'market',
      marketId: 'KXNFLGAME-26DEC09NESEA-NE',
      eventId: 'KXNFLGAME-26DEC09NESEA',
      title: 'New England at Seattle Winner?',
      outcome: 'New England',
      status: 'active',
      closeTime: close,
      category: 'Sports',
      tags: ['NFL'],
      url: 'https://kalshi.com/markets/kxnflgame/nfl-game/kxnflgame-26dec09nesea',
    },
    {
      ...e,
      venue: 'venue_b',
      type: 'market',
      marketId: '0xabc1',
      title: 'Patriots vs. Seahawks',
      outcome: 'Patriots',
      eventTitle: 'Patriots vs. Seahawks',
      status: 'active',
      closeTime: kickoff,
      yesInstrument: 'T1',
      noInstrument: 'T2',
      extra: { slug: 'nfl-ne-sea-2026-12-09', eventSlug: 'nfl-ne-sea-2026-12-09' },
    },
    {
      ...e,
      venue: 'venue_a',
      type: 'market',
      marketId: 'KXNFLSPREAD-26DEC09NESEA-SEA2',
      eventId: 'KXNFLSPREAD-26DEC09NESEA',
      title: 'Seattle wins by over 2.5 points?',
      outcome: 'Seattle',
      status: 'active',
      closeTime: close,
      category: 'Sports',
    },
    {
      ...e,
      venue: 'venue_b',
      type: 'market',
      marketId: '0xabc2',
      title: 'Spread: Patriots (+2.5)',
      outcome: 'Patriots',
      eventTitle: 'Patriots vs. Seahawks',
      status: 'active',
      closeTime: kickoff,
      yesInstrument: 'S1',
      noInstrument: 'S2',
      extra: { slug: 'nfl-ne-sea-2026-12-09-spread', eventSlug: 'nfl-ne-sea-2026-12-09' },
    },
    {
      ...e,
      venue: 'venue_a',
      type: 'book_snapshot',
      marketId: 'KXNFLGAME-26DEC09NESEA-NE',
      instrument: 'KXNFLGAME-26DEC09NESEA-NE',
      bids: [[4000, 100]],
      asks: [[4300, 100]],
    },
    { ...e, venue: 'venue_b', type: 'book_snapshot', marketId: '0xabc1', instrument: 'T1', bids: [[4400, 50]], asks: [[4500, 80]] },
    {
      ...e,
      venue: 'venue_a',
      type: 'book_snapshot',
      marketId: 'KXNFLSPREAD-26DEC09NESEA-SEA2',
      instrument: 'KXNFLSPREAD-26DEC09NESEA-SEA2',
      bids: [[3000, 10]],
      asks: [[6000, 10]],
    },
  ];
  h.apply(...evs);
  matching = new MatchingService(h.state, new VenueDirectory(h.config), h.persistence.db('groups'));
  flow = matchingFlow(h.state, matching);
  registerMatching(h.api, h.ctx, matching);
});
afterAll(async () => {
  flow.unsubscribe();
  matching.close();
  await h.close();
});

describe('matching groups', () => {
  it('groups the same game and side across venues, and the underdog spread as inverted', () => {
    const ml = matching.servedGroup(matching.groupIdOf('venue_a', 'KXNFLGAME-26DEC09NESEA-NE')!)!;
    expect(ml.members.map((m) => m.key).sort()).toEqual(['venue_a:KXNFLGAME-26DEC09NESEA-NE', 'venue_b:0xabc1']);
    expect(ml.market_class).toBe('moneyline');
    const sp = matching.servedGroup(matching.groupIdOf('venue_a', 'KXNFLSPREAD-26DEC09NESEA-SEA2')!)!;
    // inversion is relative: exactly one side is the group's complement
    expect(sp.members.map((m) => m.key).sort()).toEqual(['venue_a:KXNFLSPREAD-26DEC09NESEA-SEA2', 'venue_b:0xabc2']);
    expect(sp.members.filter((m) => m.inverted)).toHaveLength(1);
    expect(sp.event_id).toBe(ml.event_id);
  });

  it('tracks the newest price update of a matched market only (/status last_updated, spec 4.1)', () => {
    // Seeded at start from the grouped markets' current prices, not only from later changes.
    expect(matching.lastMatchedPriceAt).toBe(T);
    const later = T + 60_000;
    h.apply({ type: 'quote', venue: 'venue_c', marketId: 'UNMATCHED-1', yesBid: 4000, yesAsk: 4200, timestamp: later, localTimestamp: later });
    expect(matching.lastMatchedPriceAt).toBe(T);
    const m = 'KXNFLGAME-26DEC09NESEA-NE';
    h.apply({
      type: 'book_snapshot',
      venue: 'venue_a',
      marketId: m,
      instrument: m,
      bids: [[4100, 10]],
      asks: [[4300, 10]],
      timestamp: later,
      localTimestamp: later,
    });
    expect(matching.lastMatchedPriceAt).toBe(later);
    // The book the other tests read.
    h.apply({
      type: 'book_snapshot',
      venue: 'venue_a',
      marketId: m,
      instrument: m,
      bids: [[4000, 100]],
      asks: [[4300, 100]],
      timestamp: later,
      localTimestamp: later,
    });
  });

  it('keeps group ids across a restart', () => {
    const id = matching.groupIdOf('venue_a', 'KXNFLGAME-26DEC09NESEA-NE');
    const again = new MatchingService(h.state, new VenueDirectory(h.config), h.persistence.db('groups'));
    expect(again.groupIdOf('venue_a', 'KXNFLGAME-26DEC09NESEA-NE')).toBe(id);
    again.close();
  });
});

describe('GET /matching-markets (spec 4.2)', () => {
  it('finds groups by venue_a ticker, venue_b condition id or slug, and free text', async () => {
    for (const qs of ['venue_a_key=KXNFLGAME-26DEC09NESEA-NE', 'venue_b_key=0xabc1', 'venue_b_key=nfl-ne-sea-2026-12-09', 'q=Seahawks']) {
      const r = await h.get(`/matching-markets?${qs}`);
      expect(r.status, qs).toBe(200);
      const g = r.body.groups.find((x: { market_class: string }) => x.market_class === 'moneyline');
      expect(g, qs).toBeDefined();
      expect(g.markets.map((m: { platform: string }) => m.platform).sort()).toEqual(['venue_a', 'venue_b']);
      expect(g.market_url_venue_a).toMatch(/^https:\/\/kalshi\.com\/markets\//);
      expect(g.markets[0].url).toBeTruthy();
    }
  });

  it('400 unless exactly one of q, venue_b_key, venue_a_key; q 3 to 100 characters', async () => {
    for (const qs of ['', 'q=Seahawks&venue_a_key=X', 'q=ab', `q=${'x'.repeat(101)}`]) expect((await h.get(`/matching-markets?${qs}`)).status, qs).toBe(400);
    expect((await h.get('/matching-markets?venue_a_key=NOPE')).body.groups).toEqual([]);
  });

  it('resolves market page URLs; venue_g pages and unknown hosts are 400', async () => {
    const r = await h.get(`/matching-markets/url?url=${encodeURIComponent('https://kalshi.com/markets/kxnflgame/nfl-game/KXNFLGAME-26DEC09NESEA-NE')}`);
    expect(r.status).toBe(200);
    expect(r.body.groups.length).toBeGreaterThanOrEqual(1);
    const pm = await h.get(`/matching-markets/url?url=${encodeURIComponent('https://polymarket.com/event/nfl-ne-sea-2026-12-09/nfl-ne-sea-2026-12-09')}`);
    expect(pm.body.groups.length).toBeGreaterThanOrEqual(1);
    expect((await h.get(`/matching-markets/url?url=${encodeURIComponent('https://polymarket.us/market/x')}`)).status).toBe(400);
    expect((await h.get(`/matching-markets/url?url=${encodeURIComponent('https://example.com/x')}`)).status).toBe(400);
    expect((await h.get('/matching-markets/url?url=not%20a%20url')).status).toBe(400);
    // Malformed percent-encoding in the URL's own path: the client's error, not a 500.
    const bad = await h.get(`/matching-markets/url?url=${encodeURIComponent('https://kalshi.com/markets/%E0%A4%A')}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/percent-encoding/);
  });
});

describe('GET /events, /search, /unified-orderbook', () => {
  it('lists the game as an event with its groups, or only counts', async () => {
    const r = await h.get('/events?status=all');
    expect(r.status).toBe(200);
    const ev = r.body.events[0];
    expect(ev.group_count).toBeGreaterThanOrEqual(2);
    expect(ev.groups[0].markets.length).toBeGreaterThanOrEqual(2);
    const lite = await h.get('/events?status=all&include_groups=false&types=moneyline');
    expect(lite.body.events[0]).not.toHaveProperty('groups');
    expect(lite.body.events[0].group_count).toBe(1);
    for (const qs of ['status=resolved', 'status=cancelled', 'limit=101', 'include_groups=maybe', 'types=moneyline,parlay', 'date=2026-13-01'])
      expect((await h.get(`/events?${qs}`)).status, qs).toBe(400);
  });

  it('searches with the 20-cent midpoint rule and include_prices', async () => {
    const r = await h.get('/search?q=Seahawks&status=all');
    expect(r.status).toBe(200);
    const groups = r.body.events[0].groups as { market_class: string; markets: { platform: string; last_price: number | null; yes_bid: number | null }[] }[];
    const ml = groups.find((g) => g.market_class === 'moneyline')!;
    expect(ml.markets.find((m) => m.platform === 'venue_a')!.last_price).toBe(41.5);
    const sp = groups.find((g) => g.market_class === 'spread')!;
    expect(sp.markets.find((m) => m.platform === 'venue_a')!.last_price).toBeNull(); // 30/60: wider than 20 cents
    const np = await h.get('/search?q=Seahawks&status=all&include_prices=no');
    expect(np.body.events[0].groups[0].markets[0]).not.toHaveProperty('last_price');
    for (const qs of [
      'q=ab',
      'q=Seahawks&include_prices=maybe',
      'q=Seahawks&status=resolved',
      'q=Seahawks&date_from=2026-02-31',
      'q=Seahawks&date_from=2026-10-01&date_to=2026-09-01',
    ])
      expect((await h.get(`/search?${qs}`)).status, qs).toBe(400);
  });

  it('serves a repeated search from cache only while the prices it shows are unchanged', async () => {
    const price = async (): Promise<number | null> => {
      const r = await h.get('/search?q=Seahawks&status=all');
      const ml = (r.body.events[0].groups as { market_class: string; markets: { platform: string; last_price: number | null }[] }[]).find(
        (g) => g.market_class === 'moneyline',
      )!;
      return ml.markets.find((m) => m.platform === 'venue_a')!.last_price;
    };
    expect(await price()).toBe(41.5);
    expect(await price()).toBe(41.5);
    h.apply({
      ...e,
      venue: 'venue_a',
      type: 'book_delta',
      marketId: 'KXNFLGAME-26DEC09NESEA-NE',
      instrument: 'KXNFLGAME-26DEC09NESEA-NE',
      changes: [['bid', 4200, 5]],
    });
    expect(await price()).toBe(42.5);
    h.apply({
      ...e,
      venue: 'venue_a',
      type: 'book_delta',
      marketId: 'KXNFLGAME-26DEC09NESEA-NE',
      instrument: 'KXNFLGAME-26DEC09NESEA-NE',
      changes: [['bid', 4200, 0]],
    });
    expect(await price()).toBe(41.5);
  });

  it('merges depth across venues in the group’s YES terms', async () => {
    const id = matching.groupIdOf('venue_a', 'KXNFLGAME-26DEC09NESEA-NE')!;
    const r = await h.get(`/unified-orderbook?group_id=${id}`);
    expect(r.status).toBe(200);
    expect(r.body.yes.bids.map((l: { price: number }) => l.price)).toEqual([44, 40]);
    expect(r.body.yes.asks.map((l: { price: number }) => l.price)).toEqual([43, 45]);
    expect(r.body.event.event_id).toBeTruthy();
    expect((await h.get('/unified-orderbook?group_id=999999')).status).toBe(404);
    expect((await h.get('/unified-orderbook?group_id=x')).status).toBe(400);
    expect((await h.get('/unified-orderbook')).status).toBe(400);
  });
});
