import { walletFlow } from '../../pipelines/signals.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerVenueB } from '../../src/api/venue-b.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { WalletLedger } from '../../src/signals/wallets.js';
import { addr, book, buy, cond, market, noTok, sell, yesTok } from '../signals/events.js';
import { apiHarness, type ApiHarness } from './harness.js';

const MIN = 60_000;
const HOUR = 3_600_000;
let h: ApiHarness;
let ledger: WalletLedger;
let clock = 0;
/** A whole hour, three hours ago: trades and candles sit at fixed offsets from it. */
const T = Math.floor((Date.now() - 3 * HOUR) / HOUR) * HOUR;
const s = (ms: number): number => Math.floor(ms / 1000);
const M1 = cond('1');
const M2 = cond('2');
const M3 = cond('3');
const A = addr('a');
const B = addr('b');

const apply = (...evs: NormalizedEvent[]): void => {
  for (const e of evs) {
    clock = Math.max(clock, e.localTimestamp);
    h.apply(e);
  }
};

beforeAll(async () => {
  h = await apiHarness();
  clock = T;
  ledger = new WalletLedger(h.state, h.persistence, { now: () => clock, warmMinScored: 5, advanceMs: 0 });
  walletFlow(h.state, ledger);
  registerVenueB(h.api, h.ctx, ledger);
  apply(market(M1, 1, T, undefined, { openInterest: 1_234 }), book(M1, yesTok(1), 39, 41, T));
  apply(buy({ marketId: M1, n: 1, wallet: A, outcome: 'yes', cents: 45, size: 100, ts: T + 10 * MIN }));
  apply({
    ...buy({ marketId: M1, n: 1, wallet: B, outcome: 'no', cents: 55, size: 50, ts: T + 20 * MIN }),
    takerName: 'NYC-Jungle',
    takerPseudonym: 'Enchanting-Populist',
  });
  apply(sell({ marketId: M1, n: 1, wallet: A, outcome: 'yes', cents: 50, size: 20, ts: T + 30 * MIN }));
  apply(book(M1, yesTok(1), 39, 41, T + 31 * MIN));
  // 25 holders of M2 YES, holder i with 10 × (i + 1) shares, plus A.
  apply(market(M2, 2, T), book(M2, yesTok(2), 59, 61, T));
  for (let i = 0; i < 25; i++)
    apply(
      buy({
        marketId: M2,
        n: 2,
        wallet: `0x${(i + 1).toString(16).padStart(40, '0')}`,
        outcome: 'yes',
        cents: 60,
        size: 10 * (i + 1),
        ts: T + 40 * MIN + i * 1_000,
      }),
    );
  apply(buy({ marketId: M2, n: 2, wallet: A, outcome: 'yes', cents: 60, size: 1_000, ts: T + 50 * MIN }));
  h.state.candles.flush(Date.now());
  await h.persistence.flushed();
});
afterAll(async () => {
  await ledger.close();
  await h.close();
});

