import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollup, Rollup } from '../../src/api/history.js';
import type { Candle } from '../../src/state/candles.js';
import { apiHarness, type ApiHarness } from './harness.js';

const MIN = 60_000;
const c = (t: number, o: number, h: number, l: number, cl: number, volume: number, mid?: number): Candle => ({
  venue: 'venue_a',
  marketId: 'M',
  t,
  o,
  h,
  l,
  c: cl,
  mid,
  volume,
  trades: volume ? 1 : 0,
});

describe('rollup (spec 2.6)', () => {
  it('aggregates minutes into buckets with per-bucket volume', () => {
    const out = rollup(
      [c(0, 4000, 4100, 3900, 4050, 3, 4000), c(MIN, 4050, 4300, 4050, 4200, 2, 4150), c(5 * MIN, 4200, 4200, 4000, 4100, 1, 4100)],
      5 * MIN,
      0,
      10 * MIN,
    );
    // minutes stored before bid, ask and money traded were kept: those read null
    const none = { yes_bid: null, yes_ask: null, dollar_volume: null };
    expect(out).toEqual([
      { t: 0, open: 40, high: 43, low: 39, close: 42, volume: 5, mid: 41.5, timestamp: '1970-01-01T00:00:00.000Z', ...none },
      { t: 300, open: 42, high: 42, low: 40, close: 41, volume: 1, mid: 41, timestamp: '1970-01-01T00:05:00.000Z', ...none },
    ]);
  });

  it('gives each bucket its ISO timestamp, the YES bid and ask of its last minute and the dollars traded in it', () => {
    const m = (t: number, bid: number | undefined, ask: number | undefined, notional: number | undefined, volume: number): Candle => ({
      ...c(t, 4000, 4000, 4000, 4000, volume, 4000),
      bid,
      ask,
      notional,
    });
    const out = rollup([m(0, 3900, 4100, 41_000, 10), m(MIN, 3950, undefined, 20_000, 5), m(2 * MIN, 3960, 4080, undefined, 0)], 5 * MIN, 0, 15 * MIN);
    expect(out.map((k) => [k.timestamp, k.yes_bid, k.yes_ask, k.dollar_volume, k.volume])).toEqual([
      // a minute without the money traded (stored before it was kept) adds nothing; the rest sum
      ['1970-01-01T00:00:00.000Z', 39.6, 40.8, 6.1, 15],
      // an empty bucket carries the bid and ask and traded nothing
      ['1970-01-01T00:05:00.000Z', 39.6, 40.8, 0, 0],
      ['1970-01-01T00:10:00.000Z', 39.6, 40.8, 0, 0],
    ]);
    // a bucket whose minutes all predate the money traded says it does not know
    expect(rollup([m(0, 3900, 4100, undefined, 3)], MIN, 0, MIN)[0]).toMatchObject({ dollar_volume: null, yes_bid: 39, yes_ask: 41 });
  });

  it('carries the previous close through empty buckets, and mid falls back to close', () => {
    const out = rollup([c(0, 9900, 10_000, 9900, 10_000, 4, undefined)], MIN, 0, 3 * MIN);
    const none = { yes_bid: null, yes_ask: null };
    expect(out).toEqual([
      { t: 0, open: 99, high: 100, low: 99, close: 100, volume: 4, mid: 100, timestamp: '1970-01-01T00:00:00.000Z', ...none, dollar_volume: null },
      { t: 60, open: 100, high: 100, low: 100, close: 100, volume: 0, mid: 100, timestamp: '1970-01-01T00:01:00.000Z', ...none, dollar_volume: 0 },
      { t: 120, open: 100, high: 100, low: 100, close: 100, volume: 0, mid: 100, timestamp: '1970-01-01T00:02:00.000Z', ...none, dollar_volume: 0 },
    ]);
  });

  it('rolls up in two pieces (closed prefix, then the tail) exactly as in one', () => {
    let seed = 7;
    const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 50; round++) {
      const width = [MIN, 5 * MIN, 60 * MIN][rnd(3)]!;
      const minutes: Candle[] = [];
      for (let t = rnd(30) * MIN; t < 600 * MIN; t += (1 + rnd(90)) * MIN) {
        const p = 100 + rnd(9800);
        minutes.push(c(t, p, p + 50, p - 50, p, rnd(3), rnd(2) ? p : undefined));
      }
      const from = rnd(100) * MIN;
      const to = from + (200 + rnd(400)) * MIN + rnd(MIN);
      const start = from - (from % width);
      const split = start + width * rnd(Math.floor((to - start) / width));
      const whole = rollup(minutes, width, start, to);
      const head = new Rollup(width).addAll(minutes, start, split);
      const first = head.finish(split);
      const rest = Rollup.after(head).addAll(minutes, split, to).finish(to);
      expect([...first, ...rest], `round ${round}`).toEqual(whole);
    }
  });
});

