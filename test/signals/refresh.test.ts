import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Subscription } from 'rxjs';
import { arbFlow } from '../../pipelines/signals.js';
import { loadConfig } from '../../src/config/load.js';
import { VirtualClock } from '../../src/core/clock.js';
import { PAYOUT } from '../../src/core/price.js';
import type { Level, NormalizedEvent } from '../../src/core/types.js';
import { Turn } from '../../src/pipeline/turn.js';
import { SignalEngine, type SignalGroup } from '../../src/signals/engine.js';
import { LifecycleTracker } from '../../src/signals/lifecycle/tracker.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { Rng } from '../../src/sim/rng.js';
import { HandGroups } from '../support/groups.js';

/**
 * A book change that reaches none of the levels its group's last recompute read (below the best,
 * past what a pair could take) refreshes the group instead of recomputing it (`markBook`). Over
 * random events, the engine wired by `arbFlow` reads exactly as one that recomputes every group
 * a change marks: the same lists, opportunity ids, detected_at and `at` times, and the same open
 * opportunities with the same last_seen; and the refresh does happen, often.
 */
const config = loadConfig({ env: {} });
const directory = new VenueDirectory(config);
const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);
const MARKETS = 3;
const STEPS = 4_000;
const VENUES = ['venue_a', 'venue_b', 'venue_h'] as const;
const idOf = (venue: string, i: number): string => `${venue.slice(-1).toUpperCase()}-${i}`;

let state: EngineState;
let groups: HandGroups;
let clock: VirtualClock;
let subs: Subscription;

beforeEach(() => {
  state = new EngineState(config.venues);
  groups = new HandGroups();
  clock = new VirtualClock(T0);
  subs = new Subscription();
});

afterEach(() => subs.unsubscribe());

/** An engine whose every mark recomputes (the plain `mark`, without what a book's last change reached). */
function recomputingEngine(turn: Turn): { engine: SignalEngine; life: LifecycleTracker } {
  const life = new LifecycleTracker(undefined);
  const e = new SignalEngine(state, directory, groups, life, clock);
  const mark = (venue: string, marketId: string): void => {
    if (e.mark(venue, marketId)) turn.touch();
  };
  subs.add(turn.add(() => e.flush()));
  subs.add(state.books.changes$.subscribe((b) => mark(b.venue, b.marketId)));
  subs.add(state.quotes.changes$.subscribe((q) => !q.fromBook && mark(q.venue, q.marketId)));
  subs.add(state.catalog.changes$.subscribe((c) => mark(c.market.venue, c.market.marketId)));
  return { engine: e, life };
}

describe('signal engine refresh', () => {
  it('reads as an engine that recomputes every marked group, ids, times and last_seen included', () => {
    const rand = new Rng(34);
    const r = (): number => rand.next();
    const turnA = new Turn(() => () => {});
    const turnB = new Turn(() => () => {});
    const lifeA = new LifecycleTracker(undefined);
    const a = new SignalEngine(state, directory, groups, lifeA, clock);
    subs.add(arbFlow(state, a, turnA));
    const { engine: b, life: lifeB } = recomputingEngine(turnB);
    let now = T0;
    const base = (venue: string): { venue: string; timestamp: number; localTimestamp: number } => ({ venue, timestamp: now, localTimestamp: now });
    // Deep books (a pair takes a few levels at most), prices on a 1-cent grid around a mid.
    const side = (mid: number, dir: 1 | -1): Level[] =>
      Array.from({ length: 3 + Math.floor(r() * (r() < 0.2 ? 24 : 6)) }, (_, k) => [mid + dir * (100 + k * 100), 10 + Math.floor(r() * 300)] as Level);
    const group = (groupId: number): SignalGroup => ({
      groupId,
      title: `Group ${groupId}`,
      members: VENUES.map((venue) => ({ venue, marketId: idOf(venue, groupId - 1), inverted: r() < 0.3 })).filter(() => r() < 0.9),
    });
    const event = (): NormalizedEvent | undefined => {
      const x = r();
      const venue = rand.pick(VENUES);
      const id = idOf(venue, Math.floor(r() * MARKETS));
      if (x < 0.75) {
        const bid = r() < 0.5;
        // Mostly a few levels off the best, as a live feed's changes are.
        let p = 5_000 + (bid ? -1 : 1) * 100 * Math.floor(1 + r() * 10) + (r() < 0.1 ? (bid ? 600 : -600) : 0);
        // Now and then a unit or two off another book's best, or its complement, where a pair's cut lies.
        const other = state.books.instrument(rand.pick(VENUES), idOf(rand.pick(VENUES), Math.floor(r() * MARKETS)));
        const near = r() < 0.5 ? other?.asks.best() : other?.bids.best();
        if (near !== undefined && r() < 0.4) p = (r() < 0.5 ? near : PAYOUT - near) + Math.floor(r() * 5) - 2;
        return {
          ...base(venue),
          type: 'book_delta',
          marketId: id,
          instrument: id,
          changes: [[bid ? 'bid' : 'ask', p, r() < 0.2 ? 0 : 10 + Math.floor(r() * 300)]],
        };
      }
      if (x < 0.85) {
        const mid = 4_200 + 100 * Math.floor(r() * 16);
        return { ...base(venue), type: 'book_snapshot', marketId: id, instrument: id, bids: side(mid, -1), asks: side(mid, 1) };
      }
      if (x < 0.9) return { ...base(venue), type: 'market', marketId: id, title: id, status: r() < 0.9 ? 'active' : 'closed' } as NormalizedEvent;
      if (x < 0.93) return { ...base(venue), type: 'feed', state: 'gap', instrument: id };
      return undefined;
    };
    for (let g = 1; g <= MARKETS; g++) groups.groups.set(g, group(g));
    for (const venue of VENUES)
      for (let i = 0; i < MARKETS; i++) {
        applyEvent(state, { ...base(venue), type: 'market', marketId: idOf(venue, i), title: idOf(venue, i), status: 'active' } as NormalizedEvent);
        applyEvent(state, {
          ...base(venue),
          type: 'book_snapshot',
          marketId: idOf(venue, i),
          instrument: idOf(venue, i),
          bids: side(5_000, -1),
          asks: side(5_000, 1),
        });
      }
    let withOpportunities = 0;
    for (let step = 0; step < STEPS; step++) {
      now += 250;
      clock.run(now, () => {
        // A few events per turn, as a socket read brings them.
        for (let k = 1 + Math.floor(r() * 3); k > 0; k--) {
          const ev = event();
          if (ev) applyEvent(state, ev);
          else {
            const g = 1 + Math.floor(r() * MARKETS);
            groups.groups.set(g, group(g));
          }
        }
      });
      clock.run(now + 1, () => {
        turnA.flush();
        turnB.flush();
      });
      for (let g = 1; g <= MARKETS; g++) {
        expect(a.get(g), `group ${g} at step ${step}`).toEqual(b.get(g));
        if ((b.get(g)?.arbs.length ?? 0) + (b.get(g)?.evs.length ?? 0) > 0) withOpportunities++;
      }
      expect(lifeA.openRecords(), `open opportunities at step ${step}`).toEqual(lifeB.openRecords());
    }
    // Both paths are exercised: groups with opportunities, and most book changes refreshing.
    expect(withOpportunities).toBeGreaterThan(STEPS / 10);
    expect(a.refreshed).toBeGreaterThan(STEPS / 4);
    expect(a.recomputed).toBeLessThan(b.recomputed);
  });
});
