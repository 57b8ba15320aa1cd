import type { GroupSource, SignalGroup } from '../../src/signals/engine.js';

/** Match groups a test edits by hand (the matcher is tested elsewhere). */
export class HandGroups implements GroupSource {
  readonly groups = new Map<number, SignalGroup>();
  group(id: number): SignalGroup | undefined {
    return this.groups.get(id);
  }
  groupsOfMarket(venue: string, marketId: string): readonly number[] {
    return [...this.groups.values()].filter((g) => g.members.some((m) => m.venue === venue && m.marketId === marketId)).map((g) => g.groupId);
  }
  allGroups(): Iterable<SignalGroup> {
    return this.groups.values();
  }
}
