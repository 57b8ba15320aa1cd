import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyRecordSchema, KeyStore, mergeKeyRecords, type KeyRecord } from '../../src/access/keys.js';
import { keysCommand } from '../../src/cli/keys.js';
import { loadConfig } from '../../src/config/load.js';
import { Persistence } from '../../src/persist/store.js';

const dirs: string[] = [];
const persistences: Persistence[] = [];
function store(): KeyStore {
  const dir = mkdtempSync(join(tmpdir(), 'cb-keys-merge-'));
  dirs.push(dir);
  const p = new Persistence(dir);
  persistences.push(p);
  return new KeyStore(p.db('keys'));
}

afterAll(async () => {
  for (const p of persistences) await p.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('key records merged between replicas', () => {
  const base: KeyRecord = { id: 'key_000000000001', hash: 'a'.repeat(64), hint: 'pmx_AbCd…', account: 'x', plan: 'dev', createdAt: '2026-01-01T00:00:00.000Z' };

  it('a revocation wins over an active record, and the earlier of two revocations stands, in either order', () => {
    const r1 = { ...base, revokedAt: '2026-02-01T00:00:00.000Z' };
    const r2 = { ...base, revokedAt: '2026-03-01T00:00:00.000Z' };
    expect(mergeKeyRecords(base, r1)).toEqual(r1);
    expect(mergeKeyRecords(r1, base)).toBe(r1);
    expect(mergeKeyRecords(r1, r2)).toBe(r1);
    expect(mergeKeyRecords(r2, r1)).toEqual(r1);
  });

  it('a key made on one store and revoked on another verifies the same on both once their records are exchanged', () => {
    const a = store();
    const b = store();
    const fromA: KeyRecord[] = [];
    const fromB: KeyRecord[] = [];
    a.changes$.subscribe((r) => fromA.push(r));
    b.changes$.subscribe((r) => fromB.push(r));
    const { key, record } = a.create('dev', 'acct');
    expect(fromA).toEqual([record]);
    expect(b.verify(key)).toEqual({ ok: false, reason: 'invalid' });
    expect(b.merge(fromA[0]!)).toBe(true);
    expect(b.verify(key)).toMatchObject({ ok: true });
    // Merging what it already holds changes nothing and announces nothing.
    expect(b.merge(fromA[0]!)).toBe(false);
    expect(fromB).toHaveLength(1);
    b.revoke(record.id);
    expect(a.merge(fromB.at(-1)!)).toBe(true);
    expect(a.verify(key)).toEqual({ ok: false, reason: 'revoked' });
    // The active record arriving late does not bring the key back.
    expect(a.merge(record)).toBe(false);
    expect(a.verify(key)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('of two plans the later stands, whichever arrives first; the same time picks the same on both sides; a revocation keeps the later plan', () => {
    const dev = { ...base, plan: 'pro' as const, planAt: '2026-02-01T00:00:00.000Z' };
    const free = { ...base, plan: 'free' as const, planAt: '2026-03-01T00:00:00.000Z' };
    expect(mergeKeyRecords(base, free)).toEqual(free);
    expect(mergeKeyRecords(dev, free)).toEqual(free);
    expect(mergeKeyRecords(free, dev)).toBe(free);
    // A record from before planAt existed counts its plan as set at createdAt.
    expect(mergeKeyRecords(free, base)).toBe(free);
    const tieA = { ...base, plan: 'free' as const, planAt: '2026-04-01T00:00:00.000Z' };
    const tieB = { ...base, plan: 'pro' as const, planAt: '2026-04-01T00:00:00.000Z' };
    expect(mergeKeyRecords(tieA, tieB)).toEqual(mergeKeyRecords(tieB, tieA));
    const revoked = { ...base, revokedAt: '2026-02-15T00:00:00.000Z' };
    expect(mergeKeyRecords(revoked, free)).toEqual({ ...free, revokedAt: revoked.revokedAt });
    expect(mergeKeyRecords(free, revoked)).toEqual({ ...free, revokedAt: revoked.revokedAt });
  });

  it('a plan change on one store reaches another as a change of its record, and an older record does not undo it', () => {
    const a = store();
    const b = store();
    const fromB: KeyRecord[] = [];
    b.changes$.subscribe((r) => fromB.push(r));
    const { key, record } = a.create('pro', 'acct');
    b.merge(record);
    const moved = a.setPlan(record.id, 'free')!;
    expect(moved.planAt! > record.createdAt).toBe(true);
    expect(b.merge(moved)).toBe(true);
    expect(fromB.at(-1)).toMatchObject({ id: record.id, plan: 'free' });
    expect(b.verify(key)).toMatchObject({ ok: true, record: { plan: 'free' } });
    expect(b.merge(record)).toBe(false);
    expect(b.verify(key)).toMatchObject({ ok: true, record: { plan: 'free' } });
    // Moved back, later still: the newer plan wins again.
    expect(b.merge(a.setPlan(record.id, 'pro')!)).toBe(true);
    expect(b.verify(key)).toMatchObject({ ok: true, record: { plan: 'pro' } });
  });

  it('takes from a shared table only what is a key record', () => {
    const good = { ...base, planAt: '2026-02-01T00:00:00.000Z' };
    expect(KeyRecordSchema.parse(good)).toEqual(good);
    for (const bad of [{ id: 'nope' }, { ...base, plan: 'platinum' }, { ...base, hash: 'xyz' }, { ...base, revokedAt: 'yesterday' }, 'not a record', null])
      expect(KeyRecordSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });

  it('`crossbook keys plan` moves a key to another plan, refusing an unknown plan or key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-keys-plan-'));
    dirs.push(dir);
    const config = loadConfig({ env: {}, overrides: { dataDir: dir } });
    const lines: string[] = [];
    const errs: string[] = [];
    const run = (arg: { key?: string; plan?: string }) =>
      keysCommand(
        config,
        'plan',
        arg,
        (l) => lines.push(l),
        (l) => errs.push(l),
      );
    expect(
      await keysCommand(
        config,
        'create',
        { plan: 'pro' },
        (l) => lines.push(l),
        (l) => errs.push(l),
      ),
    ).toBe(0);
    const key = lines.at(-1)!;
    expect(await run({ key, plan: 'platinum' })).toBe(2);
    expect(errs.at(-1)).toMatch(/--plan must be one of free, dev, pro, enterprise \(got "platinum"\)/);
    expect(await run({ key: 'key_000000000000', plan: 'free' })).toBe(1);
    expect(errs.at(-1)).toBe('no such key: key_000000000000');
    expect(await run({ key, plan: 'free' })).toBe(0);
    expect(lines.at(-1)).toMatch(/^key_[0-9a-f]{12} is on plan free$/);
    const p = new Persistence(dir);
    persistences.push(p);
    expect(new KeyStore(p.db('keys')).verify(key)).toMatchObject({ ok: true, record: { plan: 'free' } });
  });
});
