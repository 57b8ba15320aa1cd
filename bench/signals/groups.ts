import type { GroupSource, SignalGroup } from '../../src/signals/engine.js';
import type { NormalizedEvent } from '../../src/core/types.js';
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

/**
 * `count` one-level book deltas on random members of the `groups` seeded groups (built from the
 * books as they stand, not applied): a fifth delete a level and some improve a price, so levels
 * move in and out and opportunities open and close. Draws from `r` in a fixed order.
 */
export function randomDeltas(state: EngineState, count: number, groups: number, venues: readonly string[], r: () => number, t: number): NormalizedEvent[] {
  const deltas: NormalizedEvent[] = [];
  for (let i = 0; i < count; i++) {
    const g = 1 + Math.floor(r() * groups);
    const v = venues[Math.floor(r() * 3)]!;
    const book = state.books.instrument(v, `M${g}`)!;
    const side = r() < 0.5 ? 'bid' : 'ask';
    const levels = side === 'bid' ? book.bids : book.asks;
    const p = (levels.length > 0 ? levels.price(Math.floor(r() * Math.min(3, levels.length))) : 5000) + (r() < 0.3 ? (side === 'bid' ? 100 : -100) : 0);
    const size = r() < 0.2 ? 0 : 50 + Math.floor(r() * 200);
    deltas.push({ type: 'book_delta', venue: v, marketId: `M${g}`, instrument: `M${g}`, changes: [[side, p, size]], timestamp: t, localTimestamp: t });
  }
  return deltas;
}
