import type { Database } from 'lmdb';
import { GROUP_HEADER, type Plan, type QuotaGroup } from './plans.js';

interface Bucket {
  tokens: number;
  at: number;
}

/** A key's requests in one UTC month, overall and per quota group. */
export interface MonthCounts {
  month: string;
  count: number;
  groups: Partial<Record<QuotaGroup, number>>;
}

/** A cluster's shared total of a key's month, at the revision of the shared store that holds it. */
export interface SharedCounts extends MonthCounts {
  readonly revision: number;
}

/** Requests counted here and not yet added to the shared total: one key's, one month's. */
export interface CountDelta extends MonthCounts {
  readonly keyId: string;
}

export type QuotaVerdict = { readonly ok: true } | { readonly ok: false; readonly retryAfterSec: number; readonly message: string };

/** The verdict of a request let through (one object for all of them). */
const OK: QuotaVerdict = Object.freeze({ ok: true });

/**
 * Where the ledger writes a response's rate-limit headers (spec 8): each field holds its header
 * lines, "\r\nName: value" joined, as the HTTP head takes them (one string per response rather
 * than an object of headers walked and joined per request). `rateSecond` empty or unset: the
 * per-second bucket has not been consulted for this request.
 */
export interface RateLimitLines {
  rateSecond?: string;
  rateMonth?: string;
}

/** Each group's month header lines, up to their values, built once rather than per request. */
const GROUP_LINES = Object.fromEntries(
  Object.entries(GROUP_HEADER).map(([g, h]) => [
    g,
    {
      limit: `\r\nX-RateLimit-Limit-${h}-Month: `,
      remaining: `\r\nX-RateLimit-Remaining-${h}-Month: `,
      unlimited: `\r\nX-RateLimit-Limit-${h}-Month: unlimited\r\nX-RateLimit-Remaining-${h}-Month: unlimited`,
    },
  ]),
) as Readonly<Record<QuotaGroup, { readonly limit: string; readonly remaining: string; readonly unlimited: string }>>;

/** The second lines of a plan without a per-second limit. */
const UNLIMITED_SECOND = '\r\nX-RateLimit-Limit-Second: unlimited\r\nX-RateLimit-Remaining-Second: unlimited';
/** The month lines of a plan without a monthly limit. */
const UNLIMITED_MONTH = '\r\nX-RateLimit-Limit-Month: unlimited\r\nX-RateLimit-Remaining-Month: unlimited';

/** The per-second lines of a limited plan. */
const secondLines = (limit: number, remaining: number): string => `\r\nX-RateLimit-Limit-Second: ${limit}\r\nX-RateLimit-Remaining-Second: ${remaining}`;

let cachedMonth = '';
let cachedFrom = 0;
let cachedTo = -1;

/** "2026-11" for a time in ms (UTC months). Cached for the current month: it runs on every request. */
export function monthOf(ms: number): string {
  if (ms >= cachedFrom && ms < cachedTo) return cachedMonth;
  const d = new Date(ms);
  cachedFrom = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  cachedTo = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  cachedMonth = d.toISOString().slice(0, 7);
  return cachedMonth;
}

/** Seconds from `ms` to the start of the next UTC month (at least 1). */
export function secondsToNextMonth(ms: number): number {
  const d = new Date(ms);
  const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - ms) / 1000));
}

/**
 * How often changed monthly counters are written. A request counted within this interval (plus one
 * LMDB commit) before the process is killed with -9 is not counted after the restart; at 250 ms the
 * window stays under one second as long as the event loop lags less than about 700 ms.
 */
export const QUOTA_FLUSH_MS = 250;

/**
 * Per-key rate limits (spec 5.6, 8): a per-second token bucket and monthly counters, overall and
 * per quota group. All checks are in memory; monthly counters are written to LMDB in the
 * background (`flush`, every `QUOTA_FLUSH_MS`) and read back at start-up, so a restart does not reset
 * anyone's month and the request path does no I/O. A limit of 0 is unlimited (headers say
 * "unlimited").
 */
export class QuotaLedger {
  private readonly buckets = new Map<string, Bucket>();
  private readonly months = new Map<string, MonthCounts>();
  private readonly dirty = new Set<string>();
  /** Counter writes begun and not yet settled (a flush waits for the ones an earlier flush began). */
  private readonly writing = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  /**
   * Cluster sharing (`share()`): the month counts become the shared total plus what this process
   * counted since (`inflight`: taken to be added to the shared total; `pending`: not yet taken).
   */
  private sharing = false;
  private readonly shared = new Map<string, SharedCounts>();
  private readonly pending = new Map<string, MonthCounts>();
  private readonly inflight = new Map<string, MonthCounts>();

