import type { GroupSource, SignalGroup } from '../../src/signals/engine.js';
import { applyEvent, type EngineState } from '../../src/state/engine.js';

const NO_GROUPS: readonly number[] = [];

/**
 * A fixed set of match groups for the signal benches (the matcher is measured in
 * bench/matching.bench.ts): group g holds market `M<g>` of each of `venues`.
 */
export class BenchGroups implements GroupSource {
  readonly groups: SignalGroup[] = [];
  /** venue → market → groups, nested as the matching service keeps it (no key string per lookup). */
  private readonly byMarket = new Map<string, Map<string, number[]>>();

  constructor(count: number, venues: readonly string[]) {
    for (let g = 1; g <= count; g++) {
      const members = venues.map((v) => ({ venue: v, marketId: `M${g}`, inverted: false }));
      this.groups.push({ groupId: g, title: `Group ${g}`, members });
      for (const v of venues) {
        let m = this.byMarket.get(v);
        if (!m) this.byMarket.set(v, (m = new Map()));
        m.set(`M${g}`, [g]);
      }
    }
  }

  group(id: number): SignalGroup | undefined {
    return this.groups[id - 1];
  }

  groupsOfMarket(venue: string, marketId: string): readonly number[] {
    return this.byMarket.get(venue)?.get(marketId) ?? NO_GROUPS;
  }

  allGroups(): Iterable<SignalGroup> {
    return this.groups;
  }
}

/**
 * Lists market `M<g>` of each of `venues` for groups 1..`count` in `state`, each with a 10-level
 * book around a fair price drawn from `r` (the venues' mids within 3 cents of it), all at time `t`.
 */
export function seedBooks(state: EngineState, count: number, venues: readonly string[], r: () => number, t: number): void {
  for (let g = 1; g <= count; g++) {
    const fair = 2000 + Math.floor(r() * 6000);
    for (const v of venues) {
      const mid = fair + Math.floor((r() - 0.5) * 600);
      const bids: [number, number][] = Array.from({ length: 10 }, (_, i) => [Math.floor(mid / 100) * 100 - 100 - i * 100, 100 + i * 10]);
      const asks: [number, number][] = Array.from({ length: 10 }, (_, i) => [Math.floor(mid / 100) * 100 + 100 + i * 100, 100 + i * 10]);
      applyEvent(state, { type: 'market', venue: v, marketId: `M${g}`, title: `M${g}`, status: 'active', timestamp: t, localTimestamp: t });
      applyEvent(state, { type: 'book_snapshot', venue: v, marketId: `M${g}`, instrument: `M${g}`, bids, asks, timestamp: t, localTimestamp: t });
    }
  }
}
