import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KeyStore } from '../../src/access/keys.js';
import { loadPlans, type Plan } from '../../src/access/plans.js';
import { QuotaLedger } from '../../src/access/quota.js';
import { Persistence } from '../../src/persist/store.js';

const T0 = Date.UTC(2026, 10, 24, 12);
const dev: Plan = { ...loadPlans().dev, perSecond: 5, monthly: 1_000 };

let baseTimers = 0;
let dir: string;
let persistence: Persistence;
beforeEach(() => {
  // Only the interval timers and the clock are faked: LMDB's own commit scheduling stays real.
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
  vi.setSystemTime(T0);
  dir = mkdtempSync(join(tmpdir(), 'cb-timers-'));
  persistence = new Persistence(dir);
  // The store's own timers (its disk-space guard) are not the subject here: count from them.
  baseTimers = vi.getTimerCount();
});
afterEach(async () => {
  vi.useRealTimers();
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('QuotaLedger periodic flush', () => {
  it('writes changed monthly counters once per interval, only when something changed, and once more on stop', async () => {
    const db = persistence.db('quota');
    const quota = new QuotaLedger(db);
    const stored = (): unknown => db.get('m:key_a');
    quota.start(1_000);
    quota.start(1_000);
    expect(vi.getTimerCount() - baseTimers).toBe(1); // a second start keeps the one timer

    for (let i = 0; i < 3; i++) quota.consume('key_a', dev, undefined, {});
    vi.advanceTimersByTime(999);
    await db.committed;
    expect(stored()).toBeUndefined();
    vi.advanceTimersByTime(1);
    await db.committed;
    expect(stored()).toEqual({ month: '2026-11', count: 3, groups: {} });

    // nothing changed: the next ticks write nothing (a write elsewhere would show as a new count)
    db.putSync('m:key_a', { month: '2026-11', count: 99, groups: {} });
    vi.advanceTimersByTime(3_000);
    await db.committed;
    expect(stored()).toMatchObject({ count: 99 });

    quota.consume('key_a', dev, 'arb', {});
    await quota.stop();
    expect(vi.getTimerCount() - baseTimers).toBe(0);
    expect(stored()).toEqual({ month: '2026-11', count: 4, groups: { arb: 1 } });
  });
});

describe('QuotaLedger per-second bucket', () => {
  it('refills at the plan rate: five at once, then one more every 200 ms, never more than five banked', () => {
    const quota = new QuotaLedger(undefined);
    const take = () => quota.rate('key_a', dev, {});
    for (let i = 0; i < 5; i++) expect(take().ok).toBe(true);
    expect(take()).toMatchObject({ ok: false, retryAfterSec: 1 });
    vi.advanceTimersByTime(199);
    expect(take().ok).toBe(false);
    vi.advanceTimersByTime(1);
    expect(take().ok).toBe(true);
    expect(take().ok).toBe(false);
    vi.advanceTimersByTime(60_000);
    const allowed = Array.from({ length: 10 }, take).filter((v) => v.ok).length;
    expect(allowed).toBe(5);
  });
});

describe('KeyStore watch', () => {
  it('sees keys created and revoked by another process at its next poll, not before', () => {
    const served = new KeyStore(persistence.db('keys'));
    const cli = new KeyStore(persistence.db('keys')); // `crossbook keys` in another process
    served.watch(500);

    const { key, record } = cli.create('dev', 'acct');
    expect(served.verify(key)).toEqual({ ok: false, reason: 'invalid' });
    vi.advanceTimersByTime(499);
    expect(served.verify(key)).toEqual({ ok: false, reason: 'invalid' });
    vi.advanceTimersByTime(1);
    expect(served.verify(key)).toMatchObject({ ok: true, record: { id: record.id } });

    cli.revoke(record.id);
    expect(served.verify(key).ok).toBe(true); // still cached until the next poll
    vi.advanceTimersByTime(500);
    expect(served.verify(key)).toEqual({ ok: false, reason: 'revoked' });

    served.stop();
    expect(vi.getTimerCount() - baseTimers).toBe(0);
    const later = cli.create('pro', 'acct').key;
    vi.advanceTimersByTime(5_000);
    expect(served.verify(later)).toEqual({ ok: false, reason: 'invalid' }); // stopped: no more polls
  });
});
