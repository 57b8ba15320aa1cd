import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import { Observable } from 'rxjs';
import { z } from 'zod';
import { KeyRecordSchema, mergeKeyRecords, type KeyRecord } from '../access/keys.js';
import type { CountDelta, MonthCounts, SharedCounts } from '../access/quota.js';
import type { ClusterLink } from './link.js';

/**
 * The access layer's shared tables in JetStream KV: every key record (by hash) and every key's
 * monthly counters (`<month>.<key id>`), so that a key created or revoked on any process and a
 * request counted on any process count on all of them.
 */
export interface AccessBuckets {
  readonly keys: KV;
  readonly quota: KV;
}

/** Counter entries outlive their month by this much (the bucket's TTL is counted from the last write). */
const QUOTA_TTL_MS = 62 * 86_400_000;
/** Compare-and-set attempts per counter before a flush gives up (the delta is taken again next time). */
const CAS_ATTEMPTS = 20;

/** Opens (creating when missing) the keys and quota buckets, named after the cluster's snapshot bucket. */
export async function openAccessBuckets(link: ClusterLink): Promise<AccessBuckets> {
  const kvm = new Kvm(link.js);
  const base = link.settings.bucket;
  const [keys, quota] = await Promise.all([kvm.create(`${base}-keys`, { history: 1 }), kvm.create(`${base}-quota`, { history: 1, ttl: QUOTA_TTL_MS })]);
  return { keys, quota };
}

const enc = new TextEncoder();
const json = (v: unknown): Uint8Array => enc.encode(JSON.stringify(v));

/**
 * Writes a key record into the shared table, merged with what it holds (a revocation is never
 * undone) by compare-and-set; nothing is written when the table already says as much.
 */
export async function shareKey(b: AccessBuckets, r: KeyRecord): Promise<void> {
  for (let i = 0; i < CAS_ATTEMPTS; i++) {
    const e = await b.keys.get(r.hash);
    // An entry that is not a key record is replaced by this one rather than merged with.
    const held = e && e.operation === 'PUT' ? heldRecord(e) : undefined;
    const next = held ? mergeKeyRecords(held, r) : r;
    if (held && next === held) return;
    const ok = await (e ? b.keys.update(r.hash, json(next), e.revision) : b.keys.create(r.hash, json(next))).then(
      () => true,
      () => false,
    );
    if (ok) return;
  }
  throw new Error(`key ${r.id}: shared table kept changing under ${CAS_ATTEMPTS} writes`);
}

/**
 * Every record of the shared key table, then each change as it is written (a KV watch); an entry
 * that is not a key record (another writer's bug, a hand-edited bucket) is skipped.
 */
export function keyRecords(b: AccessBuckets, onBad?: (key: string, error: string) => void): Observable<KeyRecord> {
  return watchEntries(b.keys, '>', (e) => KeyRecordSchema.parse(e.json<unknown>()), onBad);
}

/** The key record a KV entry holds, or undefined when it holds none. */
function heldRecord(e: KvEntry): KeyRecord | undefined {
  try {
    const r = KeyRecordSchema.safeParse(e.json<unknown>());
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** The KV key of a key's month counter. */
function counterKey(month: string, keyId: string): string {
  return `${month}.${keyId}`;
}

/** A key's month counts with a delta added (`held` undefined: the counter does not exist yet). */
export function sumCounts(held: MonthCounts | undefined, d: CountDelta): MonthCounts {
  const next: MonthCounts = { month: d.month, count: (held?.count ?? 0) + d.count, groups: { ...held?.groups } };
  for (const [g, n] of Object.entries(d.groups)) next.groups[g as keyof MonthCounts['groups']] = (held?.groups[g as keyof MonthCounts['groups']] ?? 0) + n;
  return next;
}

/**
 * Adds a delta to a key's shared monthly counter by compare-and-set and returns the new total;
 * concurrent writers retry on the revision they lost to, so no process's requests are lost.
 */
export async function addCounts(b: AccessBuckets, d: CountDelta): Promise<SharedCounts> {
  const k = counterKey(d.month, d.keyId);
  for (let i = 0; i < CAS_ATTEMPTS; i++) {
    const e = await b.quota.get(k);
    const next = sumCounts(e && e.operation === 'PUT' ? e.json<MonthCounts>() : undefined, d);
    const revision = await (e ? b.quota.update(k, json(next), e.revision) : b.quota.create(k, json(next))).catch(() => undefined);
    if (revision !== undefined) return { ...next, revision };
  }
  throw new Error(`quota of ${d.keyId}: counter kept changing under ${CAS_ATTEMPTS} writes`);
}

/** Stores a key's month counts as the shared counter only when the table has none yet (a first start in a cluster). */
export async function seedCounts(b: AccessBuckets, d: CountDelta): Promise<void> {
  const { keyId, ...counts } = d;
  await b.quota.create(counterKey(d.month, keyId), json(counts)).catch(() => undefined);
}

/** Every shared counter of `month`, then each change (a KV watch), with the key id it counts. */
export function sharedCounts(b: AccessBuckets, month: string): Observable<{ keyId: string; total: SharedCounts }> {
  return watchEntries(b.quota, `${month}.*`, (e) => ({ keyId: e.key.slice(month.length + 1), total: { ...e.json<MonthCounts>(), revision: e.revision } }));
}

/** A KV watch as an Observable of decoded PUT entries; an entry that does not decode is skipped (and given to `onBad`). */
function watchEntries<T>(kv: KV, key: string, decode: (e: KvEntry) => T, onBad?: (key: string, error: string) => void): Observable<T> {
  return new Observable<T>((sub) => {
    let stop: (() => void) | undefined;
    let stopped = false;
    void (async () => {
      const it = await kv.watch({ key, ignoreDeletes: true });
      stop = () => it.stop();
      if (stopped) return stop();
      for await (const e of it) {
        if (e.operation !== 'PUT') continue;
        let v: T;
        try {
          v = decode(e);
        } catch (err) {
          onBad?.(e.key, err instanceof z.ZodError ? z.prettifyError(err) : String(err));
          continue;
        }
        sub.next(v);
      }
      sub.complete();
    })().catch((e: unknown) => sub.error(e));
    return () => {
      stopped = true;
      stop?.();
    };
  });
}