let h: ApiHarness;
const NOW = Date.now();
const T0 = NOW - (NOW % MIN) - 10 * MIN;

beforeAll(async () => {
  h = await apiHarness();
  h.apply({ venue: 'venue_a', type: 'market', marketId: 'KXA-1', title: 'A?', status: 'active', timestamp: T0, localTimestamp: T0 });
  h.apply({
    venue: 'venue_b',
    type: 'market',
    marketId: '0xc',
    title: 'B?',
    status: 'active',
    yesInstrument: 'YT',
    noInstrument: 'NT',
    timestamp: T0,
    localTimestamp: T0,
  });
  for (let i = 0; i < 30; i++) {
    const t = T0 + i * 20_000;
    h.apply({
      venue: 'venue_a',
      type: 'trade',
      marketId: 'KXA-1',
      tradeId: `a${i}`,
      price: 4000 + i * 10,
      yesPrice: 4000 + i * 10,
      size: 10,
      takerSide: 'yes',
      side: 'buy',
      timestamp: t,
      localTimestamp: t,
    });
    h.apply({
      venue: 'venue_b',
      type: 'trade',
      marketId: '0xc',
      instrument: i % 2 ? 'YT' : 'NT',
      tradeId: `b${i}`,
      price: 5000,
      yesPrice: 5000,
      size: i + 1,
      side: 'buy',
      takerSide: 'yes',
      taker: i % 3 ? '0xAAA' : '0xBBB',
      timestamp: t,
      localTimestamp: t,
    });
  }
  h.state.candles.flush(NOW, false);
  await h.persistence.flushed();
});
afterAll(() => h.close());

