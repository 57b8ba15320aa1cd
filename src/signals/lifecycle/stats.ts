import type { OpportunityRecord } from './record.js';

/** Figures of one venue pair and category over a window. */
export interface PairStats {
  /** The two venues (slugs), sorted; an EV entry has one venue. */
  readonly venues: readonly string[];
  readonly category: string | null;
  readonly count: number;
  readonly median_duration_ms: number;
  readonly p90_duration_ms: number;
  readonly median_peak_roi: number;
  /** Σ ROI-weighted executable size (contracts). */
  readonly total_executable_size: number;
  /** Opportunities by the UTC hour of day they opened, 0 to 23. */
  readonly by_hour: readonly number[];
}

/**
 * Per venue pair and category: count, median and p90 duration, median peak ROI, total executable
 * size and openings per hour of day (UTC), busiest pair first.
 */
export function pairStats(records: readonly OpportunityRecord[]): PairStats[] {
  const acc = new Map<string, { venues: readonly string[]; category: string | null; durations: number[]; rois: number[]; size: number; hours: number[] }>();
  for (const r of records) {
    const k = `${r.platforms.join('/')}|${r.category ?? ''}`;
    let a = acc.get(k);
    if (!a) acc.set(k, (a = { venues: r.platforms, category: r.category, durations: [], rois: [], size: 0, hours: new Array<number>(24).fill(0) }));
    a.durations.push(r.duration_ms);
    a.rois.push(r.peak_roi);
    a.size += r.roi_weighted_size;
    a.hours[new Date(r.first_seen).getUTCHours()]!++;
  }
  const out: PairStats[] = [];
  for (const a of acc.values()) {
    a.durations.sort((x, y) => x - y);
    a.rois.sort((x, y) => x - y);
    out.push({
      venues: a.venues,
      category: a.category,
      count: a.durations.length,
      median_duration_ms: quantile(a.durations, 0.5),
      p90_duration_ms: quantile(a.durations, 0.9),
      median_peak_roi: Math.round(quantile(a.rois, 0.5) * 10_000) / 10_000,
      total_executable_size: Math.round(a.size * 100) / 100,
      by_hour: a.hours,
    });
  }
  return out.sort((x, y) => y.count - x.count || x.venues.join().localeCompare(y.venues.join()));
}

/** The q-quantile of sorted values, interpolated between the two nearest ranks. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}
