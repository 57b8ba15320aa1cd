import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TradePages } from '../../src/api/trade-pages.js';
import { VirtualClock } from '../../src/core/clock.js';
import { testTrade, tradesHarness, type ApiHarness } from './harness.js';

/**
 * The /trades page cache under commits (issue 34): a committed trade changes only the pages it
 * belongs to, which take it in place; every other page is served as it was. Each answer is checked
 * against a page built from the log for the same query under another query string (the cache is
 * keyed by query string), and the cache's build counter says which answers were built.
 */
const NOW = Date.parse('2026-11-28T12:00:00.500Z');
const MIN = 60_000;

const trade = testTrade;

interface Page {
  trades: { trade_id: string }[];
  pagination: { pagination_key: string | null; has_more: boolean; count: number };
}

let h: ApiHarness;
let pages: TradePages;
const clock = new VirtualClock(NOW);

beforeAll(async () => {
  h = await tradesHarness(NOW, clock);
  pages = h.ctx.tradePages!;
});
afterAll(() => h.close());

/** A window of its own on every query, so a page does not depend on which second it is read in. */
const S = Math.floor(NOW / 1000);
const W = `start_time=${S - 7200}&end_time=${S + 3600}`;

/** A page and its ids. */
async function read(qs: string): Promise<Page> {
  const r = await h.get(`/trades?${qs}&${W}`);
  expect(r.status, qs).toBe(200);
  return r.body as Page;
}
const ids = (p: Page): string[] => p.trades.map((t) => t.trade_id);

let second = 0;
/** The same page built from the log: a new second empties the cache, and the page's window is its own. */
async function rebuilt(qs: string): Promise<Page> {
  clock.advanceTo(NOW + ++second * 1000);
  const built = pages.built;
  const p = await read(qs);
  expect(pages.built, `${qs} built`).toBe(built + 1);
  return p;
}

/** Reads every query; the pages are built (or cached) now. */
async function readAll(queries: Record<string, string>): Promise<Record<string, Page>> {
  const out: Record<string, Page> = {};
  for (const [name, qs] of Object.entries(queries)) out[name] = await read(qs);
  return out;
}

describe('/trades pages across trade commits', () => {
  const queries = {
    newest: 'limit=5',
    venueA: 'platform=venue_a&limit=3',
    marketB: 'market_id=0xc&limit=4',
    oldestA: 'platform=venue_a&order=asc&limit=3',
    big: 'min_total=5&platform=venue_b&limit=50',
  };

  it('a new trade appears in the next read of each page it belongs to; the others are served from cache', async () => {
    const before = await readAll(queries);
    const built = pages.built;
    const patched = pages.patched;
    h.apply(trade('venue_a', 'new-a', NOW - 1_000));
    await h.persistence.flushed();
    const after = await readAll(queries);
    expect(pages.built).toBe(built);
    expect(pages.patched).toBe(patched + 2);
    expect(ids(after['newest']!)).toEqual(['new-a', ...ids(before['newest']!).slice(0, 4)]);
    expect(ids(after['venueA']!)).toEqual(['new-a', 'a9', 'a8']);
    for (const name of ['marketB', 'oldestA', 'big']) expect(after[name], name).toEqual(before[name]);
    // Each answer is the page the log gives now.
    for (const [name, qs] of Object.entries(queries)) expect(await rebuilt(qs), name).toEqual(after[name]);
  });

  it('a late trade lands on the page that covers its time, and a large one on the notional-filtered page', async () => {
    await readAll(queries);
    const built = pages.built;
    // Between a0 and a1 in time: on the oldest venue_a page; venue_b's notional page takes a big one.
    h.apply(trade('venue_a', 'late-a', NOW - 60 * MIN + 10_000), trade('venue_b', 'big-b', NOW - 2_000, 20));
    await h.persistence.flushed();
    const after = await readAll(queries);
    expect(pages.built).toBe(built);
    expect(ids(after['oldestA']!)).toEqual(['a0', 'late-a', 'a1']);
    expect(ids(after['big']!)[0]).toBe('big-b');
    expect(ids(after['newest']!).slice(0, 2)).toEqual(['new-a', 'big-b']);
    expect(ids(after['marketB']!)[0]).toBe('big-b');
    for (const [name, qs] of Object.entries(queries)) expect(await rebuilt(qs), name).toEqual(after[name]);
  });

  it('follows a page through its pagination key after a patch, and a full last page turns has_more on', async () => {
    const first = await read('platform=venue_a&limit=6');
    expect(first.pagination.has_more).toBe(true);
    const next = `platform=venue_a&limit=6&pagination_key=${first.pagination.pagination_key!}`;
    // The second page holds the rest: exactly full, nothing after it.
    expect((await read(next)).pagination).toMatchObject({ count: 6, has_more: false, pagination_key: null });
    const built = pages.built;
    h.apply(trade('venue_a', 'older-a', NOW - 60 * MIN + 5_000));
    await h.persistence.flushed();
    const again = await read(next);
    expect(pages.built).toBe(built);
    expect(again.pagination).toMatchObject({ count: 6, has_more: true });
    expect(ids(again).slice(-2)).toEqual(['late-a', 'older-a']);
    expect(await rebuilt(next)).toEqual(again);
  });

  it('builds every page again when trades are pruned (the retention boundary moves)', async () => {
    const q = 'platform=venue_a&order=asc&limit=2';
    expect(ids(await read(q))).toEqual(['a0', 'older-a']);
    const built = pages.built;
    h.persistence.pruneTrades(NOW - 60 * MIN + 1);
    await h.persistence.flushed();
    const pruned = await read(q);
    expect(pages.built).toBe(built + 1);
    expect(ids(pruned)).toEqual(['older-a', 'late-a']);
    await read(q);
    expect(pages.built).toBe(built + 1);
  });
});
