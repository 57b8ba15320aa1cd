import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyStore, mergeKeyRecords, type KeyRecord } from '../../src/access/keys.js';
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
});
