import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from 'lmdb';
import { Subject } from 'rxjs';
import { z } from 'zod';
import { isPlanName, PLAN_NAMES, type PlanName } from './plans.js';

/** A key as stored: never the key itself, only its SHA-256. */
export interface KeyRecord {
  /** Short public id for listing and revoking ("key_" + 12 hex). */
  readonly id: string;
  /** hex SHA-256 of the full key. */
  readonly hash: string;
  /** The first characters of the key, to recognise it in a list ("pmx_AbCd…"). */
  readonly hint: string;
  readonly account: string;
  readonly plan: PlanName;
  readonly createdAt: string;
  /** When `plan` was last set (ISO); absent: at `createdAt`. Orders plan changes between replicas. */
  readonly planAt?: string | undefined;
  revokedAt?: string | undefined;
}

const iso = z.iso.datetime();
/**
 * A key record as another process writes it (a cluster's shared key table): checked before it
 * reaches the local table, so a malformed entry is skipped and changes nothing.
 */
export const KeyRecordSchema = z.object({
  id: z.string().regex(/^key_[0-9a-f]{12}$/),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  hint: z.string().max(64),
  account: z.string().max(200),
  plan: z.enum(PLAN_NAMES),
  createdAt: iso,
  planAt: iso.optional(),
  revokedAt: iso.optional(),
});

const KEY_RE = /^pmx_[A-Za-z0-9_-]{22,128}$/;

/** What `verify` says of a presented key: its active record, or why it is refused. */
export type KeyVerdict = { readonly ok: true; readonly record: KeyRecord } | { readonly ok: false; readonly reason: 'missing' | 'invalid' | 'revoked' };

const MISSING: KeyVerdict = Object.freeze({ ok: false, reason: 'missing' });
const INVALID: KeyVerdict = Object.freeze({ ok: false, reason: 'invalid' });
const REVOKED: KeyVerdict = Object.freeze({ ok: false, reason: 'revoked' });

/** When a record's plan was set. */
const planTime = (r: KeyRecord): string => r.planAt ?? r.createdAt;

/**
 * The newer state of one key from two copies of its record: a revocation wins over an active
 * record, and of two revocations the earlier stands; of two plans the one set later stands (the
 * same time: the greater name, so both sides pick the same). Replicas that exchange records in any
 * order end up with the same one. Returns `a` when `b` adds nothing to it.
 */
