import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { MarketUpsert } from '../../src/core/types.js';
import { MarketCatalog, keptExtra, marketKey, storedMarket } from '../../src/state/catalog.js';

const up = (marketId: string, over: Partial<MarketUpsert> = {}): MarketUpsert => ({
  type: 'market',
  venue: 'venue_a',
  timestamp: 1,
  localTimestamp: 1,
  marketId,
  title: `${marketId}?`,
  status: 'active',
  eventTitle: 'Lakers at Celtics',
  category: 'Sports',
  tags: ['Sports', 'NBA'],
  ...over,
});

describe('market catalog: shared values', () => {
  it('keeps one tags list for the markets of an event, and the values each upsert gave', () => {
    const c = new MarketCatalog();
    const a = c.upsert(up('A'))!;
    const b = c.upsert(up('B', { tags: ['Sports', 'NBA'].slice() }))!;
    expect(b.tags).toBe(a.tags);
    expect(b.tags).toEqual(['Sports', 'NBA']);
    expect([a.eventTitle, b.eventTitle, b.category]).toEqual(['Lakers at Celtics', 'Lakers at Celtics', 'Sports']);
    const other = c.upsert(up('C', { tags: ['Sports', 'NHL'], eventTitle: 'Bruins at Rangers' }))!;
    expect(other.tags).toEqual(['Sports', 'NHL']);
    expect(other.eventTitle).toBe('Bruins at Rangers');
  });

  it('an update replaces a shared value of one market only', () => {
    const c = new MarketCatalog();
    const a = c.upsert(up('A'))!;
    const b = c.upsert(up('B'))!;
    expect(c.upsert(up('B', { tags: ['Sports'], eventTitle: 'Lakers at Celtics (Game 2)', timestamp: 2, localTimestamp: 2 }))).toBe(b);
    expect(b.tags).toEqual(['Sports']);
    expect(b.eventTitle).toBe('Lakers at Celtics (Game 2)');
    expect(a.tags).toEqual(['Sports', 'NBA']);
    expect(a.eventTitle).toBe('Lakers at Celtics');
    expect(c.upsert(up('A'))).toBeUndefined();
  });

  it('restores a persisted record with the same sharing', () => {
    const c = new MarketCatalog();
    const a = c.upsert(up('A'))!;
    c.restore({ ...a, marketId: 'R', tags: ['Sports', 'NBA'] });
    expect(c.get('venue_a', 'R')!.tags).toBe(a.tags);
  });

  it('keeps every value and key order of extra, frozen or not, while sharing its strings', () => {
    const c = new MarketCatalog();
    const rules = 'If the Lakers win, the market resolves to Yes.';
    const frozen = Object.freeze({ close_time: '2026-11-24T03:00:00Z', rules_primary: rules, n: 3, long: 'x'.repeat(40) });
    const a = c.upsert(up('A', { extra: frozen, outcome: 'Lakers' }))!;
    const b = c.upsert(up('B', { extra: { close_time: '2026-11-24T03:00:00Z', rules_primary: `${rules}` }, outcome: 'Lakers' }))!;
    expect(JSON.stringify(a.extra)).toBe(JSON.stringify(frozen));
    expect(Object.isFrozen(frozen) && frozen.close_time === '2026-11-24T03:00:00Z').toBe(true);
    expect(b.extra).toEqual({ close_time: '2026-11-24T03:00:00Z', rules_primary: rules });
    expect([a.outcome, b.outcome]).toEqual(['Lakers', 'Lakers']);
    expect(c.upsert(up('B', { extra: { close_time: '2026-11-24T03:00:00Z', rules_primary: rules }, outcome: 'Lakers' }))).toBeUndefined();
  });
});

