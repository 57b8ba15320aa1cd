import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKalshiMapper } from '../../src/venues/kalshi/mappers.js';
import { apiHarness, type ApiHarness } from './harness.js';

/** The venue_a catalog endpoints over real recorded Kalshi REST payloads, through the real mapper. */
const fx = (p: string): unknown => JSON.parse(readFileSync(join(__dirname, '../fixtures/kalshi', p), 'utf8'));
let h: ApiHarness;
let since: number;

function load(target: ApiHarness): void {
  const venue = target.config.venues.find((v) => v.protocol === 'kalshi')!;
  const mapper = createKalshiMapper(venue);
  const now = Date.now();
  for (const doc of [fx('rest_series_subset_2026-09-13.json'), fx('rest_event_with_nested_markets_KXELONMARS-99_2026-09-13.json')])
    target.apply(...mapper.map(doc, now - 60_000));
  target.apply(...mapper.map(fx('rest_markets_page_first2_2026-09-13.json'), now));
}

beforeAll(async () => {
  h = await apiHarness();
  load(h);
  since = Date.now() - 30_000;
});
afterAll(() => h.close());

describe('GET /venue_a/markets (spec 4.20, 2.11)', () => {
  it('serves the catalog with fixed-point strings, the response status vocabulary and live prices', async () => {
    const r = await h.get('/venue_a/markets?limit=1000');
    expect(r.status).toBe(200);
    const byTicker = Object.fromEntries(r.body.markets.map((m: { ticker: string }) => [m.ticker, m]));
    expect(Object.keys(byTicker).sort()).toEqual(['KXELONMARS-99', 'KXTTELITEMATCH-26SEP131110GSARAD-GSA', 'KXTTELITEMATCH-26SEP131110GSARAD-RAD']);
    const elon = byTicker['KXELONMARS-99'];
    expect(elon).toMatchObject({ event_ticker: 'KXELONMARS-99', series_ticker: 'KXELONMARS', category: 'Politics', status: 'active' });
    expect(typeof elon.volume_fp).toBe('string');
    expect(elon.first_seen_at).toMatch(/Z$/);
    // a series not in the series catalog: no category/tags (spec 2.11)
    expect(byTicker['KXTTELITEMATCH-26SEP131110GSARAD-RAD']).not.toHaveProperty('category');
    expect(r.body.cursor).toBeNull();
  });

  it('status=open reads active; filters by event, series, tickers and close window', async () => {
    expect((await h.get('/venue_a/markets?status=open')).body.markets.every((m: { status: string }) => m.status === 'active')).toBe(true);
    expect((await h.get('/venue_a/markets?status=settled')).body.markets).toEqual([]);
    expect((await h.get('/venue_a/markets?series_ticker=KXELONMARS')).body.markets).toHaveLength(1);
    expect((await h.get('/venue_a/markets?event_ticker=KXTTELITEMATCH-26SEP131110GSARAD')).body.markets).toHaveLength(2);
    expect((await h.get('/venue_a/markets?tickers=KXELONMARS-99,NOPE')).body.markets).toHaveLength(1);
    const close = Date.parse('2026-09-20T15:10:00Z') / 1000;
    expect((await h.get(`/venue_a/markets?min_close_ts=${close}&max_close_ts=${close}`)).body.markets).toHaveLength(2);
  });

  it('pages by cursor until null', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: { body: { markets: { ticker: string }[]; cursor: string | null } } = await h.get(`/venue_a/markets?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...r.body.markets.map((m) => m.ticker));
      cursor = r.body.cursor;
    } while (cursor);
    expect(seen).toHaveLength(3);
  });

  it('category filter scans catalog pages and reports pages_scanned; invalid categories list the accepted ones', async () => {
    const r = await h.get('/venue_a/markets?category=politics&limit=1');
    expect(r.body._meta.pages_scanned).toBeGreaterThanOrEqual(1);
    expect(r.body.markets.map((m: { ticker: string }) => m.ticker)).toEqual(['KXELONMARS-99']);
    const bad = await h.get('/venue_a/markets?category=Weather');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/accepted: .*Politics/);
  });

  it('delta mode: oldest first, watermark, frozen while degraded, rejected combinations', async () => {
    const r = await h.get(`/venue_a/markets?created_since=${Math.floor(since / 1000)}`);
    expect(r.status).toBe(200);
    expect(r.body.markets.map((m: { ticker: string }) => m.ticker).sort()).toEqual([
      'KXTTELITEMATCH-26SEP131110GSARAD-GSA',
      'KXTTELITEMATCH-26SEP131110GSARAD-RAD',
    ]);
    // no live venue_a feed in this harness: delta serving is degraded and the watermark stays put
    expect(r.body._meta).toMatchObject({ degraded: true, omitted_tickers: [] });
    expect(Date.parse(r.body._meta.watermark)).toBe(Math.floor(since / 1000) * 1000);
    h.state.health.feed({ type: 'feed', venue: 'venue_a', state: 'catalog', timestamp: Date.now(), localTimestamp: Date.now() });
    const ok = await h.get(`/venue_a/markets?created_since=${new Date(since).toISOString()}`);
    expect(ok.body._meta.degraded).toBeUndefined();
    expect(Date.parse(ok.body._meta.watermark)).toBeGreaterThan(since - 5_000);
    for (const qs of ['tickers=X', 'event_ticker=X', 'series_ticker=X', 'min_close_ts=1', 'max_close_ts=1', 'include_combos=true'])
      expect((await h.get(`/venue_a/markets?created_since=${Math.floor(since / 1000)}&${qs}`)).status, qs).toBe(400);
  });

  it('400 for comma-separated status, unknown status and bad flags', async () => {
    for (const qs of [
      'status=open,closed',
      'status=active',
      'status=resolved',
      'include_combos=maybe',
      'include_combos=1',
      'limit=0',
      'created_since=soon',
      'created_since=2026-02-30T00:00:00Z',
      'cursor=@@',
    ])
      expect((await h.get(`/venue_a/markets?${qs}`)).status, qs).toBe(400);
  });
});

describe('GET /venue_a/markets/{ticker} and /venue_a/series', () => {
  it('serves one market with its rules, and not_found for unknown or event tickers', async () => {
    const r = await h.get('/venue_a/markets/KXELONMARS-99');
    expect(r.status).toBe(200);
    expect(r.body.market.rules.primary).toMatch(/\S/);
    const nf = await h.get('/venue_a/markets/KXTTELITEMATCH-26SEP131110GSARAD');
    expect(nf.status).toBe(404);
    expect(nf.body).toMatchObject({ success: false, code: 'not_found' });
  });

  it('lists series of a category (case-insensitive) and rejects a missing or unknown one', async () => {
    const r = await h.get('/venue_a/series?category=POLITICS');
    expect(r.body.series).toEqual([{ ticker: 'KXELONMARS', title: expect.any(String), tags: expect.any(Array), frequency: 'custom', category: 'Politics' }]);
    expect((await h.get('/venue_a/series')).status).toBe(400);
    expect((await h.get('/venue_a/series?category=Nope')).status).toBe(400);
  });
});

describe("the venue_a market record: the venue's own fields", () => {
  it('serves each field it names from what the venue sent (times, fixed-point strings, rules, combo, settlement) after the catalog cut its extra', async () => {
    const r = await apiHarness();
    try {
      load(r);
      const page = fx('rest_markets_page_first2_2026-09-13.json') as { markets: Record<string, unknown>[] };
      const listed = (await r.get('/venue_a/markets?limit=1000&include=rules')).body.markets as Record<string, unknown>[];
      for (const m of page.markets) {
        const got = listed.find((x) => x['ticker'] === m['ticker'])!;
        expect(got, String(m['ticker'])).toMatchObject({
          created_time: m['created_time'],
          open_time: m['open_time'],
          close_time: m['close_time'],
          expiration_time: m['expiration_time'],
          updated_time: m['updated_time'],
          volume_fp: m['volume_fp'],
          open_interest_fp: m['open_interest_fp'],
          rules: { primary: m['rules_primary'], secondary: m['rules_secondary'] },
          is_combo: false,
        });
      }
      // The first recorded market again as a settled leg of a multivariate collection (a copy of the real payload
      // with the fields such a market carries set by hand): what no recorded market here has.
      const leg = {
        ...page.markets[0],
        ticker: `${String(page.markets[0]!['ticker'])}-LEG`,
        status: 'finalized',
        result: 'yes',
        mve_collection_ticker: 'KXMVESPORTSMULTIGAMEEXTENDED-R',
        settlement_ts: '2026-09-20T16:02:11.123456Z',
        settlement_value_dollars: '1.0000',
        volume: 12,
        open_interest: 3,
      };
      const venue = r.config.venues.find((v) => v.protocol === 'kalshi')!;
      r.apply(...createKalshiMapper(venue).map({ markets: [leg], cursor: '' }, Date.now()));
      expect((await r.get(`/venue_a/markets?tickers=${leg.ticker}`)).body.markets).toEqual([]);
      const combo = (await r.get(`/venue_a/markets?tickers=${leg.ticker}&include_combos=true`)).body.markets[0];
      expect(combo).toMatchObject({ is_combo: true, settlement_ts: leg.settlement_ts, settlement_value_dollars: '1.0000', volume: 12, open_interest: 3 });
      expect((await r.get('/venue_a/series?category=Politics')).body.series[0].frequency).toBe('custom');
    } finally {
      await r.close();
    }
  });
});

describe('slugs rename paths and parameters', () => {
  it('serves the catalog under a renamed slug and /markets?platform= with it', async () => {
    const r = await apiHarness({ venueOverrides: { venue_a: { slug: 'kalshi' } } });
    try {
      load(r);
      expect((await r.get('/kalshi/markets')).status).toBe(200);
      expect((await r.get('/venue_a/markets')).status).toBe(404);
      expect((await r.get('/markets?platform=kalshi&status=all')).body.markets.length).toBe(3);
      expect((await r.get('/markets?platform=venue_a')).status).toBe(400);
      expect((await r.get('/markets?platform=kalshi&limit=1')).body.markets[0].platform).toBe('kalshi');
    } finally {
      await r.close();
    }
  });
});

describe('venue_a series catalog membership (spec 2.11)', () => {
  it('a market whose series is not in the series catalog has no category and is excluded under a category filter, even when its event has one', async () => {
    const own = await apiHarness();
    load(own);
    const venue = own.config.venues.find((v) => v.protocol === 'kalshi')!;
    const t = Date.now();
    own.apply({
      type: 'market',
      venue: venue.label,
      marketId: 'KXNOSERIES-26-YES',
      title: 'Will the unlisted series resolve Yes?',
      status: 'active',
      seriesId: 'KXNOSERIES',
      eventId: 'KXNOSERIES-26',
      category: 'Politics',
      timestamp: t,
      localTimestamp: t,
    });
    const all = await own.get('/venue_a/markets?tickers=KXNOSERIES-26-YES');
    expect(all.body.markets).toHaveLength(1);
    expect(all.body.markets[0]).not.toHaveProperty('category');
    expect(all.body.markets[0]).not.toHaveProperty('tags');
    const filtered = await own.get('/venue_a/markets?category=Politics&limit=1000');
    expect(filtered.body.markets.map((m: { ticker: string }) => m.ticker)).toEqual(['KXELONMARS-99']);
    const series = await own.get('/venue_a/series?category=Politics');
    expect(series.body.series.map((x: { ticker: string }) => x.ticker)).toEqual(['KXELONMARS']);
    await own.close();
  });
});
