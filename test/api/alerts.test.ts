import { walletFlow } from '../../pipelines/signals.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAlerts } from '../../src/api/alerts.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { AlertEngine } from '../../src/signals/alerts.js';
import { WalletLedger } from '../../src/signals/wallets.js';
import { addr, book, buy, cond, entry, market, VA, yesTok } from '../signals/events.js';
import { apiHarness, type ApiHarness } from './harness.js';

let h: ApiHarness;
let ledger: WalletLedger;
let alerts: AlertEngine;
let clock = Date.now() - 3_600_000;
const H = 120_000;
/** The time between the first and the last alert, for `since`. */
let middle = 0;

const apply = (...evs: NormalizedEvent[]): void => {
  for (const e of evs) {
    clock = Math.max(clock, e.localTimestamp);
    h.apply(e);
  }
};
let k = 0;
const newMarket = (): { id: string; k: number } => {
  const n = ++k;
  const id = cond('b').slice(0, 60) + n.toString(16).padStart(6, '0');
  apply(market(id, n, clock), book(id, yesTok(n), 39, 41, clock));
  return { id, k: n };
};
/** n entries of 100 YES at 41¢, each followed by a 9¢ move its way or against it. */
const train = (wallet: string, n: number, good: boolean): void => {
  for (let i = 0; i < n; i++) {
    const m = newMarket();
    apply(...entry(m.id, m.k, wallet, good, clock));
    clock += H;
    ledger.advance(clock);
  }
};

beforeAll(async () => {
  h = await apiHarness();
  ledger = new WalletLedger(h.state, h.persistence, { now: () => clock, advanceMs: 0 });
  alerts = new AlertEngine(ledger, h.persistence);
  walletFlow(h.state, ledger, alerts);
  registerAlerts(h.api, h.ctx, ledger, alerts);

  train(addr('a'), 5, true); // 2 insider (track record)
  train(addr('c'), 5, false);
  middle = clock;
  clock += 60_000;
  for (let i = 0; i < 3; i++) {
    const m = newMarket();
    apply(buy({ marketId: m.id, n: m.k, wallet: addr('a'), outcome: 'yes', cents: 41, size: 100, ts: clock })); // smart_money
    apply(buy({ marketId: m.id, n: m.k, wallet: addr('c'), outcome: 'no', cents: 59, size: 100, ts: clock })); // fade
  }
  const id = 'KXALERT-1';
  apply(market(id, 0, clock, VA), book(id, id, 39, 41, clock, VA));
  apply(buy({ marketId: id, n: 0, venue: VA, outcome: 'yes', cents: 41, size: 2_000, ts: clock }));
  apply(book(id, id, 49, 51, clock + 1_000, VA));
  clock += H;
  ledger.advance(clock); // anonymous insider on venue_a
  await alerts.flushed();
});
afterAll(async () => {
  await alerts.close();
  await ledger.close();
  await h.close();
});