describe('market catalog: lookup and order', () => {
  it('finds a record by its key, its venue and id, and only there', () => {
    const c = new MarketCatalog();
    const a = c.upsert(up('KX:2026:A'))!;
    const b = c.upsert(up('A', { venue: 'venue_b' }))!;
    expect(c.byKey('venue_a:KX:2026:A')).toBe(a);
    expect(c.byKey(marketKey('venue_b', 'A'))).toBe(b);
    expect(c.get('venue_b', 'A')).toBe(b);
    expect([c.byKey('venue_a:A'), c.byKey('venue_c:A'), c.byKey('venue_a'), c.byKey('')]).toEqual([undefined, undefined, undefined, undefined]);
    expect(c.size).toBe(2);
  });

  it('lists every market in the order first seen, across venues; a restore over a known market keeps its place', () => {
    const c = new MarketCatalog();
    c.upsert(up('A'));
    c.upsert(up('B', { venue: 'venue_b' }));
    c.upsert(up('C'));
    const b = c.get('venue_b', 'B')!;
    c.restore({ ...b, title: 'B again' });
    c.upsert(up('A', { title: 'A renamed', timestamp: 2, localTimestamp: 2 }));
    expect([...c.all()].map((m) => `${m.venue}:${m.marketId}:${m.title}`)).toEqual(['venue_a:A:A renamed', 'venue_b:B:B again', 'venue_a:C:C?']);
    expect(c.size).toBe(3);
    expect(c.byKey('venue_b:B')!.title).toBe('B again');
  });
});

describe('market catalog: records', () => {
  it('holds the fields an upsert gave, and serializes only those, whichever fields a market has', () => {
    const c = new MarketCatalog();
    const sparse = c.upsert(up('A', { eventTitle: undefined, category: undefined, tags: undefined }))!;
    const full = c.upsert(up('B', { openTime: 5, closeTime: 1_790_000_000_123, volume: 12.5, yesInstrument: 'B', noInstrument: 'B-NO', extra: { k: 1 } }))!;
    expect(JSON.parse(JSON.stringify(sparse))).toEqual({
      venue: 'venue_a',
      marketId: 'A',
      title: 'A?',
      status: 'active',
      firstSeenAt: 1,
      recordedAt: 1,
      updatedAt: 1,
    });
    expect([full.openTime, full.closeTime, full.volume, full.yesInstrument, full.noInstrument, full.extra]).toEqual([
      5,
      1_790_000_000_123,
      12.5,
      'B',
      'B-NO',
      { k: 1 },
    ]);
    expect(c.upsert(up('A', { volume: 7, timestamp: 3, localTimestamp: 3 }))).toBe(sparse);
    expect([sparse.volume, sparse.updatedAt, sparse.firstSeenAt]).toEqual([7, 3, 1]);
  });

  it('keeps a copy of extra with its keys in order, and the same copy across updates of other fields', () => {
    const c = new MarketCatalog();
    const wire: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++) wire[`k${i}`] = i % 2 ? `v${i}` : i;
    const a = c.upsert(up('A', { extra: wire }))!;
    const kept = a.extra;
    expect(kept).not.toBe(wire);
    expect(JSON.stringify(kept)).toBe(JSON.stringify(wire));
    wire['k0'] = 'changed on the wire object';
    expect(kept!['k0']).toBe(0);
    c.upsert(up('A', { title: 'renamed', timestamp: 2, localTimestamp: 2 }));
    expect(a.extra).toBe(kept);
    c.upsert(up('A', { extra: { k0: 1 }, timestamp: 3, localTimestamp: 3 }));
    expect(a.extra).toEqual({ k0: 1 });
  });

  it('copies extra values JSON would change as they are, and keeps the arrays it was given', () => {
    const c = new MarketCatalog();
    const outcomes = ['Yes', 'No'];
    const odd = { a: undefined, b: NaN, c: { d: 1 }, e: -0, f: 'x' };
    const a = c.upsert(up('A', { extra: { outcomes, n: 1.5, ok: true, none: null } }))!;
    const b = c.upsert(up('B', { extra: odd }))!;
    expect(a.extra).toEqual({ outcomes: ['Yes', 'No'], n: 1.5, ok: true, none: null });
    expect(a.extra!['outcomes']).toBe(outcomes);
    expect(Object.keys(b.extra!)).toEqual(['a', 'b', 'c', 'e', 'f']);
    expect([Number.isNaN(b.extra!['b']), Object.is(b.extra!['e'], -0), b.extra!['c']]).toEqual([true, true, odd.c]);
  });

  it('restores a stored record into a record of its own, times included', () => {
    const c = new MarketCatalog();
    const stored = { ...up('S', { closeTime: 9 }), firstSeenAt: 10, recordedAt: 20, updatedAt: 30 };
    c.restore(stored);
    const r = c.get('venue_a', 'S')!;
    expect(r).not.toBe(stored);
    expect([r.title, r.closeTime, r.firstSeenAt, r.recordedAt, r.updatedAt]).toEqual(['S?', 9, 10, 20, 30]);
    stored.title = 'changed after';
    expect(r.title).toBe('S?');
  });
});

