import type { GroupSource, SignalGroup } from '../../src/signals/engine.js';

/**
 * A fixed set of match groups for the signal benches (the matcher is measured in
 * bench/matching.bench.ts): group g holds market `M<g>` of each of `venues`.
 */
export class BenchGroups implements GroupSource {
  readonly groups: SignalGroup[] = [];
  private readonly byMarket = new Map<string, number[]>();

  constructor(count: number, venues: readonly string[]) {
    for (let g = 1; g <= count; g++) {
      const members = venues.map((v) => ({ venue: v, marketId: `M${g}`, inverted: false }));
      this.groups.push({ groupId: g, title: `Group ${g}`, members });
      for (const v of venues) this.byMarket.set(`${v}:M${g}`, [g]);
    }
  }

  group(id: number): SignalGroup | undefined {
    return this.groups[id - 1];
  }

  groupsOfMarket(venue: string, marketId: string): readonly number[] {
    return this.byMarket.get(`${venue}:${marketId}`) ?? [];
  }

  allGroups(): Iterable<SignalGroup> {
    return this.groups;
  }
}
