import type { Database } from 'lmdb';
import type { OpportunityKind, OpportunityRecord } from './record.js';
import type { RecordSink } from './tracker.js';

/** Filters of a history page or a stats window. Times in ms; `to` exclusive. */
export interface HistoryFilter {
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  /** Keep records with a leg on one of these venue slugs. */
  readonly platforms?: readonly string[] | undefined;
  readonly category?: string | undefined;
  readonly minRoi?: number | undefined;
  readonly minDurationMs?: number | undefined;
}

/** Where a page ends: the key of its last record (keyset paging, newest first). */
export interface HistoryCursor {
  readonly closedAt: number;
  readonly id: string;
}

export interface HistoryPage {
  readonly records: OpportunityRecord[];
  /** Where the next page starts, or undefined at the end of the range. */
  readonly next: HistoryCursor | undefined;
}

type Key = [OpportunityKind, number, string];

/**
 * Closed opportunities in LMDB, keyed [kind, closed_at, id] so that a kind's history reads newest
 * first by a reverse range and expires oldest first by a forward one. Writes are lmdb-js's batched
 * async puts (a failure is counted on the store, not thrown into the signal flow).
 */
export class OpportunityLog implements RecordSink {
  /** Records written since start, per kind. */
  readonly written = { arb: 0, ev: 0 };
  pruned = 0;

  /** How long a closed opportunity is kept. */
  readonly retentionMs: number;
  /** How often `prune` should run. */
  readonly pruneEveryMs: number;
  private readonly onWriteError: (e: Error) => void;

  constructor(
    private readonly db: Database,
    opts: { retentionMs: number; pruneEveryMs?: number | undefined; onWriteError?: (e: Error) => void },
  ) {
    this.retentionMs = opts.retentionMs;
    this.pruneEveryMs = opts.pruneEveryMs ?? 60_000;
    this.onWriteError = opts.onWriteError ?? (() => undefined);
  }

  append(r: OpportunityRecord): void {
    this.written[r.kind]++;
    this.db.put([r.kind, r.closed_at, r.opportunity_id] satisfies Key, r).catch((e: unknown) => this.onWriteError(e as Error));
  }

  /** Resolves once every record appended so far is committed, so a history read sees it (writes are batched). */
  async committed(): Promise<void> {
    await this.db.committed;
  }

  /**
   * One page of a kind's history, newest first: records matching `f`, after `cursor`. At most
   * `scanLimit` records are read per page; a page that stops there returns what matched with a
   * cursor to go on from, so a sparse filter over a long history still answers in bounded time.
   */
  page(kind: OpportunityKind, f: HistoryFilter, limit: number, cursor?: HistoryCursor, scanLimit = 20_000): HistoryPage {
    const start: (string | number)[] = cursor ? [kind, cursor.closedAt, cursor.id] : [kind, f.to ?? Number.MAX_SAFE_INTEGER];
    const end = [kind, f.from ?? 0];
    const records: OpportunityRecord[] = [];
    let scanned = 0;
    let last: HistoryCursor | undefined;
    for (const { key, value } of this.db.getRange({ start, end, reverse: true })) {
      const k = key as Key;
      if (cursor && k[1] === cursor.closedAt && k[2] === cursor.id) continue;
      last = { closedAt: k[1], id: k[2] };
      const r = value as OpportunityRecord;
      if (matches(r, f)) records.push(r);
      if (records.length >= limit || ++scanned >= scanLimit) return { records, next: last };
    }
    return { records, next: undefined };
  }

  /** Every record of a kind closed in [from, to), oldest first, up to `max`; `truncated` when there were more. */
  scan(kind: OpportunityKind, f: HistoryFilter & { from: number; to: number }, max: number): { records: OpportunityRecord[]; truncated: boolean } {
    const records: OpportunityRecord[] = [];
    for (const { value } of this.db.getRange({ start: [kind, f.from], end: [kind, f.to] })) {
      const r = value as OpportunityRecord;
      if (!matches(r, f)) continue;
      if (records.length >= max) return { records, truncated: true };
      records.push(r);
    }
    return { records, truncated: false };
  }

  /**
   * The closed record of `id` (undefined: none kept). Its key starts at the millisecond it opened
   * (in the id: `<kind>_<group>_<opened ms>_<n>`, base 36), so the search walks the records closed
   * from then on, at most `scanLimit` of them.
   */
  find(kind: OpportunityKind, id: string, scanLimit = 200_000): OpportunityRecord | undefined {
    const opened = Number.parseInt(id.split('_')[2] ?? '', 36);
    if (!id.startsWith(`${kind}_`) || !Number.isSafeInteger(opened)) return undefined;
    let scanned = 0;
    for (const { key, value } of this.db.getRange({ start: [kind, opened], end: [kind, Number.MAX_SAFE_INTEGER] })) {
      if ((key as Key)[2] === id) return value as OpportunityRecord;
      if (++scanned >= scanLimit) return undefined;
    }
    return undefined;
  }

  /** Removes records closed before `now − retentionMs`, at most `max` per call. Returns how many. */
  prune(now: number, max = 50_000): number {
    const cutoff = now - this.retentionMs;
    let n = 0;
    for (const kind of ['arb', 'ev'] as const) {
      if (n >= max) break;
      for (const key of this.db.getKeys({ start: [kind, 0], end: [kind, cutoff], limit: max - n })) {
        this.db.remove(key).catch((e: unknown) => this.onWriteError(e as Error));
        n++;
      }
    }
    this.pruned += n;
    return n;
  }
}

function matches(r: OpportunityRecord, f: HistoryFilter): boolean {
  if (f.minRoi !== undefined && r.peak_roi < f.minRoi) return false;
  if (f.minDurationMs !== undefined && r.duration_ms < f.minDurationMs) return false;
  if (f.category !== undefined && r.category !== f.category) return false;
  if (f.platforms && !r.platforms.some((p) => f.platforms!.includes(p))) return false;
  return true;
}
