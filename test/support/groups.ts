import type { GroupSource, SignalGroup } from '../../src/signals/engine.js';

/** The groups by id: every change counts `token` up, the index a caller's held copy of a market's groups is checked against. */
class IndexedGroups extends Map<number, SignalGroup> {
  token = 0;
  override set(id: number, g: SignalGroup): this {
    this.token++;
    return super.set(id, g);
  }
  override delete(id: number): boolean {
    this.token++;
    return super.delete(id);
  }
  override clear(): void {
    this.token++;
    super.clear();
  }
}

/** Match groups a test edits by hand (the matcher is tested elsewhere). */
export class HandGroups implements GroupSource {
  readonly groups: Map<number, SignalGroup> = new IndexedGroups();
  group(id: number): SignalGroup | undefined {
    return this.groups.get(id);
  }
  groupsOfMarket(venue: string, marketId: string): readonly number[] {
    return [...this.groups.values()].filter((g) => g.members.some((m) => m.venue === venue && m.marketId === marketId)).map((g) => g.groupId);
  }
  allGroups(): Iterable<SignalGroup> {
    return this.groups.values();
  }
  index(): number {
    return (this.groups as IndexedGroups).token;
  }
}