describe('GET /alerts/smart-money (spec 4.14, 2.14)', () => {
  it('returns smart_money, insider and captain_hook alerts newest first with reason and figures', async () => {
    const r = await h.get('/alerts/smart-money?limit=100');
    expect(r.status).toBe(200);
    const types = r.body.alerts.map((a: { alert_type: string }) => a.alert_type);
    expect(types).toEqual(['insider', 'smart_money', 'smart_money', 'smart_money', 'insider', 'insider']);
    const ids = r.body.alerts.map((a: { alert_id: string }) => Number(a.alert_id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const sm = r.body.alerts[1];
    expect(Object.keys(sm).sort()).toEqual(
      [
        'alert_id',
        'alert_type',
        'amount_usd',
        'created_at',
        'executed_at',
        'figures',
        'lifetime_pnl',
        'market_id',
        'outcome',
        'platform',
        'price',
        'reason',
        'shares',
        'side',
        'smart_lifetime_pnl',
        'timestamp',
        'title',
        'token_id',
        'trade_id',
        'wallet',
      ].sort(),
    );
    expect(sm).toMatchObject({ platform: 'venue_b', outcome: 'yes', side: 'buy', wallet: addr('a').toLowerCase(), price: 41, shares: 100, amount_usd: 41 });
    expect(sm.figures).toMatchObject({ scored_entries: 5, good_entries: 5, hit_rate: 100 });
    expect(sm.title).toMatch(/^Market \d+\?$/);
    // the trader's realized PnL when the alert was raised (this wallet has only bought: $0), USD
    expect(sm).toMatchObject({ lifetime_pnl: 0, smart_lifetime_pnl: 0 });
    expect(r.body.alerts[0]).toMatchObject({ platform: 'venue_a', wallet: null, figures: { path: 'anonymous_trade' }, lifetime_pnl: null });
    expect(r.body.pagination).toEqual({ limit: 100, count: 6, cursor: null, has_more: false });
    expect(r.body._meta).toMatchObject({ alert_types: ['smart_money', 'insider', 'captain_hook'], horizon_seconds: 120 });
    expect(r.headers.get('x-ratelimit-limit-smart-money-month')).toBe('unlimited');
  });

  it('walks cursors without gaps or repeats, and filters by type, platform and since', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: { body: { alerts: { alert_id: string }[]; pagination: { cursor: string | null } } } = await h.get(
        `/alerts/smart-money?limit=4${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...r.body.alerts.map((a) => a.alert_id));
      cursor = r.body.pagination.cursor;
    } while (cursor);
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
    const ins = await h.get('/alerts/smart-money?alert_type=insider');
    expect(ins.body.alerts.map((a: { alert_type: string }) => a.alert_type)).toEqual(['insider', 'insider', 'insider']);
    expect((await h.get('/alerts/smart-money?platform=venue_a')).body.alerts).toHaveLength(1);
    expect((await h.get('/alerts/smart-money?platform=venue_b')).body.alerts).toHaveLength(5);
    expect((await h.get('/alerts/smart-money?platform=venue_c')).body).toMatchObject({ alerts: [], pagination: { count: 0, has_more: false } });
    const since = Math.floor(middle / 1000);
    const bySeconds = await h.get(`/alerts/smart-money?since=${since}`);
    expect(bySeconds.body.alerts).toHaveLength(4);
    expect(bySeconds.body._meta.since).toBe(new Date(since * 1000).toISOString());
    const byIso = await h.get(`/alerts/smart-money?since=${encodeURIComponent(new Date(since * 1000).toISOString())}`);
    expect(byIso.body.alerts).toEqual(bySeconds.body.alerts);
    expect((await h.get(`/alerts/smart-money?since=${Math.floor(clock / 1000) + 10}`)).body.alerts).toEqual([]);
  });

  it('400s bad parameters; venue_g and venue_h are refused as having no data', async () => {
    for (const qs of [
      'limit=0',
      'limit=101',
      'limit=ten',
      'alert_type=fade',
      'alert_type=whale',
      'since=yesterday',
      'since=2026-13-45',
      'since=-5',
      'cursor=zzz',
      'cursor=eyJzIjoiYSJ9',
      'platform=venue_z',
      'platform=venue_a,venue_b',
    ]) {
      const r = await h.get(`/alerts/smart-money?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.success, qs).toBe(false);
    }
    for (const v of ['venue_g', 'venue_h']) {
      const r = await h.get(`/alerts/smart-money?platform=${v}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(new RegExp(`${v} has no alert data`));
    }
    expect((await h.get('/alerts/smart-money', null)).status).toBe(401);
  });
});

describe('alert routes in the OpenAPI document', () => {
  it('declare their quota groups and parameters', () => {
    const doc = h.api.openapi('http://localhost/api/v2') as {
      paths: Record<string, { get: { 'x-quota-group': string; parameters: { name: string; schema: { enum?: string[] } }[] } }>;
    };
    const sm = doc.paths['/alerts/smart-money']!.get;
    expect(sm['x-quota-group']).toBe('smart_money');
    expect(sm.parameters.map((x) => x.name)).toEqual(['alert_type', 'limit', 'cursor', 'since', 'platform']);
    expect(sm.parameters[0]!.schema.enum).toEqual(['all', 'smart_money', 'insider', 'captain_hook']);
    expect(doc.paths['/alerts/fade-finder']!.get['x-quota-group']).toBe('fade_finder');
  });
});

describe('GET /alerts/fade-finder (spec 4.15)', () => {
  it('returns fade alerts newest first and counts against the fade-finder quota', async () => {
    const r = await h.get('/alerts/fade-finder');
    expect(r.status).toBe(200);
    expect(r.body.alerts).toHaveLength(3);
    expect(r.body.alerts[0]).toMatchObject({
      alert_type: 'fade',
      wallet: addr('c').toLowerCase(),
      outcome: 'no',
      price: 59,
      figures: { bad_entries: 5, miss_rate: 100 },
    });
    expect(r.body.alerts[0].reason).toMatch(/5 of its 5 scored entries went against it/);
    expect(r.headers.get('x-ratelimit-limit-fade-finder-month')).toBe('unlimited');
    expect(r.headers.get('x-ratelimit-limit-smart-money-month')).toBeNull();
    expect((await h.get('/alerts/fade-finder?alert_type=fade&limit=1')).body.pagination).toMatchObject({ count: 1, has_more: true });
    for (const qs of ['alert_type=smart_money', 'alert_type=insider', 'platform=venue_g', 'limit=500'])
      expect((await h.get(`/alerts/fade-finder?${qs}`)).status, qs).toBe(400);
  });
});