export function mergeKeyRecords(a: KeyRecord, b: KeyRecord): KeyRecord {
  const revokedAt = b.revokedAt && (!a.revokedAt || b.revokedAt < a.revokedAt) ? b.revokedAt : a.revokedAt;
  const newerPlan = planTime(b) > planTime(a) || (planTime(b) === planTime(a) && b.plan > a.plan);
  if (revokedAt === a.revokedAt && !newerPlan) return a;
  const next: KeyRecord = newerPlan ? { ...a, plan: b.plan, planAt: planTime(b) } : { ...a };
  if (revokedAt) next.revokedAt = revokedAt;
  return next;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * API keys in LMDB (spec 5): `pmx_` + 192 random bits (base64url). Only hashes are stored. The
 * server holds the table in memory and re-reads it when the `keys` version in LMDB changes
 * (checked every `pollMs`), so keys created or revoked by `crossbook keys` in another process take
 * effect within a second without any I/O on the request path.
 */
export class KeyStore {
  private byHash = new Map<string, KeyRecord>();
  /**
   * Keys already verified, by the presented string: saves a SHA-256 per request (a large share of
   * the access layer's cost). Cleared whenever the table is re-read, so revocation still applies
   * within a poll interval.
   */
  private verified = new Map<string, KeyVerdict>();
  /** The last key verified and its verdict (forgotten with `verified`). */
  private lastKey: string | undefined;
  private lastVerdict: KeyVerdict = MISSING;
  private seenVersion = -1;
  private timer: NodeJS.Timeout | undefined;
  /** Records new or changed when the table is re-read (created or revoked here or by another process). */
  readonly changes$ = new Subject<KeyRecord>();

  constructor(private readonly db: Database) {
    this.reload();
  }

  /** Creates a key; returns the plaintext (shown once) and its record. */
  create(plan: PlanName, account = 'default'): { key: string; record: KeyRecord } {
    if (!isPlanName(plan)) throw new Error(`unknown plan "${plan}"`);
    const key = `pmx_${randomBytes(24).toString('base64url')}`;
    const record: KeyRecord = {
      id: `key_${randomBytes(6).toString('hex')}`,
      hash: hashKey(key),
      hint: `${key.slice(0, 8)}…`,
      account,
      plan,
      createdAt: new Date().toISOString(),
    };
    this.db.transactionSync(() => {
      this.db.putSync(`k:${record.hash}`, record);
      this.db.putSync('version', ((this.db.get('version') as number | undefined) ?? 0) + 1);
    });
    this.reload();
    return { key, record };
  }

  /** Revokes by key or by id. Returns the record, or undefined when there is no such key. */
  revoke(keyOrId: string): KeyRecord | undefined {
    const rec = keyOrId.startsWith('pmx_') ? this.byHash.get(hashKey(keyOrId)) : this.list().find((r) => r.id === keyOrId);
    if (!rec) return undefined;
    if (rec.revokedAt) return rec;
    const updated: KeyRecord = { ...rec, revokedAt: new Date().toISOString() };
    this.db.transactionSync(() => {
      this.db.putSync(`k:${rec.hash}`, updated);
      this.db.putSync('version', ((this.db.get('version') as number | undefined) ?? 0) + 1);
    });
    this.reload();
    return updated;
  }

  /** Moves a key (by key or id) to another plan. Returns the record, or undefined when there is no such key. */
  setPlan(keyOrId: string, plan: PlanName): KeyRecord | undefined {
    if (!isPlanName(plan)) throw new Error(`unknown plan "${plan}"`);
    const rec = keyOrId.startsWith('pmx_') ? this.byHash.get(hashKey(keyOrId)) : this.list().find((r) => r.id === keyOrId);
    if (!rec || rec.plan === plan) return rec;
    // Later than the plan it replaces even when the wall clock stepped back, so replicas take it.
    const at = Math.max(Date.now(), Date.parse(planTime(rec)) + 1);
    const updated: KeyRecord = { ...rec, plan, planAt: new Date(at).toISOString() };
    this.db.transactionSync(() => {
      this.db.putSync(`k:${rec.hash}`, updated);
      this.db.putSync('version', ((this.db.get('version') as number | undefined) ?? 0) + 1);
    });
    this.reload();
    return updated;
  }

  /**
   * Takes a record from another replica (a cluster's shared key table): stored when it is new here
   * or revokes a key active here (mergeKeyRecords). Returns whether anything changed.
   */
  merge(incoming: KeyRecord): boolean {
    const local = this.byHash.get(incoming.hash);
    const next = local ? mergeKeyRecords(local, incoming) : incoming;
    if (next === local) return false;
    this.db.transactionSync(() => {
      this.db.putSync(`k:${next.hash}`, next);
      this.db.putSync('version', ((this.db.get('version') as number | undefined) ?? 0) + 1);
    });
    this.reload();
    return true;
  }

  list(): KeyRecord[] {
    return [...this.byHash.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /**
   * Finds the active record of a presented key. The lookup is by hash, and the stored hash is
   * compared in constant time, so response timing says nothing about how much of a key matched.
   */
  verify(key: string | undefined): KeyVerdict {
    if (key === undefined || key === '') return MISSING;
    // The previous request's key first: comparing it is cheaper than hashing a fresh string.
    if (key === this.lastKey) return this.lastVerdict;
    const hit = this.verified.get(key);
    if (hit) return this.remember(key, hit);
    if (!KEY_RE.test(key)) return INVALID;
    const h = hashKey(key);
    const rec = this.byHash.get(h);
    if (!rec || !timingSafeEqual(Buffer.from(rec.hash, 'hex'), Buffer.from(h, 'hex'))) return INVALID;
    const verdict: KeyVerdict = rec.revokedAt ? REVOKED : { ok: true, record: rec };
    if (this.verified.size >= 100_000) this.verified.clear();
    this.verified.set(key, verdict);
    return this.remember(key, verdict);
  }

  private remember(key: string, verdict: KeyVerdict): KeyVerdict {
    this.lastKey = key;
    this.lastVerdict = verdict;
    return verdict;
  }

  /** Re-reads the table if another process changed it. */
  reload(): void {
    const v = (this.db.get('version') as number | undefined) ?? 0;
    if (v === this.seenVersion) return;
    const next = new Map<string, KeyRecord>();
    const changed: KeyRecord[] = [];
    for (const { value } of this.db.getRange({ start: 'k:', end: 'k;' })) {
      const r = value as KeyRecord;
      next.set(r.hash, r);
      const before = this.byHash.get(r.hash);
      if (!before || before.revokedAt !== r.revokedAt || before.plan !== r.plan) changed.push(r);
    }
    this.byHash = next;
    this.verified = new Map();
    this.lastKey = undefined;
    this.seenVersion = v;
    if (this.changes$.observed) for (const r of changed) this.changes$.next(r);
  }

  watch(pollMs = 500): void {
    this.timer ??= setInterval(() => this.reload(), pollMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