describe('GET /prices/history (spec 4.8)', () => {
  it('serves 1m and 5m candles from the persisted minutes plus the open one', async () => {
    const from = new Date(T0).toISOString();
    const r1 = await h.get(`/prices/history?platform=venue_a&market_id=KXA-1&interval=1m&from=${from}`);
    expect(r1.status).toBe(200);
    // three trades of 10 at 40, 40.1 and 40.2 cents: $12.03; no book, so no bid or ask
    expect(r1.body.candles[0]).toEqual({
      t: T0 / 1000,
      open: 40,
      high: 40.2,
      low: 40,
      close: 40.2,
      volume: 30,
      mid: 40.2,
      timestamp: new Date(T0).toISOString(),
      yes_bid: null,
      yes_ask: null,
      dollar_volume: 12.03,
    });
    expect(r1.body.candles.slice(0, 10).reduce((a: number, x: { volume: number }) => a + x.volume, 0)).toBe(300);
    const r5 = await h.get(`/prices/history?platform=venue_a&market_id=KXA-1&interval=5m&from=${from}`);
    expect(r5.body.candles.reduce((a: number, x: { volume: number }) => a + x.volume, 0)).toBe(300);
  });

  it('carries closes up to now, never into a future `to`', async () => {
    const from = new Date(T0).toISOString();
    const to = new Date(Date.now() + 2 * 86_400_000).toISOString();
    const r = await h.get(`/prices/history?platform=venue_a&market_id=KXA-1&interval=1h&from=${from}&to=${to}`);
    expect(r.status).toBe(200);
    const last = r.body.candles[r.body.candles.length - 1];
    expect(last.t * 1000).toBeLessThanOrEqual(Date.now());
    expect(last.t * 1000).toBeGreaterThan(Date.now() - 3_600_000);
  });

  it('serves a long range from cached closed buckets, rebuilt when an old minute is written late', async () => {
    const H = 60 * MIN;
    const base = NOW - (NOW % H) - 40 * H;
    for (let i = 0; i < 30; i++)
      h.persistence.appendCandle({ ...c(base + i * H + 5 * MIN, 5000 + i, 5000 + i, 5000 + i, 5000 + i, 1, 5000 + i), marketId: 'KXA-1' });
    await h.persistence.flushed();
    const url = `/prices/history?platform=venue_a&market_id=KXA-1&interval=1h&from=${new Date(base).toISOString()}`;
    const first = (await h.get(url)).body as { candles: { t: number; close: number }[] };
    const again = (await h.get(url)).body as { candles: { t: number; close: number }[] };
    expect(again.candles).toEqual(first.candles);
    expect(first.candles[0]).toMatchObject({ t: base / 1000, close: 50 });
    expect(first.candles[29]).toMatchObject({ close: 50.29 });
    // a backfilled minute inside a cached bucket: the next response shows it
    h.persistence.appendCandle({ ...c(base + 2 * H + 30 * MIN, 7000, 7000, 7000, 7000, 1, 7000), marketId: 'KXA-1' });
    await h.persistence.flushed();
    const after = (await h.get(url)).body as { candles: { t: number; close: number }[] };
    expect(after.candles[2]).toMatchObject({ t: (base + 2 * H) / 1000, close: 70 });
    expect(after.candles.length).toBe(first.candles.length);
  });

  it('answers a repeated query anew once the open minute moves in place or a stored minute commits', async () => {
    const now = Date.now();
    const minute = now - (now % MIN);
    const url = `/prices/history?platform=venue_a&market_id=KXA-H&interval=1m&from=${new Date(minute - 5 * MIN).toISOString()}&to=${new Date(minute + MIN).toISOString()}`;
    const closes = async (): Promise<number[]> => ((await h.get(url)).body as { candles: { close: number }[] }).candles.map((x) => x.close);
    h.state.candles.observe('venue_a', 'KXA-H', 4000, 4000, 0, now);
    expect(await closes()).toEqual([40]);
    expect(await closes()).toEqual([40]);
    // The open candle is the same object, changed in place.
    h.state.candles.observe('venue_a', 'KXA-H', 4500, 4500, 0, now);
    expect(await closes()).toEqual([45]);
    // A minute before it, stored (inside the stable horizon: no history epoch bump), shows once committed.
    h.persistence.appendCandle({ ...c(minute - 2 * MIN, 3000, 3000, 3000, 3000, 1, 3000), marketId: 'KXA-H' });
    await h.persistence.flushed();
    expect(await closes()).toEqual([30, 30, 45]);
  });

  it('400s bad parameters and 404s unknown markets', async () => {
    for (const qs of [
      'market_id=KXA-1',
      'platform=venue_a',
      'platform=venue_a&market_id=KXA-1&interval=2m',
      'platform=venue_a&market_id=KXA-1&from=yesterday',
      'platform=venue_a&market_id=KXA-1&from=2026-11-22T00:00:00Z&to=2026-11-21T00:00:00Z',
      'platform=venue_a&market_id=KXA-1&interval=1m&from=2020-01-01T00:00:00Z',
    ])
      expect((await h.get(`/prices/history?${qs}`)).status, qs).toBe(400);
    expect((await h.get('/prices/history?platform=venue_a&market_id=NOPE')).status).toBe(404);
  });
});