describe('GET /venue_b/market-price/{token_id} (spec 4.17, 2.10)', () => {
  it('gives the current price (book mid) of YES and NO tokens', async () => {
    const asked = Date.now();
    const y = await h.get(`/venue_b/market-price/${yesTok(1)}`);
    const answered = Date.now();
    expect(y.status).toBe(200);
    expect(y.body).toMatchObject({ token_id: yesTok(1), price: 40, _meta: { source: 'book_mid', market_id: M1, outcome: 'yes' } });
    // stamped while the request was served
    expect(y.body.timestamp).toBeGreaterThanOrEqual(s(asked));
    expect(y.body.timestamp).toBeLessThanOrEqual(s(answered));
    const n = await h.get(`/venue_b/market-price/${noTok(1)}`);
    expect(n.body).toMatchObject({ price: 60, _meta: { outcome: 'no' } });
  });

  it('gives the closest one-minute candle price within an hour of a timestamp, NO = 100 − YES', async () => {
    // Minute T: the book (40). Minute T+10: A's trade at 45.
    const at = async (ms: number, tok = yesTok(1)) => h.get(`/venue_b/market-price/${tok}?timestamp=${s(ms)}`);
    expect((await at(T + 10 * MIN + 30_000)).body).toEqual({
      token_id: yesTok(1),
      timestamp: s(T + 10 * MIN),
      price: 45,
      _meta: { source: 'candles_1m', market_id: M1, outcome: 'yes', requested_timestamp: s(T + 10 * MIN + 30_000) },
    });
    expect((await at(T + 5 * MIN)).body).toMatchObject({ timestamp: s(T + MIN), price: 40 });
    expect((await at(T + 5 * MIN, noTok(1))).body).toMatchObject({ price: 60 });
    expect((await at(T - 30 * MIN)).body).toMatchObject({ timestamp: s(T), price: 40 });
    expect((await at(T - 2 * HOUR)).status).toBe(404);
  });

  it('400s malformed token ids and timestamps, 404s unknown tokens', async () => {
    for (const p of [
      `/venue_b/market-price/0xabc`,
      `/venue_b/market-price/12a4`,
      `/venue_b/market-price/${'1'.repeat(79)}`,
      `/venue_b/market-price/${yesTok(1)}?timestamp=yesterday`,
      `/venue_b/market-price/${yesTok(1)}?timestamp=-1`,
      `/venue_b/market-price/${yesTok(1)}?timestamp=1.5`,
      `/venue_b/market-price/${yesTok(1)}?timestamp=${s(Date.now() + 3 * HOUR)}`,
    ]) {
      const r = await h.get(p);
      expect(r.status, p).toBe(400);
      expect(r.body.success).toBe(false);
    }
    expect((await h.get(`/venue_b/market-price/${'9'.repeat(77)}`)).status).toBe(404);
  });
});

describe('GET /venue_b/candlesticks/{condition_id} (spec 4.18)', () => {
  it('rolls one-minute candles up, YES-normalized, v null, auto interval from the range', async () => {
    const r = await h.get(`/venue_b/candlesticks/${M1}?interval=5&start_ts=${s(T)}&end_ts=${s(T + 30 * MIN)}`);
    expect(r.status).toBe(200);
    expect(r.body.interval).toBe(5);
    expect(r.body.candlesticks).toHaveLength(6);
    expect(r.body.candlesticks[0]).toEqual({ t: s(T), o: 40, h: 40, l: 40, c: 40, v: null });
    expect(r.body.candlesticks[2]).toEqual({ t: s(T + 10 * MIN), o: 45, h: 45, l: 45, c: 45, v: null });
    // B's NO buy at 55 is a YES print at 45; the chart stays YES-side.
    expect(r.body.candlesticks[4]).toEqual({ t: s(T + 20 * MIN), o: 45, h: 45, l: 45, c: 45, v: null });
    const auto = await h.get(`/venue_b/candlesticks/${M1}`);
    expect(auto.body.interval).toBe(5); // 24 h: 1-minute candles would be 1 440 > 1 000
    const day = await h.get(`/venue_b/candlesticks/${M1}?start_ts=${s(T)}&end_ts=${s(T + 2 * HOUR)}`);
    expect(day.body.interval).toBe(1);
  });

  it('400s bad ids, intervals and ranges; 404s unknown markets', async () => {
    for (const qs of [
      'interval=2',
      'interval=abc',
      'interval=-1',
      `start_ts=${s(T + HOUR)}&end_ts=${s(T)}`,
      'start_ts=abc',
      'end_ts=2026-01-01',
      `interval=1&start_ts=${s(T - 30 * 24 * HOUR)}&end_ts=${s(T)}`,
    ])
      expect((await h.get(`/venue_b/candlesticks/${M1}?${qs}`)).status, qs).toBe(400);
    for (const id of ['0x12', 'abc', `${M1}00`]) expect((await h.get(`/venue_b/candlesticks/${id}`)).status, id).toBe(400);
    expect((await h.get(`/venue_b/candlesticks/${cond('9')}`)).status).toBe(404);
  });
});

