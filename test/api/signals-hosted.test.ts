import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arbFlow } from '../../pipelines/signals.js';
import { registerSignals } from '../../src/api/signals.js';
import type { Level, NormalizedEvent } from '../../src/core/types.js';
import { SignalEngine, type GroupSource, type SignalGroup } from '../../src/signals/engine.js';
import { LifecycleTracker } from '../../src/signals/lifecycle/tracker.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { apiHarness, type ApiHarness } from './harness.js';

/**
 * /arb and /ev under the hosted venue names: `platforms` keeps opportunities whose legs are all on
 * the listed venues, and the answer carries the fields clients of the hosted API read.
 */
const T = Date.UTC(2026, 10, 22, 15);
const KX = 'KXNFLGAME-26NOV23NESEA-SEA';
const PM = '0xcond-sea';
const PX = 'prophetx_987';

const group: SignalGroup = {
  groupId: 4,
  title: 'Seattle to win',
  eventDate: '2026-11-23',
  eventType: 'sports',
  members: [
    { venue: 'venue_a', marketId: KX, inverted: false },
    { venue: 'venue_b', marketId: PM, inverted: false },
    { venue: 'venue_h', marketId: PX, inverted: false },
  ],
};
const groups: GroupSource = {
  group: (id) => (id === group.groupId ? group : undefined),
  groupsOfMarket: (venue, marketId) => (group.members.some((m) => m.venue === venue && m.marketId === marketId) ? [group.groupId] : []),
  allGroups: () => [group],
};

let h: ApiHarness;
beforeAll(async () => {
  h = await apiHarness({ env: { CROSSBOOK_VENUE_NAMES: 'hosted' } });
  const engine = new SignalEngine(h.state, new VenueDirectory(h.config), groups, new LifecycleTracker(undefined));
  arbFlow(h.state, engine);
  registerSignals(h.api, h.ctx, engine);
  const ev = (venue: string, e: Record<string, unknown>): NormalizedEvent => ({ venue, timestamp: T, localTimestamp: T, ...e }) as NormalizedEvent;
  const book = (venue: string, id: string, bids: Level[], asks: Level[]): NormalizedEvent =>
    ev(venue, { type: 'book_snapshot', marketId: id, instrument: id, bids, asks });
  for (const m of group.members) h.apply(ev(m.venue, { type: 'market', marketId: m.marketId, title: `Seattle (${m.venue})`, status: 'active' }));
  // kalshi YES 40, polymarket NO 50 (YES bid 50), prophetx NO 45 (YES bid 55): kalshi–polymarket and
  // kalshi–prophetx pay; the consensus of the two others prices each venue for EV.
  h.apply(
    book('venue_a', KX, [[3800, 100]], [[4000, 100]]),
    book('venue_b', PM, [[5000, 100]], [[5200, 100]]),
    book('venue_h', PX, [[5500, 100]], [[5700, 100]]),
  );
});
afterAll(() => h.close());

type Leg = { platform: string; source: string; source_url: string | null; liquidity_usd: number; fee_usd: number; side: string; price: number };
type Arb = {
  group_id: number;
  group_title: string;
  event_date: string;
  event_type: string;
  roi_pct: number;
  total_cost: number;
  max_wager_usd: number;
  detected_at: string;
  legs: Leg[];
};

