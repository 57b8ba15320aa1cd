import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { loadPlans } from '../../src/access/plans.js';
import { QUOTA_FLUSH_MS, QuotaLedger } from '../../src/access/quota.js';
import { Persistence } from '../../src/persist/store.js';

/**
 * The monthly counters' loss window on kill -9 (issue 14 item 9): a counted request is written to
 * LMDB within one flush interval, well under a second. Only the interval timer is faked: LMDB
 * commits on its own thread.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-quota-window-'));
const persistence = new Persistence(dir);
afterEach(() => vi.useRealTimers());
afterAll(async () => {
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('quota flush window', () => {
  it('writes a counted request within QUOTA_FLUSH_MS (at most a quarter of a second)', async () => {
    expect(QUOTA_FLUSH_MS).toBeLessThanOrEqual(250);
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const db = persistence.db('quota');
    const ledger = new QuotaLedger(db);
    ledger.start();
    ledger.consume('key_window', loadPlans().free, undefined, {});
    vi.advanceTimersByTime(QUOTA_FLUSH_MS - 1);
    await db.flushed;
    expect(db.get('m:key_window')).toBeUndefined();
    vi.advanceTimersByTime(1);
    await db.flushed;
    expect(db.get('m:key_window')).toMatchObject({ count: 1 });
    // and a restart reads it back
    expect(new QuotaLedger(db).used('key_window')).toMatchObject({ count: 1 });
    await ledger.stop();
  });

  it('a flush with nothing left to write still waits for the counts an earlier flush is writing', async () => {
    const db = persistence.db('quota');
    const ledger = new QuotaLedger(db);
    for (let i = 0; i < 5; i++) ledger.consume('key_inflight', loadPlans().free, undefined, {});
    const first = ledger.flush();
    // Nothing is dirty now: the first flush took the counter. This one resolves only when it is on disk.
    await ledger.flush();
    expect(db.get('m:key_inflight')).toMatchObject({ count: 5 });
    await first;
  });
});
