import type { Subscription } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { arbFlow } from '../../pipelines/signals.js';
import { loadConfig } from '../../src/config/load.js';
import { Turn } from '../../src/pipeline/turn.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { SignalEngine, type GroupSignals, type PublishedEv } from '../../src/signals/engine.js';
import { LifecycleTracker } from '../../src/signals/lifecycle/tracker.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { bookSnapshot, eventBase } from '../support/events.js';
import { HandGroups } from '../support/groups.js';

/**
 * What a recompute keeps of the previous one: an opportunity that reads the same is the same
 * object (and a list that does, the same list), while any field that changed, including one the
 * publication signature leaves out (a leg's URL), reaches the list.
 */
const config = loadConfig({ env: {} });
const T0 = Date.UTC(2026, 10, 24, 12, 0, 0);
const A = 'A-1';
const B = 'B-1';
const E = 'E-1';

let state: EngineState;
let engine: SignalEngine;
let groups: HandGroups;
let published: GroupSignals[];
let flow: Subscription;

const at = (ms: number): void => void vi.setSystemTime(T0 + ms);
const turn = new Turn(() => () => {});
const apply = (...evs: NormalizedEvent[]): void => {
  for (const e of evs) applyEvent(state, e);
  turn.flush();
};
const base = eventBase;
const market = (venue: string, id: string, url?: string): NormalizedEvent => ({
  ...base(venue),
  type: 'market',
  marketId: id,
  title: id,
  status: 'active',
  ...(url ? { url } : {}),
});
const book = bookSnapshot;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  at(0);
  state = new EngineState(config.venues);
  groups = new HandGroups();
  engine = new SignalEngine(state, new VenueDirectory(config), groups, new LifecycleTracker(undefined));
  published = [];
  engine.changes$.subscribe((g) => published.push(g));
  flow = arbFlow(state, engine, turn);
  groups.groups.set(1, {
    groupId: 1,
    title: 'Team A to win',
    members: [
      { venue: 'venue_a', marketId: A, inverted: false },
      { venue: 'venue_b', marketId: B, inverted: false },
      { venue: 'venue_e', marketId: E, inverted: false },
    ],
  });
  apply(market('venue_a', A), market('venue_b', B, 'https://b.example/one'), market('venue_e', E));
  // YES at 45 on venue_a, NO at 50 on venue_b (its YES bid 50): an arbitrage; venue_e quotes nothing yet.
  apply(book('venue_a', A, [[4000, 100]], [[4500, 100]]), book('venue_b', B, [[5000, 100]], [[5600, 100]]));
});

afterEach(() => {
  flow.unsubscribe();
  vi.useRealTimers();
});

describe('stamped opportunities across recomputes', () => {
  it('keeps the list and its objects when a recompute reads the same, and publishes nothing', () => {
    const first = engine.get(1)!;
    expect(first.arbs.length).toBeGreaterThan(0);
    const n = published.length;
    at(1000);
    // A level deeper than the legs take changes nothing of the arbitrage or EV.
    apply(
      book(
        'venue_b',
        B,
        [[5000, 100]],
        [
          [5600, 100],
          [5900, 10],
        ],
      ),
    );
    const next = engine.get(1)!;
    expect(next.at).toBe(T0 + 1000);
    expect(next.arbs).toBe(first.arbs);
    expect(next.evs).toBe(first.evs);
    expect(published.length).toBe(n);
  });

  it('copies an opportunity whose leg URL changed, keeping its detected_at, without a publication (ROI and size held)', () => {
    const [before] = engine.get(1)!.arbs;
    const n = published.length;
    at(2000);
    apply(market('venue_b', B, 'https://b.example/two'));
    const [after] = engine.get(1)!.arbs;
    expect(after).not.toBe(before);
    expect(after).toEqual({ ...before, legs: [before!.legs[0], { ...before!.legs[1], url: 'https://b.example/two', source_url: 'https://b.example/two' }] });
    expect(after!.detected_at).toBe(new Date(T0).toISOString());
    expect(published.length).toBe(n);
  });

  it('publishes a new list when a size changes, the unchanged opportunities of it kept', () => {
    const first = engine.get(1)!;
    const n = published.length;
    at(3000);
    apply(book('venue_a', A, [[4000, 100]], [[4500, 60]]));
    const next = engine.get(1)!;
    expect(next.arbs).not.toBe(first.arbs);
    expect(next.arbs[0]).toMatchObject({ size: 60, detected_at: new Date(T0).toISOString() });
    expect(published.length).toBe(n + 1);
    expect(published.at(-1)).toBe(next);
  });

  it('rebuilds an EV opportunity whose leg URL or size changed while its ROI held, and keeps it otherwise', () => {
    // venue_e's quote joins venue_a's in a consensus near 42.5: NO on venue_b at 50 is worth 57.5.
    apply(book('venue_e', E, [[4100, 100]], [[4400, 100]]));
    const ev = (): PublishedEv => engine.get(1)!.evs.find((e) => e.legs[0].market_id === B)!;
    const first = ev();
    expect(first).toMatchObject({ side: 'no', size: 100 });
    at(1000);
    apply(book('venue_a', A, [[4000, 100]], [[4500, 100]]));
    expect(ev()).toBe(first);
    apply(market('venue_b', B, 'https://b.example/two'));
    expect(ev()).toEqual({ ...first, legs: [{ ...first.legs[0], url: 'https://b.example/two', source_url: 'https://b.example/two' }] });
    const n = published.length;
    apply(book('venue_b', B, [[5000, 70]], [[5600, 100]]));
    expect(ev()).toMatchObject({ roi: first.roi, size: 70, opportunity_id: first.opportunity_id, detected_at: first.detected_at });
    expect(published.length).toBe(n + 1);
  });
});