  constructor(
    private readonly db: Database | undefined,
    private readonly now: () => number = Date.now,
  ) {
    if (db) {
      const month = monthOf(this.now());
      for (const { key, value } of db.getRange({ start: 'm:', end: 'm;' })) {
        const v = value as MonthCounts;
        if (v.month === month) this.months.set(String(key).slice(2), v);
      }
    }
  }

  /** The key whose counts were read last, and those counts (a key's entry is only ever replaced by `counts`). */
  private lastKey: string | undefined;
  private lastCounts: MonthCounts | undefined;
  /** A key known to be in `dirty` since the last flush (requests of one key in a row add it once). */
  private lastDirty: string | undefined;

  private counts(keyId: string, month: string): MonthCounts {
    // The previous request's key first: comparing it is cheaper than a map lookup.
    let c = keyId === this.lastKey ? this.lastCounts : this.months.get(keyId);
    if (!c || c.month !== month) this.months.set(keyId, (c = { month, count: 0, groups: {} }));
    this.lastKey = keyId;
    this.lastCounts = c;
    return c;
  }

  /** The per-second bucket: takes a token or says when one will be there. Sets the second headers. */
  rate(keyId: string, plan: Plan, headers: RateLimitLines): QuotaVerdict {
    const lim = plan.perSecond;
    if (lim === 0) {
      headers.rateSecond = UNLIMITED_SECOND;
      return OK;
    }
    const now = this.now();
    let b = this.buckets.get(keyId);
    if (!b) this.buckets.set(keyId, (b = { tokens: lim, at: now }));
    b.tokens = Math.min(lim, b.tokens + ((now - b.at) / 1000) * lim);
    b.at = now;
    if (b.tokens < 1) {
      headers.rateSecond = secondLines(lim, 0);
      return { ok: false, retryAfterSec: Math.max(1, Math.ceil((1 - b.tokens) / lim)), message: `per-second limit of ${lim} requests exceeded` };
    }
    b.tokens -= 1;
    headers.rateSecond = secondLines(lim, Math.floor(b.tokens));
    return OK;
  }

  /** Counts one request against the month (and its group). Sets the month headers. */
  consume(keyId: string, plan: Plan, group: QuotaGroup | undefined, headers: RateLimitLines): QuotaVerdict {
    const now = this.now();
    const c = this.counts(keyId, monthOf(now));
    const gLimit = group ? plan.groups[group] : 0;
    const gUsed = group ? (c.groups[group] ?? 0) : 0;
    const monthOver = plan.monthly !== 0 && c.count >= plan.monthly;
    const groupOver = group !== undefined && gLimit !== 0 && gUsed >= gLimit;
    if (!monthOver && !groupOver) {
      c.count++;
      if (group) c.groups[group] = gUsed + 1;
      if (keyId !== this.lastDirty) {
        this.dirty.add(keyId);
        this.lastDirty = keyId;
      }
      if (this.sharing) addTo(this.pending, keyId, c.month, 1, group);
    }
    headers.rateMonth = monthLines(plan, group, c);
    if (monthOver) return { ok: false, retryAfterSec: secondsToNextMonth(now), message: `monthly limit of ${plan.monthly} requests exceeded` };
    if (groupOver)
      return { ok: false, retryAfterSec: secondsToNextMonth(now), message: `monthly ${group!.replace('_', '-')} quota of ${gLimit} requests exceeded` };
    return OK;
  }

  /**
   * Sets every rate-limit header of a request refused before it is counted (403, a per-second
   * 429, a 400), without taking a token or counting it: spec 8 reports them on every keyed response.
   */
  peek(keyId: string, plan: Plan, group: QuotaGroup | undefined, headers: RateLimitLines): void {
    if (!headers.rateSecond) {
      const b = this.buckets.get(keyId);
      const tokens = b ? Math.min(plan.perSecond, b.tokens + ((this.now() - b.at) / 1000) * plan.perSecond) : plan.perSecond;
      headers.rateSecond = plan.perSecond === 0 ? UNLIMITED_SECOND : secondLines(plan.perSecond, Math.floor(tokens));
    }
    headers.rateMonth = monthLines(plan, group, this.months.get(keyId)?.month === monthOf(this.now()) ? this.months.get(keyId) : undefined);
  }

  /** Used counts of a key this month (for tests and `crossbook keys list`). */
  used(keyId: string): MonthCounts | undefined {
    return this.months.get(keyId);
  }

  /**
   * Makes the month counts a cluster's: from now on each request counted here is also kept as a
   * delta for `takeDeltas`, and `applyShared` sets the total the other processes' requests make.
   */
  share(): void {
    this.sharing = true;
  }

  /** This month's counts held here (to seed a shared store that has none for a key yet). */
  current(): CountDelta[] {
    const month = monthOf(this.now());
    return [...this.months].filter(([, c]) => c.month === month).map(([keyId, c]) => ({ keyId, ...copy(c) }));
  }

