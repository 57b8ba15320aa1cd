import {
  asyncScheduler,
  concatMap,
  defer,
  distinctUntilChanged,
  EMPTY,
  from,
  interval,
  lastValueFrom,
  map,
  merge,
  repeat,
  retry,
  startWith,
  Subscription,
  switchMap,
  timer,
} from 'rxjs';
import type { KeyRecord, KeyStore } from '../src/access/keys.js';
import { monthOf, QUOTA_FLUSH_MS, type QuotaLedger } from '../src/access/quota.js';
import { addCounts, keyRecords, seedCounts, shareKey, sharedCounts, type AccessBuckets } from '../src/cluster/access.js';
import type { Logger } from '../src/core/log.js';

/** A watch that ends or fails (NATS gone for good, a bucket removed) is opened again after this long. */
const REWATCH_MS = 1_000;

/**
 * The access layer of every cluster process (core or edge) kept in step with the shared tables
 * (src/cluster/access.ts):
 * - keys: every record changed here (created, revoked or moved to another plan in-process, or by
 *   `crossbook keys` on this DATA_DIR, seen by KeyStore's poll) goes to the shared table, and every
 *   record there is merged into the local store, so a revocation or a plan change anywhere reaches
 *   every process (and, through the key flow, its open WebSocket connections);
 * - quotas: every `flushMs` the requests counted here are added to the shared monthly counters, and
 *   every counter change another process writes is applied, so limits count the cluster's requests.
 */
export function replicateAccess(
  buckets: AccessBuckets,
  keys: KeyStore,
  quota: QuotaLedger,
  opts: { log: Logger; flushMs?: number; now?: () => number },
): Replication {
  const { log } = opts;
  // Quota months and their flushes are wall time: the HTTP edge's, not the engine's (ARCHITECTURE.md, Clock and replay).
  // eslint-disable-next-line no-restricted-properties
  const now = opts.now ?? Date.now;
  const warn = (what: string) => (e: unknown) => log.warn({ err: String(e) }, `cluster: ${what}`);
  const sub = new Subscription();
  quota.share();

  // Local records first (what this DATA_DIR knows that the table may not), then every change here.
  const local$ = merge(from(keys.list()), keys.changes$);
  // A record NATS cannot take now (an outage) is tried again until it can: in order, none skipped.
  const shared = (r: KeyRecord) =>
    defer(() => shareKey(buckets, r)).pipe(
      retry({
        delay: (e: unknown, n) => {
          if (n === 1) warn(`key ${r.id} not shared yet`)(e);
          return timer(REWATCH_MS);
        },
      }),
    );
  sub.add(local$.pipe(concatMap(shared)).subscribe());
  // The watch starts with every record the table holds, so one opened again (after it ended or
  // failed: NATS away, the bucket recreated) catches up on every change made meanwhile.
  const bad = (key: string, error: string) => log.warn({ key, error }, 'cluster: a shared key entry is not a key record; skipped');
  sub.add(
    defer(() => keyRecords(buckets, bad))
      .pipe(retry({ delay: () => timer(REWATCH_MS) }), repeat({ delay: () => timer(REWATCH_MS) }))
      .subscribe((r) => keys.merge(r)),
  );

  // A counter the table has never held starts from what this process counted (a first cluster start).
  sub.add(
    from(quota.current())
      .pipe(concatMap((d) => defer(() => seedCounts(buckets, d).catch(warn('quota not seeded')))))
      .subscribe(),
  );
  // The watch follows the current month; at a month's turn it is opened again on the new one.
  sub.add(
    interval(60_000, asyncScheduler)
      .pipe(
        startWith(0),
        map(() => monthOf(now())),
        distinctUntilChanged(),
        switchMap((month) => defer(() => sharedCounts(buckets, month)).pipe(retry({ delay: () => timer(REWATCH_MS) }))),
      )
      .subscribe(({ keyId, total }) => quota.applyShared(keyId, total)),
  );
  sub.add(
    interval(opts.flushMs ?? QUOTA_FLUSH_MS, asyncScheduler)
      .pipe(concatMap(() => flushCounts(buckets, quota, warn)))
      .subscribe(),
  );
  return {
    async close() {
      sub.unsubscribe();
      await lastValueFrom(from(flushCounts(buckets, quota, warn)), { defaultValue: undefined });
    },
  };
}

/** The running replication of a process's access layer. */
export interface Replication {
  /** Stops following the shared tables and adds the last counted requests to them. */
  close(): Promise<void>;
}

/** Adds what this process counted to the shared counters; a delta that cannot be added is kept for the next flush. */
function flushCounts(buckets: AccessBuckets, quota: QuotaLedger, warn: (what: string) => (e: unknown) => void): Promise<void> | typeof EMPTY {
  const deltas = quota.takeDeltas();
  if (deltas.length === 0) return EMPTY;
  return Promise.all(
    deltas.map((d) =>
      addCounts(buckets, d).then(
        (total) => quota.settle(d.keyId, total),
        (e: unknown) => {
          quota.unsettle(d.keyId);
          warn(`quota of ${d.keyId} not shared`)(e);
        },
      ),
    ),
  ).then(() => undefined);
}
