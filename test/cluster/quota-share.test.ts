import { describe, expect, it } from 'vitest';
import { loadPlans } from '../../src/access/plans.js';
import { sumCounts } from '../../src/cluster/access.js';
import { QuotaLedger, type CountDelta, type SharedCounts } from '../../src/access/quota.js';

const plans = loadPlans();
const T = Date.UTC(2026, 10, 15);
const MONTH = '2026-11';

/** Counts `n` requests of `keyId` (plan free, group matched_markets) on a ledger; returns the verdicts. */
function requests(l: QuotaLedger, keyId: string, n: number): boolean[] {
  return Array.from({ length: n }, () => l.consume(keyId, plans.free, 'matched_markets', {}).ok);
}

/** What a shared counter does with a delta: the real sum, with the revision the store would give it. */
function add(total: SharedCounts | undefined, d: CountDelta): SharedCounts {
  return { ...sumCounts(total, d), revision: (total?.revision ?? 0) + 1 };
}

describe('QuotaLedger shared across processes', () => {
  it('counts the shared total plus what it counted since, once, whatever order the total and the settle arrive in', () => {
    const a = new QuotaLedger(undefined, () => T);
    a.share();
    requests(a, 'k', 3);
    const [d] = a.takeDeltas();
    expect(d).toEqual({ keyId: 'k', month: MONTH, count: 3, groups: { matched_markets: 3 } });
    requests(a, 'k', 2);
    const total = add({ month: MONTH, count: 10, groups: { matched_markets: 10 }, revision: 4 }, d!);
    // The watch brings the new total before the write's answer: 3 requests count twice for a moment.
    a.applyShared('k', total);
    expect(a.used('k')?.count).toBe(13 + 3 + 2);
    a.settle('k', total);
    expect(a.used('k')).toMatchObject({ count: 13 + 2, groups: { matched_markets: 15 } });
    // An older revision arriving late changes nothing.
    a.applyShared('k', { month: MONTH, count: 10, groups: {}, revision: 4 });
    expect(a.used('k')?.count).toBe(15);
  });

  it('keeps a delta the shared store did not take for the next flush', () => {
    const a = new QuotaLedger(undefined, () => T);
    a.share();
    requests(a, 'k', 4);
    expect(a.takeDeltas()).toHaveLength(1);
    requests(a, 'k', 1);
    a.unsettle('k');
    expect(a.takeDeltas()).toEqual([{ keyId: 'k', month: MONTH, count: 5, groups: { matched_markets: 5 } }]);
    expect(a.used('k')?.count).toBe(5);
  });

  it('refuses on one process once two processes together reach the group limit', () => {
    const a = new QuotaLedger(undefined, () => T);
    const b = new QuotaLedger(undefined, () => T);
    a.share();
    b.share();
    const limit = plans.free.groups.matched_markets;
    expect(requests(a, 'k', 60).every(Boolean)).toBe(true);
    let total: SharedCounts | undefined;
    for (const l of [a, b])
      for (const d of l.takeDeltas()) {
        total = add(total, d);
        l.settle(d.keyId, total);
      }
    b.applyShared('k', total!);
    a.applyShared('k', total!);
    const verdicts = requests(b, 'k', 50);
    expect(verdicts.filter(Boolean)).toHaveLength(limit - 60);
    expect(b.consume('k', plans.free, 'matched_markets', {})).toMatchObject({ ok: false });
  });

  it('a ledger that does not share keeps no deltas', () => {
    const a = new QuotaLedger(undefined, () => T);
    requests(a, 'k', 3);
    expect(a.takeDeltas()).toEqual([]);
  });
});