  /**
   * The requests counted here since the last take, per key, to be added to the shared totals; they
   * still count here until `settle` (added) or `unsettle` (not added: taken again next time).
   */
  takeDeltas(): CountDelta[] {
    const out: CountDelta[] = [];
    for (const [keyId, d] of this.pending) {
      out.push({ keyId, ...d });
      const f = this.inflight.get(keyId);
      if (f && f.month === d.month) merge(f, d);
      else this.inflight.set(keyId, copy(d));
    }
    this.pending.clear();
    return out;
  }

  /**
   * A taken delta was added to the shared total, which is now `total`. (A watch may bring that total
   * a moment before: until then the delta counts twice here, which errs towards refusing.)
   */
  settle(keyId: string, total: SharedCounts): void {
    this.inflight.delete(keyId);
    this.applyShared(keyId, total);
  }

  /** A taken delta could not be added (the shared store is unreachable): it is taken again next time. */
  unsettle(keyId: string): void {
    const f = this.inflight.get(keyId);
    if (!f) return;
    this.inflight.delete(keyId);
    const p = this.pending.get(keyId);
    if (p && p.month === f.month) merge(p, f);
    else if (!p) this.pending.set(keyId, f);
  }

  /**
   * The shared total of a key's month, as the shared store holds it (every process's requests that
   * reached it): kept unless a newer revision is held, and the key's counts become it plus what is
   * counted here and not yet in it. Another month's total changes nothing.
   */
  applyShared(keyId: string, total: SharedCounts): void {
    const had = this.shared.get(keyId);
    if (!had || had.month !== total.month || had.revision < total.revision) this.shared.set(keyId, total);
    this.recount(keyId);
  }

  /** A key's month counts: the shared total plus the requests counted here that it does not hold yet. */
  private recount(keyId: string): void {
    const now = monthOf(this.now());
    const total = this.shared.get(keyId);
    if (total?.month !== now) return;
    const c = this.counts(keyId, now);
    c.count = total.count;
    c.groups = { ...total.groups };
    for (const local of [this.inflight.get(keyId), this.pending.get(keyId)]) if (local?.month === now) merge(c, local);
    this.dirty.add(keyId);
  }

  /**
   * Writes changed counters; resolves when every count made before the call is durable, including
   * the writes an earlier flush began and has not finished (the timer's, say): with nothing left to
   * write it still waits for those, so "flushed" never means "in flight".
   */
  async flush(): Promise<void> {
    if (!this.db) return;
    if (this.dirty.size > 0) {
      const ids = [...this.dirty];
      this.dirty.clear();
      this.lastDirty = undefined;
      const w = Promise.all(ids.map((id) => this.db!.put(`m:${id}`, { ...this.months.get(id)! })));
      this.writing.add(w);
      const done = (): void => void this.writing.delete(w);
      w.then(done, done);
    }
    if (this.writing.size > 0) await Promise.all(this.writing);
  }

  /** Writes changed counters every `everyMs` until `stop`. */
  start(everyMs = QUOTA_FLUSH_MS): void {
    this.timer ??= setInterval(() => void this.flush(), everyMs);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

function copy(c: MonthCounts): MonthCounts {
  return { month: c.month, count: c.count, groups: { ...c.groups } };
}

/** Adds `d`'s counts into `into` (same month). */
function merge(into: MonthCounts, d: MonthCounts): void {
  into.count += d.count;
  for (const [g, n] of Object.entries(d.groups) as [QuotaGroup, number][]) into.groups[g] = (into.groups[g] ?? 0) + n;
}

/** Counts `n` requests (in `group`) for a key's month in a map of deltas; another month's delta is replaced. */
function addTo(map: Map<string, MonthCounts>, keyId: string, month: string, n: number, group: QuotaGroup | undefined): void {
  let d = map.get(keyId);
  if (!d || d.month !== month) map.set(keyId, (d = { month, count: 0, groups: {} }));
  d.count += n;
  if (group) d.groups[group] = (d.groups[group] ?? 0) + n;
}

/** The month header lines, and the group's on a group route, from this month's counts (none yet: undefined). */
function monthLines(plan: Plan, group: QuotaGroup | undefined, c: MonthCounts | undefined): string {
  const month =
    plan.monthly === 0
      ? UNLIMITED_MONTH
      : `\r\nX-RateLimit-Limit-Month: ${plan.monthly}\r\nX-RateLimit-Remaining-Month: ${Math.max(0, plan.monthly - (c?.count ?? 0))}`;
  if (!group) return month;
  const gLimit = plan.groups[group];
  const g = GROUP_LINES[group];
  return gLimit === 0 ? month + g.unlimited : `${month}${g.limit}${gLimit}${g.remaining}${Math.max(0, gLimit - (c?.groups[group] ?? 0))}`;
}