describe('GET /trades (spec 4.16, 2.9)', () => {
  it('returns the unified record, newest first, with the default window flagged', async () => {
    const r = await h.get('/trades?limit=5');
    expect(r.status).toBe(200);
    expect(r.body.trades).toHaveLength(5);
    expect(r.body.pagination).toMatchObject({ limit: 5, count: 5, has_more: true });
    expect(r.body._meta.default_window_applied).toBe(true);
    const t = r.body.trades[0];
    expect(Object.keys(t).sort()).toEqual(
      [
        'amount_usd',
        'executed_at',
        'maker_addr',
        'market_id',
        'platform',
        'price',
        'shares',
        'side',
        'taker_addr',
        'taker_side',
        'timestamp',
        'token_id',
        'trade_id',
      ].sort(),
    );
    expect(r.body.trades.map((x: { timestamp: number }) => x.timestamp)).toEqual(
      [...r.body.trades.map((x: { timestamp: number }) => x.timestamp)].sort((a, b) => b - a),
    );
  });

  it('paginates stably while trades arrive', async () => {
    const seen: string[] = [];
    let key: string | null = null;
    let first = true;
    do {
      const r: { body: { trades: { trade_id: string }[]; pagination: { pagination_key: string | null } } } = await h.get(
        `/trades?platform=venue_a&limit=7${key ? `&pagination_key=${key}` : ''}`,
      );
      seen.push(...r.body.trades.map((x) => x.trade_id));
      key = r.body.pagination.pagination_key;
      if (first) {
        first = false;
        const t = Date.now();
        h.apply({ venue: 'venue_a', type: 'trade', marketId: 'KXA-1', tradeId: 'late', price: 4000, yesPrice: 4000, size: 1, timestamp: t, localTimestamp: t });
        await h.persistence.flushed();
      }
    } while (key);
    expect(seen).toHaveLength(30);
    expect(new Set(seen).size).toBe(30);
  });

  it('filters by market, token, wallet and min_total; filtered requests use the full range', async () => {
    const byToken = await h.get('/trades?token_id=YT&limit=500');
    expect(byToken.body.trades).toHaveLength(15);
    expect(byToken.body._meta.default_window_applied).toBe(false);
    const byWallet = await h.get('/trades?wallet=0xbbb&limit=500');
    expect(byWallet.body.trades).toHaveLength(10);
    const big = await h.get('/trades?platform=venue_b&min_total=10&limit=500');
    expect(big.body.trades.every((x: { amount_usd: number }) => x.amount_usd >= 10)).toBe(true);
    expect(big.body.trades).toHaveLength(11);
    const asc = await h.get('/trades?market_id=KXA-1&order=asc&limit=1');
    expect(asc.body.trades[0].trade_id).toBe('a0');
  });

  it('clamps an early start_time to the retention boundary', async () => {
    const r = await h.get('/trades?start_time=1000&limit=1');
    expect(r.status).toBe(200);
    expect(r.body._meta.start_time).toBe(Math.floor(Date.parse(r.body._meta.data_available_from) / 1000));
  });

  it('400 for malformed bounds, keys and limits', async () => {
    for (const qs of [
      'start_time=yesterday',
      'end_time=-5',
      'start_time=2000&end_time=1000',
      'limit=501',
      'limit=0',
      'order=up',
      'pagination_key=zzz',
      'platform=venue_c',
      'min_total=-1',
    ])
      expect((await h.get(`/trades?${qs}`)).status, qs).toBe(400);
  });
});

describe('GET /trades with the strict hot window flag (spec 4.16 rule 4)', () => {
  it('answers 422 history_outside_hot_window instead of clamping', async () => {
    const s = await apiHarness({ overrides: { api: { tradesStrictHotWindow: true } } });
    try {
      const r = await s.get('/trades?start_time=1000');
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ success: false, code: 'history_outside_hot_window' });
      expect(typeof r.body.data_available_from).toBe('string');
      expect((await s.get('/trades')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
