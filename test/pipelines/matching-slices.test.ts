/**
 * SYNTHETIC DATA: the simulator's seeded world (src/sim/world.ts), every venue's listings as the
 * market upserts of one catalog document each, applied in one synchronous call.
 *
 * The matching flow indexes a large catalog a slice per flush of the turn (issue 34: one venue's
 * 108k-market document held the main thread 11.6 s in candidate searches alone). Under a virtual
 * clock and a turn flushed by hand, as a replay runs it: the call that applies the catalog indexes
 * nothing, each flush indexes at most a slice and asks for the next flush itself, and once the
 * backlog is empty and the re-group window passed the groups are those of indexing every market in
 * the call.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Subscription } from 'rxjs';
import { matchingFlow, reindexAfterMs } from '../../pipelines/signals.js';
import { loadConfig } from '../../src/config/load.js';
import { VirtualClock } from '../../src/core/clock.js';
import type { MarketUpsert } from '../../src/core/types.js';
import { MatchingService, type ServedGroup } from '../../src/matching/service.js';
import { Turn } from '../../src/pipeline/turn.js';
import { createWorld } from '../../src/sim/world.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';

const config = loadConfig({ env: {} });
const T = Date.UTC(2026, 0, 10, 12);
const SLICE = 50;

function catalog(): MarketUpsert[] {
  const world = createWorld({ seed: 3, venues: config.venues, scale: 1, depth: 1, now: () => T });
  const out: MarketUpsert[] = [];
  for (const v of config.venues)
    for (const l of world.listings(v.label))
      out.push({
        type: 'market',
        venue: v.label,
        marketId: l.id,
        title: l.title,
        eventTitle: l.eventTitle,
        outcome: l.outcome,
        status: l.status,
        closeTime: l.closeTime,
        timestamp: T,
        localTimestamp: T,
      });
  return out;
}

/** What a reader compares: each group's id and its members with their orientation. */
function shape(groups: Iterable<ServedGroup>): string[] {
  return [...groups].map((g) => `${g.group_id} ${g.members.map((m) => `${m.key}${m.inverted ? '~' : ''}`).join(' ')}`).sort();
}

let sub: Subscription | undefined;
afterEach(() => sub?.unsubscribe());

describe('matching flow: a large catalog is indexed a slice per turn (synthetic)', () => {
  it('indexes at most a slice per flush, asks for the next flush itself, and ends with the groups of an unsliced index', () => {
    const events = catalog();
    expect(events.length).toBeGreaterThan(SLICE * 4);

    // Reference: every market into the matcher as it is applied, one re-group.
    const refState = new EngineState(config.venues);
    const ref = new MatchingService(refState, new VenueDirectory(config), undefined);
    for (const e of events) {
      applyEvent(refState, e);
      ref.upsert(refState.catalog.get(e.venue, e.marketId)!);
    }
    ref.reindex();
    expect(ref.groupCount).toBeGreaterThan(10);

    const state = new EngineState(config.venues);
    const clock = new VirtualClock(T);
    const matching = new MatchingService(state, new VenueDirectory(config), undefined, undefined, undefined, undefined, clock);
    // The turn's schedule as a replay's: nothing runs on its own; the test runs each flush asked for.
    const asked: (() => void)[] = [];
    const turn = new Turn((run) => {
      asked.push(run);
      return () => asked.splice(asked.indexOf(run), 1);
    });
    sub = matchingFlow(state, matching, undefined, clock, turn, SLICE);
    // The whole catalog in one synchronous call, as a venue's document arrives.
    clock.run(T, () => {
      for (const e of events) applyEvent(state, e);
    });
    expect(matching.matcher.stats().markets).toBe(0);
    expect(matching.pending).toBe(events.length);
    expect(asked).toHaveLength(1);
    const slices: number[] = [];
    sub.add(matching.indexed$.subscribe((n) => slices.push(n)));

    let flushes = 0;
    while (asked.length > 0) {
      const run = asked.shift()!;
      clock.run(T + ++flushes, run);
      expect(matching.matcher.stats().markets).toBe(Math.min(events.length, flushes * SLICE));
    }
    expect(flushes).toBe(Math.ceil(events.length / SLICE));
    expect(slices.every((n) => n > 0 && n <= SLICE)).toBe(true);
    expect(slices.reduce((a, b) => a + b, 0)).toBe(events.length);
    expect(matching.pending).toBe(0);

    // Groups converge one re-group window after the last slice: what a reader waits for.
    expect(matching.settled).toBe(false);
    clock.advanceTo(T + flushes + reindexAfterMs(ref.groupCount) + 1);
    expect(matching.settled).toBe(true);
    expect(matching.groupCount).toBe(ref.groupCount);
    expect(shape(matching.served())).toEqual(shape(ref.served()));
  });
});