describe('market catalog: record lists', () => {
  it('counts records added or replaced, not changes made in place, so a list of its records knows when it is stale', () => {
    const c = new MarketCatalog();
    const a = c.upsert(up('A'))!;
    c.upsert(up('B'));
    expect(c.inserts).toBe(2);
    c.upsert(up('A', { title: 'Renamed?' }));
    expect(c.inserts).toBe(2);
    expect(c.get('venue_a', 'A')).toBe(a);
    c.restore({ ...a, title: 'From a snapshot?' });
    expect(c.inserts).toBe(3);
    expect(c.get('venue_a', 'A')).not.toBe(a);
    expect([...c.all()].map((m) => m.title)).toEqual(['From a snapshot?', 'B?']);
  });
});

describe('market catalog: extra cut to the keys something reads', () => {
  // The registry's venues: venue_b's page URL template names {eventSlug} and {slug}; venue_e's only {marketId}.
  const venues = loadConfig({ env: {} }).venues;
  const poly = (over: Partial<MarketUpsert> = {}): MarketUpsert =>
    up('0xabc', {
      venue: 'venue_b',
      extra: { slug: 'nba-nyk-mia', eventSlug: 'nba-nyk-mia-day', gammaId: '562638', tickSize: 0.01, outcomes: ['Over', 'Under'] },
      ...over,
    });

  it('keeps the keys READ_EXTRA and the venue URL template name, in their order, and every key of a venue it was not told of', () => {
    const c = new MarketCatalog(venues);
    const b = c.upsert(poly())!;
    expect(b.extra).toEqual({ slug: 'nba-nyk-mia', eventSlug: 'nba-nyk-mia-day' });
    const e = c.upsert(
      up('E-1', {
        venue: 'venue_e',
        extra: { live: true, league: 'NBA', futures: false, sport: 'basketball', eventState: 'live', startTime: 1_802_583_000_000 },
      }),
    )!;
    expect(Object.keys(e.extra!)).toEqual(['live', 'league', 'futures']);
    const other = c.upsert(up('X', { venue: 'venue_x', extra: { gammaId: '1', sport: 'golf' } }))!;
    expect(other.extra).toEqual({ gammaId: '1', sport: 'golf' });
    expect(keptExtra('https://x.example/{creator}/{slug}').has('creator')).toBe(true);
  });

  it('still counts an upsert that changes only a key it left out, and not one that changes nothing', () => {
    const c = new MarketCatalog(venues);
    const b = c.upsert(poly())!;
    const kept = b.extra;
    expect(c.upsert(poly({ timestamp: 2, localTimestamp: 2 }))).toBeUndefined();
    expect(b.updatedAt).toBe(1);
    const base = poly({ timestamp: 3, localTimestamp: 3 });
    const tick = { ...base, extra: { ...base.extra, tickSize: 0.001 } };
    expect(c.upsert(tick)).toBe(b);
    expect(b.updatedAt).toBe(3);
    expect(b.extra).toBe(kept);
    expect(c.upsert({ ...tick, localTimestamp: 4 })).toBeUndefined();
  });

  it('restores a record stored with every key as the cut one, knowing what was left out; one stored cut takes the next upsert as it is', () => {
    const c = new MarketCatalog(venues);
    const full = poly();
    c.restore({ ...full, extra: full.extra, firstSeenAt: 1, recordedAt: 1, updatedAt: 1 });
    const r = c.get('venue_b', '0xabc')!;
    expect(r.extra).toEqual({ slug: 'nba-nyk-mia', eventSlug: 'nba-nyk-mia-day' });
    expect(c.upsert(poly({ localTimestamp: 2 }))).toBeUndefined();
    const base = poly({ localTimestamp: 3 });
    const tick = { ...base, extra: { ...base.extra, tickSize: 0.001 } };
    expect(c.upsert(tick)).toBe(r);

    const d = new MarketCatalog(venues);
    d.restore({ ...storedMarket(r), marketId: '0xdef' });
    const s = d.get('venue_b', '0xdef')!;
    expect(d.upsert({ ...tick, marketId: '0xdef', localTimestamp: 5 })).toBeUndefined();
    expect(s.updatedAt).toBe(3);
    expect(d.upsert({ ...poly({ marketId: '0xdef', localTimestamp: 6 }) })).toBe(s);
    expect(Object.keys(storedMarket(s))).not.toContain('dropped');
  });
});

