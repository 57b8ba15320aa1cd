import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Persistence } from '../../src/persist/store.js';
import type { StoredTrade } from '../../src/state/trades.js';
import { apiHarness, testTrade, type ApiHarness } from './harness.js';

interface Row {
  trade_id: string;
  timestamp: number;
  executed_at: string;
  maker_addr: unknown;
  taker_addr: unknown;
}
interface Page {
  status: number;
  body: { trades: Row[]; pagination: { pagination_key: string | null; has_more: boolean } };
}

const NOW = Date.now();
const T0 = NOW - (NOW % 60_000) - 30 * 60_000;

const trade = testTrade;

/** Milliseconds of a row: executed_at keeps them, timestamp is whole seconds. */
const ms = (r: Row): number => Date.parse(r.executed_at);

/** Pages through /trades with `qs` and `limit`, calling `between` after each page. */
async function all(h: ApiHarness, qs: string, limit: number, between: (page: number) => Promise<void> = async () => {}): Promise<Row[]> {
  const rows: Row[] = [];
  let key: string | null = null;
  let n = 0;
  do {
    const r: Page = await h.get(`/trades?${qs}&limit=${limit}${key ? `&pagination_key=${key}` : ''}`);
    expect(r.status).toBe(200);
    rows.push(...r.body.trades);
    key = r.body.pagination.pagination_key;
    await between(n++);
  } while (key);
  return rows;
}

let h: ApiHarness;
/** Arrival order: venue_a (streamed) trades on time, venue_b (polled) ones a poll later, seconds apart. */
const expected: { id: string; t: number }[] = [];

beforeAll(async () => {
  h = await apiHarness();
  for (let round = 0; round < 6; round++) {
    const base = T0 + round * 10_000;
    // venue_a streams its trades as they happen...
    for (let i = 0; i < 4; i++) {
      h.apply(trade('venue_a', `a${round}.${i}`, base + i * 2_000 + 500));
      expected.push({ id: `a${round}.${i}`, t: base + i * 2_000 + 500 });
    }
    // ...venue_b's poll then delivers trades that happened in between.
    for (let i = 0; i < 3; i++) {
      h.apply(trade('venue_b', `b${round}.${i}`, base + i * 3_000 + 1_000));
      expected.push({ id: `b${round}.${i}`, t: base + i * 3_000 + 1_000 });
    }
  }
  await h.persistence.flushed();
});
afterAll(() => h.close());

