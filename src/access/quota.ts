import type { Database } from 'lmdb';
import { GROUP_HEADER, type Plan, type QuotaGroup } from './plans.js';

interface Bucket {
  tokens: number;
  at: number;
}

interface MonthCounts {
  month: string;
  count: number;
  groups: Partial<Record<QuotaGroup, number>>;
}

export type QuotaVerdict = { readonly ok: true } | { readonly ok: false; readonly retryAfterSec: number; readonly message: string };

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

const show = (limit: number, used: number): string => (limit === 0 ? 'unlimited' : String(Math.max(0, limit - used)));

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
  private timer: NodeJS.Timeout | undefined;

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

  private counts(keyId: string, month: string): MonthCounts {
    let c = this.months.get(keyId);
    if (!c || c.month !== month) this.months.set(keyId, (c = { month, count: 0, groups: {} }));
    return c;
  }

  /** The per-second bucket: takes a token or says when one will be there. Sets the second headers. */
  rate(keyId: string, plan: Plan, headers: Record<string, string>): QuotaVerdict {
    const lim = plan.perSecond;
    if (lim === 0) {
      headers['X-RateLimit-Limit-Second'] = 'unlimited';
      headers['X-RateLimit-Remaining-Second'] = 'unlimited';
      return { ok: true };
    }
    const now = this.now();
    let b = this.buckets.get(keyId);
    if (!b) this.buckets.set(keyId, (b = { tokens: lim, at: now }));
    b.tokens = Math.min(lim, b.tokens + ((now - b.at) / 1000) * lim);
    b.at = now;
    headers['X-RateLimit-Limit-Second'] = String(lim);
    if (b.tokens < 1) {
      headers['X-RateLimit-Remaining-Second'] = '0';
      return { ok: false, retryAfterSec: Math.max(1, Math.ceil((1 - b.tokens) / lim)), message: `per-second limit of ${lim} requests exceeded` };
    }
    b.tokens -= 1;
    headers['X-RateLimit-Remaining-Second'] = String(Math.floor(b.tokens));
    return { ok: true };
  }

  /** Counts one request against the month (and its group). Sets the month headers. */
  consume(keyId: string, plan: Plan, group: QuotaGroup | undefined, headers: Record<string, string>): QuotaVerdict {
    const now = this.now();
    const c = this.counts(keyId, monthOf(now));
    const gLimit = group ? plan.groups[group] : 0;
    const gUsed = group ? (c.groups[group] ?? 0) : 0;
    const monthOver = plan.monthly !== 0 && c.count >= plan.monthly;
    const groupOver = group !== undefined && gLimit !== 0 && gUsed >= gLimit;
    if (!monthOver && !groupOver) {
      c.count++;
      if (group) c.groups[group] = gUsed + 1;
      this.dirty.add(keyId);
    }
    monthHeaders(plan, group, c, headers);
    if (monthOver) return { ok: false, retryAfterSec: secondsToNextMonth(now), message: `monthly limit of ${plan.monthly} requests exceeded` };
    if (groupOver)
      return { ok: false, retryAfterSec: secondsToNextMonth(now), message: `monthly ${group!.replace('_', '-')} quota of ${gLimit} requests exceeded` };
    return { ok: true };
  }

  /**
   * Sets every rate-limit header of a request refused before it is counted (403, a per-second
   * 429, a 400), without taking a token or counting it: spec 8 reports them on every keyed response.
   */
  peek(keyId: string, plan: Plan, group: QuotaGroup | undefined, headers: Record<string, string>): void {
    if (headers['X-RateLimit-Limit-Second'] === undefined) {
      const b = this.buckets.get(keyId);
      const tokens = b ? Math.min(plan.perSecond, b.tokens + ((this.now() - b.at) / 1000) * plan.perSecond) : plan.perSecond;
      headers['X-RateLimit-Limit-Second'] = plan.perSecond === 0 ? 'unlimited' : String(plan.perSecond);
      headers['X-RateLimit-Remaining-Second'] = plan.perSecond === 0 ? 'unlimited' : String(Math.floor(tokens));
    }
    monthHeaders(plan, group, this.months.get(keyId)?.month === monthOf(this.now()) ? this.months.get(keyId) : undefined, headers);
  }

  /** Used counts of a key this month (for tests and `crossbook keys list`). */
  used(keyId: string): MonthCounts | undefined {
    return this.months.get(keyId);
  }

  /** Writes changed counters; resolves when durable. */
  async flush(): Promise<void> {
    if (!this.db || this.dirty.size === 0) return;
    const ids = [...this.dirty];
    this.dirty.clear();
    await Promise.all(ids.map((id) => this.db!.put(`m:${id}`, { ...this.months.get(id)! })));
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

/** The month headers, and the group's on a group route, from this month's counts (none yet: undefined). */
function monthHeaders(plan: Plan, group: QuotaGroup | undefined, c: MonthCounts | undefined, headers: Record<string, string>): void {
  headers['X-RateLimit-Limit-Month'] = plan.monthly === 0 ? 'unlimited' : String(plan.monthly);
  headers['X-RateLimit-Remaining-Month'] = show(plan.monthly, c?.count ?? 0);
  if (group) {
    const gLimit = plan.groups[group];
    const h = GROUP_HEADER[group];
    headers[`X-RateLimit-Limit-${h}-Month`] = gLimit === 0 ? 'unlimited' : String(gLimit);
    headers[`X-RateLimit-Remaining-${h}-Month`] = show(gLimit, c?.groups[group] ?? 0);
  }
}