describe('market catalog: a URL the venue template gives again is not held', () => {
  const venues = loadConfig({ env: {} }).venues;
  const pageUrl = 'https://polymarket.com/event/nba-nyk-mia-day/nba-nyk-mia';
  const poly = (over: Partial<MarketUpsert> = {}): MarketUpsert =>
    up('0xabc', { venue: 'venue_b', url: pageUrl, extra: { slug: 'nba-nyk-mia', eventSlug: 'nba-nyk-mia-day' }, ...over });

  it('leaves out a url the template fills the same from the record, keeps one it does not, and merges as before', () => {
    const c = new MarketCatalog(venues);
    const b = c.upsert(poly())!;
    expect(b.url).toBeUndefined();
    expect(c.upsert(poly({ localTimestamp: 2 }))).toBeUndefined();
    // Another URL than the template's is held as sent.
    const odd = c.upsert(poly({ marketId: '0xdef', url: 'https://polymarket.com/market/nba-nyk-mia' }))!;
    expect(odd.url).toBe('https://polymarket.com/market/nba-nyk-mia');
    // An upsert with new slugs and no url keeps the URL the record showed (as a field not sent keeps its value) ...
    const moved = c.upsert(poly({ url: undefined, extra: { slug: 'nba-nyk-mia-2', eventSlug: 'nba-nyk-mia-day' }, localTimestamp: 3 }))!;
    expect(moved).toBe(b);
    expect(b.url).toBe(pageUrl);
    // ... and one whose url is the template's again leaves it out.
    expect(
      c.upsert(
        poly({
          url: 'https://polymarket.com/event/nba-nyk-mia-day/nba-nyk-mia-2',
          extra: { slug: 'nba-nyk-mia-2', eventSlug: 'nba-nyk-mia-day' },
          localTimestamp: 4,
        }),
      ),
    ).toBe(b);
    expect(b.url).toBeUndefined();
    expect(storedMarket(b)).not.toHaveProperty('url');
  });

  it('restores a record stored with its url as one without, and a venue it was not told of keeps its url', () => {
    const c = new MarketCatalog(venues);
    c.restore({ ...poly(), firstSeenAt: 1, recordedAt: 1, updatedAt: 1 });
    expect(c.get('venue_b', '0xabc')!.url).toBeUndefined();
    expect(new MarketCatalog().upsert(poly())!.url).toBe(pageUrl);
  });
});