describe('GET /trades orders by trade time across venues', () => {
  it('desc is strictly newest first and asc oldest first, however the trades arrived', async () => {
    const desc: Page = await h.get('/trades?limit=500');
    const byTime = [...expected].sort((x, y) => x.t - y.t);
    expect(desc.body.trades.map((r) => r.trade_id)).toEqual(byTime.map((x) => x.id).reverse());
    const times = desc.body.trades.map(ms);
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeLessThanOrEqual(times[i - 1]!);
    const asc: Page = await h.get('/trades?limit=500&order=asc');
    expect(asc.body.trades.map((r) => r.trade_id)).toEqual(byTime.map((x) => x.id));
  });

  it('trades with the same time come in arrival order (asc) and its reverse (desc)', async () => {
    const s = await apiHarness();
    try {
      const t = T0 + 5_000;
      s.apply(trade('venue_b', 'first', t), trade('venue_a', 'second', t), trade('venue_b', 'third', t));
      await s.persistence.flushed();
      expect((await all(s, 'order=asc', 1)).map((r) => r.trade_id)).toEqual(['first', 'second', 'third']);
      expect((await all(s, 'order=desc', 2)).map((r) => r.trade_id)).toEqual(['third', 'second', 'first']);
    } finally {
      await s.close();
    }
  });

  it('pages keyed on (time, seq) stay stable while late trades arrive on both sides of the key', async () => {
    const s = await apiHarness();
    try {
      for (const x of expected) s.apply(trade(x.id.startsWith('a') ? 'venue_a' : 'venue_b', x.id, x.t));
      await s.persistence.flushed();
      const late: { id: string; t: number }[] = [];
      const rows = await all(s, 'order=desc', 5, async (page) => {
        if (page !== 1) return;
        // After the second page (keys at about T0 + 43 s): one late trade newer than the key
        // (behind the reader, not served), one older (ahead, served in its place).
        late.push({ id: 'late-new', t: T0 + 55_500 }, { id: 'late-old', t: T0 + 2_200 });
        for (const x of late) s.apply(trade('venue_b', x.id, x.t));
        await s.persistence.flushed();
      });
      const ids = rows.map((r) => r.trade_id);
      expect(new Set(ids).size).toBe(ids.length);
      const want = [...expected, late[1]!].sort((x, y) => y.t - x.t).map((x) => x.id);
      expect(ids).toEqual(want);
    } finally {
      await s.close();
    }
  });

  it('a repeated query sees each trade once it is stored: a new one, a late one, within the same second', async () => {
    const s = await apiHarness();
    try {
      s.apply(trade('venue_a', 'one', T0 + 1_000));
      await s.persistence.flushed();
      const ids = async (): Promise<string[]> => ((await s.get('/trades?limit=10')) as Page).body.trades.map((r) => r.trade_id);
      expect(await ids()).toEqual(['one']);
      expect(await ids()).toEqual(['one']);
      s.apply(trade('venue_a', 'newer', T0 + 2_000));
      await s.persistence.flushed();
      expect(await ids()).toEqual(['newer', 'one']);
      // Late: older than every stored trade, so neither end of the index moves, only its count.
      s.apply(trade('venue_b', 'late', T0 + 500));
      await s.persistence.flushed();
      expect(await ids()).toEqual(['newer', 'one', 'late']);
    } finally {
      await s.close();
    }
  });

  it('keeps a page key issued before keys carried the time (arrival seq only) working', async () => {
    const first: Page = await h.get('/trades?limit=3');
    const k = JSON.parse(Buffer.from(first.body.pagination.pagination_key!, 'base64url').toString()) as Record<string, unknown>;
    delete k['t'];
    const old = Buffer.from(JSON.stringify(k)).toString('base64url');
    const next: Page = await h.get(`/trades?limit=3&pagination_key=${old}`);
    const direct: Page = await h.get(`/trades?limit=3&pagination_key=${first.body.pagination.pagination_key}`);
    expect(next.body.trades.map((r) => r.trade_id)).toEqual(direct.body.trades.map((r) => r.trade_id));
    const unknownSeq = Buffer.from(JSON.stringify({ ...k, s: 1e9 })).toString('base64url');
    expect((await h.get(`/trades?pagination_key=${unknownSeq}`)).status).toBe(400);
  });

  it('maker_addr and taker_addr are strings (spec 2.9): "" where the venue names no wallet', async () => {
    const r: Page = await h.get('/trades?limit=500');
    for (const row of r.body.trades) {
      expect(typeof row.maker_addr).toBe('string');
      expect(typeof row.taker_addr).toBe('string');
    }
    const a = r.body.trades.find((x) => x.trade_id.startsWith('a'))!;
    expect([a.maker_addr, a.taker_addr]).toEqual(['', '']);
    expect(r.body.trades.find((x) => x.trade_id.startsWith('b'))!.taker_addr).toBe('0xAAA');
  });
});

describe('the trade time index', () => {
  it('is rebuilt from the trade log when it does not cover it (a store from before the index)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-tidx-'));
    try {
      const p = new Persistence(dir);
      const stored: StoredTrade[] = [3, 1, 2].map((k, i) => ({ ...trade('venue_a', `x${i}`, T0 + k * 1000), seq: i + 1 }));
      for (const t of stored) await p.db('trades').put(t.seq, t);
      expect(p.db('tradesByTime').getCount()).toBe(0);
      expect(p.indexTrades()).toBe(3);
      expect([...p.db('tradesByTime').getKeys()]).toEqual([
        [T0 + 1000, 2],
        [T0 + 2000, 3],
        [T0 + 3000, 1],
      ]);
      expect(p.indexTrades()).toBe(0);
      await p.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
