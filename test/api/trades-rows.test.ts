import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TradePages } from '../../src/api/trade-pages.js';
import { VirtualClock } from '../../src/core/clock.js';
import { testTrade, tradesHarness, type ApiHarness } from './harness.js';

/**
 * The rows of /trades pages kept by seq across seconds (issue 34): a page built again at a new
 * second (its "now" moved) copies the rows of the trades it listed or was told of instead of reading
 * them from the log, and still shows what the new second, an appended trade or a prune changed.
 * Each answer is compared with the page the log gives at the same second (pages and rows emptied
 * first), and `rows.written` says how many rows were written from stored trades.
 */
const NOW = Date.parse('2026-11-28T12:00:00.500Z');
const MIN = 60_000;

const trade = testTrade;

interface Page {
  trades: { trade_id: string; platform: string; amount_usd: number }[];
  pagination: { pagination_key: string | null; has_more: boolean; count: number };
  _meta: { end_time: number };
}

let h: ApiHarness;
let pages: TradePages;
const clock = new VirtualClock(NOW);

beforeAll(async () => {
  h = await tradesHarness(NOW, clock);
  pages = h.ctx.tradePages!;
});
afterAll(() => h.close());

async function read(qs: string): Promise<Page> {
  const r = await h.get(`/trades?${qs}`);
  expect(r.status, qs).toBe(200);
  return r.body as Page;
}
const ids = (p: Page): string[] => p.trades.map((t) => t.trade_id);

/** The page of `qs` built from the log at this second: no page and no row kept. */
async function fromLog(qs: string): Promise<Page> {
  pages.clear();
  const written = pages.rows.written;
  const p = await read(qs);
  // Every row listed, and those passed over for the notional floor or has_more, written afresh.
  expect(pages.rows.written - written, `${qs} read from the log`).toBeGreaterThanOrEqual(p.trades.length);
  return p;
}

/** The next second. */
function tick(): void {
  clock.advanceTo(clock.now() + 1000);
}

describe('/trades rows kept across seconds', () => {
  it('a page built again at a new second writes no row it listed, and is the page the log gives', async () => {
    const first = await read('limit=5');
    tick();
    const built = pages.built;
    const written = pages.rows.written;
    const again = await read('limit=5');
    expect(pages.built).toBe(built + 1);
    expect(pages.rows.written).toBe(written);
    expect(again._meta.end_time).toBe(first._meta.end_time + 1);
    expect(ids(again)).toEqual(ids(first));
    expect(await fromLog('limit=5')).toEqual(again);
  });

  it('a trade appended shows in the page of the next second, its row written once when it was committed', async () => {
    await read('limit=5');
    await read('platform=venue_a&limit=3');
    const written = pages.rows.written;
    h.apply(trade('venue_a', 'new-a', clock.now() - 100));
    await h.persistence.flushed();
    tick();
    const newest = await read('limit=5');
    const venueA = await read('platform=venue_a&limit=3');
    expect(ids(newest)[0]).toBe('new-a');
    expect(ids(venueA)).toEqual(['new-a', 'a9', 'a8']);
    expect(pages.rows.written).toBe(written + 1);
    expect(await fromLog('platform=venue_a&limit=3')).toEqual(venueA);
    expect(await fromLog('limit=5')).toEqual(newest);
  });

  it('a trade stamped in a later second shows from that second on', async () => {
    const at = Math.floor(clock.now() / 1000) * 1000 + 1500;
    h.apply(trade('venue_b', 'next-b', at, 3));
    await h.persistence.flushed();
    expect(ids(await read('limit=5'))).not.toContain('next-b');
    tick();
    const written = pages.rows.written;
    const p = await read('limit=5');
    expect(ids(p)[0]).toBe('next-b');
    expect(pages.rows.written).toBe(written);
    expect(await fromLog('limit=5')).toEqual(p);
  });

  it("a kept row passes another page's filters again: another venue, a notional floor", async () => {
    // venue_b's rows are kept by one page; the pages of the next second filter them again.
    await read('platform=venue_b&limit=20');
    tick();
    const venueA = await read('platform=venue_a&limit=20');
    const big = await read('min_total=5&limit=20');
    const all = await read('limit=30');
    expect(venueA.trades.every((t) => t.platform === 'venue_a')).toBe(true);
    expect(big.trades.length).toBeGreaterThan(0);
    expect(big.trades.every((t) => t.amount_usd >= 5)).toBe(true);
    for (const [qs, p] of [
      ['platform=venue_a&limit=20', venueA],
      ['min_total=5&limit=20', big],
      ['limit=30', all],
    ] as const)
      expect(await fromLog(qs), qs).toEqual(p);
  });

  it('a page built from the log keeps the rows it lists, not those its notional floor passes over', async () => {
    tick();
    pages.clear();
    const written = pages.rows.written;
    const p = await read('min_total=4&limit=20');
    expect(ids(p)).toEqual(['b9', 'b8', 'b7']);
    expect(pages.rows.written - written).toBe(3);
  });

  it('a pruned trade is listed by no page of a later second', async () => {
    const q = 'order=asc&limit=3';
    expect(ids(await read(q))).toEqual(['a0', 'b0', 'a1']);
    h.persistence.pruneTrades(NOW - 60 * MIN + 1);
    await h.persistence.flushed();
    expect(ids(await read(q))).toEqual(['b0', 'a1', 'b1']);
    tick();
    const p = await read(q);
    expect(ids(p)).toEqual(['b0', 'a1', 'b1']);
    expect(await fromLog(q)).toEqual(p);
  });
});