describe('venue_b volume (spec 4.19)', () => {
  it('token volume defaults to the last 24 hours, is cached up to 20 s and carries watermark, refreshed_at and lag', async () => {
    const r = await h.get(`/venue_b/volume/${yesTok(1)}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_id: yesTok(1), condition_id: M1, outcome: 'yes', volume: 120, volume_usd: 55, trades: 2 });
    const m = r.body._meta;
    expect(m).toMatchObject({ default_window_applied: true, cached: false, cache_ttl_seconds: 20, watermark: new Date(T + 50 * MIN).toISOString() });
    expect(m.end_ts - m.start_ts).toBe(86_400);
    expect(m.lag_seconds).toBe(Math.round((Date.parse(m.refreshed_at) - (T + 50 * MIN)) / 1000)); // refreshed_at − watermark
    const again = await h.get(`/venue_b/volume/${yesTok(1)}`);
    expect(again.body._meta).toMatchObject({ cached: true, refreshed_at: m.refreshed_at });
    const later = await h.get(`/venue_b/volume/${yesTok(1)}?start_ts=${s(T + 15 * MIN)}`);
    expect(later.body).toMatchObject({ volume: 20, volume_usd: 10, trades: 1, _meta: { default_window_applied: false } });
  });

  it('volume chart buckets per interval; condition volume totals and splits per outcome', async () => {
    const c = await h.get(`/venue_b/volume-chart/${yesTok(1)}?interval=5&start_ts=${s(T)}&end_ts=${s(T + HOUR)}`);
    expect(c.status).toBe(200);
    expect(c.body.points).toHaveLength(12);
    expect(c.body.points[2]).toEqual({ t: s(T + 10 * MIN), volume: 100, volume_usd: 45, trades: 1 });
    expect(c.body.points[6]).toEqual({ t: s(T + 30 * MIN), volume: 20, volume_usd: 10, trades: 1 });
    expect(c.body.points.reduce((a: number, p: { volume: number }) => a + p.volume, 0)).toBe(120);
    const def = await h.get(`/venue_b/volume-chart/${yesTok(1)}`);
    expect(def.body.interval).toBe(60);
    expect(def.body._meta.default_window_applied).toBe(true);
    const cv = await h.get(`/venue_b/condition-volume/${M1}`);
    expect(cv.body).toMatchObject({ condition_id: M1, volume: 170, volume_usd: 82.5, trades: 3 });
    expect(cv.body.tokens).toEqual([
      { token_id: yesTok(1), outcome: 'yes', volume: 120, volume_usd: 55, trades: 2 },
      { token_id: noTok(1), outcome: 'no', volume: 50, volume_usd: 27.5, trades: 1 },
    ]);
    expect(cv.body._meta).toHaveProperty('watermark');
  });

  it('400s bad token and condition ids, timestamps and intervals', async () => {
    for (const p of [
      '/venue_b/volume/abc',
      `/venue_b/volume/${yesTok(1)}?start_ts=x`,
      `/venue_b/volume/${yesTok(1)}?start_ts=${s(T + HOUR)}&end_ts=${s(T)}`,
      `/venue_b/volume-chart/${yesTok(1)}?interval=0`,
      `/venue_b/volume-chart/${yesTok(1)}?interval=30`,
      `/venue_b/volume-chart/${yesTok(1)}?interval=1&start_ts=${s(T - 30 * 24 * HOUR)}`,
      '/venue_b/condition-volume/0xzz',
      `/venue_b/condition-volume/${M1}?end_ts=soon`,
    ])
      expect((await h.get(p)).status, p).toBe(400);
    expect((await h.get(`/venue_b/volume/${'7'.repeat(70)}`)).status).toBe(404);
    expect((await h.get(`/venue_b/condition-volume/${cond('8')}`)).status).toBe(404);
  });
});

describe('venue_b open interest, top holders, leaderboard (spec 4.19)', () => {
  it('open interest: the venue figure and what tracked wallets hold', async () => {
    const r = await h.get(`/venue_b/open-interest/${M1}`);
    expect(r.body).toMatchObject({
      condition_id: M1,
      open_interest: 1_234,
      source: 'venue',
      tracked: [
        { token_id: yesTok(1), outcome: 'yes', shares: 80, holders: 1 },
        { token_id: noTok(1), outcome: 'no', shares: 50, holders: 1 },
      ],
    });
    expect(r.body._meta).toHaveProperty('refreshed_at');
    expect((await h.get('/venue_b/open-interest/0x1')).status).toBe(400);
  });

  it('top holders: top 20 per outcome, offset pagination inside it, coverage metadata', async () => {
    const r = await h.get(`/venue_b/top-holders/${M2}`);
    expect(r.status).toBe(200);
    const yes = r.body.outcomes[0];
    expect(yes.outcome).toBe('yes');
    expect(yes.token_id).toBe(yesTok(2));
    expect(yes.holders).toHaveLength(20);
    expect(yes.holders[0]).toEqual({ rank: 1, wallet: A.toLowerCase(), shares: 1_000, avg_price: 60, cost_usd: 600, value_usd: 600 });
    expect(yes.holders[1]).toMatchObject({ rank: 2, shares: 250 });
    expect(yes.has_more).toBe(false);
    expect(r.body.outcomes[1]).toEqual({ outcome: 'no', token_id: noTok(2), holders: [], has_more: false });
    expect(r.body._meta.coverage).toMatchObject({
      top_n: 20,
      holders_tracked: { yes: 26, no: 0 },
      shares_tracked: { yes: 1_000 + 3_250, no: 0 },
      venue_open_interest: null,
      share_of_open_interest: null,
    });
    const page = await h.get(`/venue_b/top-holders/${M2}?offset=15&limit=10`);
    expect(page.body.outcomes[0].holders.map((x: { rank: number }) => x.rank)).toEqual([16, 17, 18, 19, 20]);
    const first = await h.get(`/venue_b/top-holders/${M2}?limit=5`);
    expect(first.body.outcomes[0]).toMatchObject({ has_more: true });
    expect(first.body.outcomes[0].holders).toHaveLength(5);
    for (const qs of ['limit=21', 'limit=0', 'offset=20', 'offset=-1']) expect((await h.get(`/venue_b/top-holders/${M2}?${qs}`)).status, qs).toBe(400);
  });

  it('leaderboard ranks by volume or PnL marked to market, offset pagination', async () => {
    const r = await h.get('/venue_b/leaderboard?sort=volume&limit=2');
    expect(r.status).toBe(200);
    expect(r.body.leaderboard[0]).toMatchObject({ rank: 1, wallet: A.toLowerCase(), volume_usd: 45 + 10 + 600, trades: 3, markets_traded: 2 });
    expect(r.body.pagination).toMatchObject({ offset: 0, limit: 2, count: 2, total: 27, has_more: true });
    const pnl = await h.get('/venue_b/leaderboard');
    // B: 50 NO at 55, NO now 100 − 40 = 60: +$2.50. The M2 holders bought at the mid: 0.
    // A: realized (50 − 45) × 20 = $1; 80 YES at 40 against a cost of $36: −$4; M2 at cost: 0.
    expect(pnl.body.leaderboard[0]).toMatchObject({ rank: 1, wallet: B.toLowerCase(), pnl_usd: 2.5, realized_pnl_usd: 0, unrealized_pnl_usd: 2.5 });
    const last = await h.get('/venue_b/leaderboard?offset=26');
    expect(last.body.leaderboard).toEqual([
      expect.objectContaining({ rank: 27, wallet: A.toLowerCase(), pnl_usd: -3, realized_pnl_usd: 1, unrealized_pnl_usd: -4 }),
    ]);
    const realized = await h.get('/venue_b/leaderboard?sort=realized_pnl&limit=1');
    expect(realized.body.leaderboard[0].wallet).toBe(A.toLowerCase());
    expect((await h.get('/venue_b/leaderboard?min_entries=1')).body.pagination.total).toBe(0);
    for (const qs of ['sort=luck', 'limit=101', 'offset=-1', 'min_entries=x']) expect((await h.get(`/venue_b/leaderboard?${qs}`)).status, qs).toBe(400);
  });
});

describe('venue_b wallets (spec 4.19)', () => {
  it('identity and record of a wallet; 400 for a malformed address, 404 for an unseen one', async () => {
    const r = await h.get(`/venue_b/wallets/${A}`);
    expect(r.status).toBe(200);
    expect(r.body.wallet).toMatchObject({
      address: A.toLowerCase(),
      name: null,
      labels: [],
      trades: 3,
      taker_trades: 3,
      volume_usd: 655,
      markets_traded: 2,
      open_positions: 2,
      realized_pnl_usd: 1,
      first_seen: new Date(T + 10 * MIN).toISOString(),
      last_seen: new Date(T + 50 * MIN).toISOString(),
    });
    expect(r.body.wallet.entries).toMatchObject({ made: 2 });
    expect((await h.get(`/venue_b/wallets/${A.toLowerCase()}`)).body.wallet.address).toBe(A.toLowerCase());
    // the profile the data-api showed on B's trade
    expect((await h.get(`/venue_b/wallets/${B}`)).body.wallet).toMatchObject({ name: 'NYC-Jungle', pseudonym: 'Enchanting-Populist' });
    for (const a of ['0x123', 'abc', `${A}0`, `0x${'g'.repeat(40)}`]) expect((await h.get(`/venue_b/wallets/${a}`)).status, a).toBe(400);
    expect((await h.get(`/venue_b/wallets/${addr('9')}`)).status).toBe(404);
  });

  it('positions: open by cost, closed, all; offset pagination', async () => {
    const r = await h.get(`/venue_b/wallets/${A}/positions`);
    expect(r.body.positions.map((p: { market_id: string }) => p.market_id)).toEqual([M2, M1]);
    expect(r.body.positions[1]).toMatchObject({
      token_id: yesTok(1),
      outcome: 'yes',
      status: 'open',
      shares: 80,
      avg_price: 45,
      cost_usd: 36,
      current_price: 40,
      value_usd: 32,
      unrealized_pnl_usd: -4,
      realized_pnl_usd: 1,
    });
    expect((await h.get(`/venue_b/wallets/${A}/positions?status=closed`)).body.positions).toEqual([]);
    const one = await h.get(`/venue_b/wallets/${A}/positions?limit=1&offset=1`);
    expect(one.body.pagination).toEqual({ offset: 1, limit: 1, count: 1, total: 2, has_more: false });
    for (const qs of ['status=gone', 'limit=0', 'limit=501']) expect((await h.get(`/venue_b/wallets/${A}/positions?${qs}`)).status, qs).toBe(400);
  });

  it('activity: latest trades newest first with the role, cursor pagination', async () => {
    const r = await h.get(`/venue_b/wallets/${A}/activity?limit=2`);
    expect(r.status).toBe(200);
    expect(r.body.activity.map((t: { side: string; market_id: string; role: string }) => [t.side, t.market_id, t.role])).toEqual([
      ['buy', M2, 'taker'],
      ['sell', M1, 'taker'],
    ]);
    expect(r.body.pagination.has_more).toBe(true);
    const next = await h.get(`/venue_b/wallets/${A}/activity?limit=2&cursor=${r.body.pagination.cursor}`);
    expect(next.body.activity).toHaveLength(1);
    expect(next.body.activity[0]).toMatchObject({ side: 'buy', price: 45, shares: 100, taker_addr: A });
    expect(next.body.pagination).toMatchObject({ has_more: false, cursor: null });
    for (const qs of ['limit=101', 'cursor=***']) expect((await h.get(`/venue_b/wallets/${A}/activity?${qs}`)).status, qs).toBe(400);
  });
});

describe('venue_b routes in the OpenAPI document', () => {
  it('lists every path with its parameters', () => {
    const doc = h.api.openapi('http://localhost/api/v2') as { paths: Record<string, { get: { summary: string; parameters: { name: string; in: string }[] } }> };
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith('/venue_b/'));
    expect(paths.sort()).toEqual(
      [
        '/venue_b/market-price/{token_id}',
        '/venue_b/candlesticks/{condition_id}',
        '/venue_b/volume/{token_id}',
        '/venue_b/volume-chart/{token_id}',
        '/venue_b/condition-volume/{condition_id}',
        '/venue_b/open-interest/{condition_id}',
        '/venue_b/top-holders/{condition_id}',
        '/venue_b/leaderboard',
        '/venue_b/smart-activity',
        '/venue_b/wallets/{address}',
        '/venue_b/wallets/{address}/positions',
        '/venue_b/wallets/{address}/activity',
      ].sort(),
    );
    expect(doc.paths['/venue_b/candlesticks/{condition_id}']!.get.parameters.map((x) => `${x.in}:${x.name}`)).toEqual([
      'path:condition_id',
      'query:interval',
      'query:start_ts',
      'query:end_ts',
    ]);
  });
});

describe('GET /venue_b/smart-activity (spec 4.19)', () => {
  it('is warming (no ranking) until enough entries were scored, then ranks markets by smart wallets', async () => {
    const w = await h.get('/venue_b/smart-activity');
    expect(w.status).toBe(200);
    expect(w.body.markets).toEqual([]);
    expect(w.body._meta).toMatchObject({ warming: true, needed_scored_entries: 5 });
    expect(w.body._meta.retry_after_seconds).toBeGreaterThan(0);

    // Five good early entries make a smart wallet (and end the warm-up: 5 scored).
    const S = addr('5');
    let t = Date.now() - 20 * MIN;
    for (let i = 0; i < 5; i++) {
      const id = cond('4').slice(0, 60) + i.toString(16).padStart(6, '0');
      apply(
        market(id, 10 + i, t),
        book(id, yesTok(10 + i), 39, 41, t),
        buy({ marketId: id, n: 10 + i, wallet: S, outcome: 'yes', cents: 41, size: 100, ts: t }),
        book(id, yesTok(10 + i), 49, 51, t + 10_000),
      );
      t += 121_000;
      clock = t;
      ledger.advance(t);
    }
    expect(ledger.isSmart(ledger.wallet(S)!)).toBe(true);
    apply(market(M3, 3, t), book(M3, yesTok(3), 49, 51, t), buy({ marketId: M3, n: 3, wallet: S, outcome: 'no', cents: 51, size: 100, ts: t }));
    const r = await h.get('/venue_b/smart-activity?window=1h');
    expect(r.body._meta).toMatchObject({ warming: false, window: '1h' });
    expect(r.body.markets).toEqual([
      {
        rank: 1,
        market_id: M3,
        title: 'Market 3?',
        smart_wallets: 1,
        entries: 1,
        amount_usd: 51,
        yes: { wallets: 0, shares: 0, amount_usd: 0 },
        no: { wallets: 1, shares: 100, amount_usd: 51 },
        direction: 'no',
        last_entry_at: new Date(t).toISOString(),
      },
    ]);
    expect((await h.get(`/venue_b/wallets/${S}`)).body.wallet.labels).toEqual(['smart_money']);
    for (const qs of ['window=2h', 'limit=0']) expect((await h.get(`/venue_b/smart-activity?${qs}`)).status, qs).toBe(400);
  });
});