describe('/arb under the hosted names', () => {
  it('answers as_of, delay_seconds and count, and every opportunity with the hosted names', async () => {
    const r = await h.get('/arb?limit=100');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ delay_seconds: 0, count: r.body.opportunities.length, as_of: expect.any(String) });
    expect(Date.parse(r.body.as_of)).not.toBeNaN();
    const opps = r.body.opportunities as Arb[];
    expect(opps.map((o) => o.legs.map((l) => l.platform).join('+')).sort()).toEqual(['kalshi+polymarket', 'kalshi+prophetx', 'polymarket+prophetx']);
    for (const o of opps) {
      expect(o).toMatchObject({ group_id: 4, group_title: 'Seattle to win', event_date: '2026-11-23', event_type: 'sports' });
      expect(typeof o.group_id).toBe('number');
      expect(o.roi_pct).toBeGreaterThan(0);
      expect(o.max_wager_usd).toBe(o.total_cost);
      expect(Date.parse(o.detected_at)).not.toBeNaN();
      for (const l of o.legs) {
        expect(l.source).toBe(l.platform);
        expect(l.liquidity_usd).toBeGreaterThan(0);
        expect(typeof l.fee_usd).toBe('number');
      }
    }
    // prophetx has no URL on its record: the venue's template
    const px = opps.flatMap((o) => o.legs).find((l) => l.platform === 'prophetx')!;
    expect(px.source_url).toBe('https://venue-h.example/outcome/987');
  });

  it('gives distinct opportunities of one group distinct detected_at, so a client keying on arb-<group_id>-<detected_at> sees each', async () => {
    const opps = (await h.get('/arb?limit=100')).body.opportunities as Arb[];
    // three pairs of one group, all first computed in the same recompute
    expect(opps).toHaveLength(3);
    const keys = opps.map((o) => `arb-${o.group_id}-${o.detected_at}`);
    expect(new Set(keys).size).toBe(opps.length);
    // each still reads back as the millisecond it was detected in
    const ms = opps.map((o) => Date.parse(o.detected_at));
    expect(ms.every((t) => !Number.isNaN(t) && t === ms[0])).toBe(true);
    // and keeps it while it lives: a second read gives the same keys
    const again = ((await h.get('/arb?limit=100')).body.opportunities as Arb[]).map((o) => `arb-${o.group_id}-${o.detected_at}`);
    expect(again.sort()).toEqual([...keys].sort());
  });

  it('keeps only opportunities whose legs are all on the listed platforms', async () => {
    const r = await h.get('/arb?platforms=kalshi,polymarket');
    expect(r.status).toBe(200);
    expect((r.body.opportunities as Arb[]).map((o) => o.legs.map((l) => l.platform))).toEqual([['kalshi', 'polymarket']]);
    expect(r.body.count).toBe(1);
    expect((await h.get('/arb?platforms=polymarket,prophetx')).body.opportunities.map((o: Arb) => o.legs.map((l) => l.platform))).toEqual([
      ['polymarket', 'prophetx'],
    ]);
    expect((await h.get('/arb?platforms=polymarket')).body.opportunities).toEqual([]);
  });

  it('refuses the neutral labels and unknown platforms with a 400 that names the parameter', async () => {
    for (const q of ['platforms=venue_a', 'platforms=kalshi,nope']) {
      const r = await h.get(`/arb?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body).toMatchObject({ success: false, error: expect.stringContaining('platforms') });
    }
  });
});

describe('/ev under the hosted names', () => {
  it('answers consensus_probability, roi_pct and ev_usd_per_dollar, and filters on all legs', async () => {
    const r = await h.get('/ev?limit=100');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ delay_seconds: 0, count: r.body.opportunities.length });
    expect(r.body.opportunities.length).toBeGreaterThan(0);
    for (const o of r.body.opportunities) {
      expect(o).toMatchObject({ group_id: 4, group_title: 'Seattle to win', event_date: '2026-11-23', detected_at: expect.any(String) });
      expect(o.consensus_probability).toBeGreaterThan(0);
      expect(o.consensus_probability).toBeLessThan(1);
      const [l] = o.legs;
      expect(l).toMatchObject({ platform: expect.any(String), market_id: expect.any(String), side: expect.stringMatching(/^(yes|no)$/), roi_pct: o.roi_pct });
      expect(l.ev_usd_per_dollar).toBeCloseTo(l.roi_pct / 100, 5);
      // only prophetx's URL template is complete without the venue's own fields (series, event slug)
      expect(l.source_url).toEqual(l.platform === 'prophetx' ? 'https://venue-h.example/outcome/987' : null);
    }
    const kx = await h.get('/ev?platforms=kalshi');
    expect(kx.body.opportunities.every((o: { legs: Leg[] }) => o.legs.every((l) => l.platform === 'kalshi'))).toBe(true);
  });

  it('describes the names and the platforms rule in the OpenAPI document', async () => {
    const doc = h.api.openapi('http://localhost/api/v2') as { paths: Record<string, { get: any }> };
    const arb = doc.paths['/arb']!.get;
    expect(arb.description).toContain('legs are all on these venues');
    const text = JSON.stringify(arb.responses['200']);
    for (const f of [
      'group_title',
      'event_date',
      'event_type',
      'roi_pct',
      'total_cost',
      'max_wager_usd',
      'detected_at',
      'source_url',
      'liquidity_usd',
      'fee_usd',
      'as_of',
      'delay_seconds',
      'count',
    ])
      expect(text, f).toContain(f);
    const ev = JSON.stringify(doc.paths['/ev']!.get.responses['200']);
    for (const f of ['consensus_probability', 'ev_usd_per_dollar', 'roi_pct', 'source_url']) expect(ev, f).toContain(f);
  });
});
