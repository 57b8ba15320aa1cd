import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { MarketUpsert } from '../../../src/core/types.js';
import { UpsertChanges } from '../../../src/venues/common/frames.js';
import { upsertHash, without } from '../../../src/venues/common/util.js';
import { KalshiMapper } from '../../../src/venues/kalshi/mappers.js';

/** Upsert de-duplication by hash (src/venues/common/util.ts upsertHash), on the upserts of a real Kalshi /markets page. */

const venue = loadConfig({ env: {} }).venues.find((v) => v.protocol === 'kalshi')!;
const page = JSON.parse(readFileSync('test/fixtures/kalshi/rest_markets_page_first2_2026-09-13.json', 'utf8')) as unknown;
const upserts = (): MarketUpsert[] => [...new KalshiMapper(venue).map(page, 1_000)].filter((e): e is MarketUpsert => e.type === 'market');

describe('upsertHash', () => {
  it('is what JSON.stringify without timestamps tells apart: timestamps and absent fields do not count, every field and nested value does', () => {
    const [u, other] = upserts();
    expect(u).toBeDefined();
    expect(other).toBeDefined();
    const h = upsertHash(u!);
    expect(upsertHash({ ...u!, timestamp: 5, localTimestamp: 6 })).toBe(h);
    expect(upsertHash({ ...u!, eventTitle: undefined })).toBe(
      upsertHash(Object.fromEntries(Object.entries(u!).filter(([k]) => k !== 'eventTitle')) as MarketUpsert),
    );
    const changed: Partial<MarketUpsert>[] = [
      { title: `${u!.title}.` },
      { status: u!.status === 'active' ? 'closed' : 'active' },
      { volume: (u!.volume ?? 0) + 1 },
      { volume: (u!.volume ?? 0) + 1e-6 },
      { tags: ['a', 'b'] },
      { extra: { ...u!.extra, combo: !(u!.extra?.['combo'] === true) } },
      { extra: { ...u!.extra, rules_primary: 'other rules' } },
    ];
    for (const c of changed) expect(upsertHash({ ...u!, ...c }), JSON.stringify(c)).not.toBe(h);
    expect(upsertHash({ ...u!, tags: ['a', 'b'] })).not.toBe(upsertHash({ ...u!, tags: ['b', 'a'] }));
    expect(upsertHash({ ...u!, tags: ['ab'] })).not.toBe(upsertHash({ ...u!, tags: ['a', 'b'] }));
    expect(upsertHash(other!)).not.toBe(h);
    expect(Number.isSafeInteger(h)).toBe(true);
  });

  it('UpsertChanges lets a market upsert through when it changed, and after forget()', () => {
    const [u] = upserts();
    const c = new UpsertChanges();
    expect(c.changed(u!)).toBe(true);
    expect(c.changed({ ...u!, timestamp: 9 })).toBe(false);
    expect(c.changed({ ...u!, title: 'renamed' })).toBe(true);
    expect(c.changed({ ...u!, title: 'renamed' })).toBe(false);
    c.forget(u!.marketId);
    expect(c.changed({ ...u!, title: 'renamed' })).toBe(true);
    expect([...c.markets()]).toEqual([u!.marketId]);
  });
});

describe('without', () => {
  it('drops the undefined keys and keeps the others in order, returning the object itself when it has none', () => {
    const full = { a: 1, b: 'x' };
    expect(without(full)).toBe(full);
    const sparse = { a: 1, b: undefined, c: null, d: 'y', e: undefined };
    const out = without(sparse);
    expect(Object.keys(out)).toEqual(['a', 'c', 'd']);
    expect(out).toEqual({ a: 1, c: null, d: 'y' });
  });
});
