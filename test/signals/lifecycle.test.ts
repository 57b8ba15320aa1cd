import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { arbFlow } from '../../pipelines/signals.js';
import { loadConfig } from '../../src/config/load.js';
import { Turn } from '../../src/pipeline/turn.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { Persistence } from '../../src/persist/store.js';
import { SignalEngine } from '../../src/signals/engine.js';
import { OpportunityLog } from '../../src/signals/lifecycle/log.js';
import { closeReason, type OpportunityRecord } from '../../src/signals/lifecycle/record.js';
import { LifecycleTracker, type LifecycleEvent } from '../../src/signals/lifecycle/tracker.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { bookSnapshot, eventBase } from '../support/events.js';
import { HandGroups } from '../support/groups.js';

const config = loadConfig({ env: {} });
const T0 = Date.UTC(2026, 10, 22, 15, 0, 0);

let dir: string;
let persistence: Persistence;
let state: EngineState;
let groups: HandGroups;
let tracker: LifecycleTracker;
let log: OpportunityLog;
let engine: SignalEngine;
let events: LifecycleEvent[];
let flow: Subscription;

const at = (ms: number): number => {
  vi.setSystemTime(T0 + ms);
  return T0 + ms;
};
/** Flushed by hand: the events of one `apply` are one event-loop turn of the conflated arb/EV flow. */
const turn = new Turn(() => () => {});
const apply = (...evs: NormalizedEvent[]): void => {
  for (const e of evs) applyEvent(state, e);
  turn.flush();
};
const base = eventBase;
const market = (venue: string, id: string, extra?: Record<string, unknown>): NormalizedEvent => ({
  ...base(venue),
  type: 'market',
  marketId: id,
  title: `${venue} ${id}`,
  status: 'active',
  ...(extra ? { extra } : {}),
});
const book = bookSnapshot;
const delta = (venue: string, id: string, side: 'bid' | 'ask', price: number, size: number): NormalizedEvent => ({
  ...base(venue),
  type: 'book_delta',
  marketId: id,
  instrument: id,
  changes: [[side, price, size]],
});
const expired = (): OpportunityRecord[] => events.flatMap((e) => (e.type === 'expired' ? [e.record] : []));

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  at(0);
  dir = mkdtempSync(join(tmpdir(), 'cb-lifecycle-'));
  persistence = new Persistence(dir);
  state = new EngineState(config.venues);
  groups = new HandGroups();
  log = new OpportunityLog(persistence.db('opportunities'), { retentionMs: 3_600_000 });
  tracker = new LifecycleTracker(log, { categoryOf: () => 'Sports' });
  engine = new SignalEngine(state, new VenueDirectory(config), groups, tracker);
  events = [];
  tracker.events$.subscribe((e) => events.push(e));
  flow = arbFlow(state, engine, turn);
  // One group: venue_h (yes-only book, no fee before the game, 0.03 × P × (1−P) once live) and venue_b.
  groups.groups.set(1, {
    groupId: 1,
    title: 'Seattle to win',
    members: [
      { venue: 'venue_h', marketId: 'H1', inverted: false },
      { venue: 'venue_b', marketId: 'B1', inverted: false },
    ],
  });
  apply(market('venue_h', 'H1'), market('venue_b', 'B1'));
});

afterEach(async () => {
  flow.unsubscribe();
  vi.useRealTimers();
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

/** YES at 49.50 on venue_h and NO at 50.00 on venue_b (its YES bid 50): 0.5 cents under the $1 payout. */
function openArb(size = 100): string {
  apply(book('venue_h', 'H1', [], [[4950, size]]), book('venue_b', 'B1', [[5000, size]], []));
  const arbs = engine.get(1)!.arbs;
  expect(arbs).toHaveLength(1);
  expect(arbs[0]!.opportunity_id).toMatch(/^arb_/);
  return arbs[0]!.opportunity_id!;
}

describe('opportunity lifecycle (hand-built books)', () => {
  it('opens with an id, keeps it while it grows and shrinks, and closes as book_moved with its figures', async () => {
    const id = openArb();
    expect(events[0]).toMatchObject({ type: 'opened', kind: 'arb', id });
    at(1000);
    apply(delta('venue_b', 'B1', 'bid', 5000, 300), delta('venue_h', 'H1', 'ask', 4950, 300));
    expect(engine.get(1)!.arbs[0]).toMatchObject({ opportunity_id: id, size: 300 });
    at(3000);
    apply(delta('venue_h', 'H1', 'ask', 4950, 50));
    expect(engine.get(1)!.arbs[0]).toMatchObject({ opportunity_id: id, size: 50 });
    at(4000);
    apply(book('venue_h', 'H1', [], [[5100, 50]]));
    expect(engine.get(1)!.arbs).toEqual([]);
    const [r] = expired();
    expect(r).toMatchObject({
      opportunity_id: id,
      kind: 'arb',
      group_id: 1,
      title: 'Seattle to win',
      category: 'Sports',
      side: null,
      platforms: ['venue_b', 'venue_h'],
      first_seen: T0,
      last_seen: T0 + 3000,
      closed_at: T0 + 4000,
      duration_ms: 4000,
      close_reason: 'book_moved',
      peak_size: 300,
      updates: 2,
    });
    expect(r!.legs.map((l) => [l.platform, l.side])).toEqual([
      ['venue_h', 'yes'],
      ['venue_b', 'no'],
    ]);
    expect(r!.peak_roi).toBeCloseTo((0.5 / 99.5) * 100, 3);
    // ROI is the same throughout, so the weighting is by time: 100 for 1 s, 300 for 2 s, 50 for 1 s
    expect(r!.roi_weighted_size).toBeCloseTo((100 * 1000 + 300 * 2000 + 50 * 1000) / 4000, 2);
    await persistence.flushed();
    expect(log.page('arb', {}, 10).records).toEqual([r]);
    expect(tracker.openCount).toBe(0);
  });

  it('derives ids from what the opportunity is, and never gives two of one group the same id or detected_at', () => {
    const id = openArb();
    // kind, group, first-seen millisecond and how many opened in the group in that millisecond, base 36.
    expect(id).toBe(`arb_1_${T0.toString(36)}_0`);
    // Gone and back with the same legs in the same millisecond: a distinct opportunity, a distinct id.
    apply(book('venue_h', 'H1', [], [[5100, 100]]));
    expect(expired().map((r) => r.opportunity_id)).toEqual([id]);
    const again = openArb();
    expect(again).toBe(`arb_1_${T0.toString(36)}_1`);
    // Gone and back later: its own id, detected when it came back (the first one's detected_at is not carried over).
    const first = engine.get(1)!.arbs[0]!.detected_at;
    apply(book('venue_h', 'H1', [], [[5100, 100]]));
    at(2500);
    const third = openArb();
    expect(third).toBe(`arb_1_${(T0 + 2500).toString(36)}_0`);
    expect(engine.get(1)!.arbs[0]!.detected_at).toBe(new Date(T0 + 2500).toISOString());
    expect(engine.get(1)!.arbs[0]!.detected_at).not.toBe(first);
    expect(new Set(expired().map((r) => r.opportunity_id)).size).toBe(2);
  });

  it('closes as size_gone when a leg has nothing left to buy', () => {
    openArb();
    at(500);
    apply(delta('venue_h', 'H1', 'ask', 4950, 0));
    expect(expired().map((r) => r.close_reason)).toEqual(['size_gone']);
    expect(expired()[0]!.duration_ms).toBe(500);
  });

  it('closes as market_closed when a leg market stops trading', () => {
    openArb();
    apply({ ...base('venue_b'), type: 'market_status', marketId: 'B1', status: 'closed' });
    expect(expired().map((r) => r.close_reason)).toEqual(['market_closed']);
  });

  it('closes as fee_change when the game goes live and the venue fee eats the edge', () => {
    openArb();
    apply(market('venue_h', 'H1', { live: true }));
    expect(engine.get(1)!.arbs).toEqual([]);
    expect(expired().map((r) => r.close_reason)).toEqual(['fee_change']);
  });

  it('closes as group_changed when a leg leaves the group, and when the group goes', () => {
    openArb();
    groups.groups.set(1, { ...groups.groups.get(1)!, members: [{ venue: 'venue_h', marketId: 'H1', inverted: false }] });
    engine.recompute(1);
    expect(expired().map((r) => r.close_reason)).toEqual(['group_changed']);
    groups.groups.set(1, { ...groups.groups.get(1)!, members: [...groups.groups.get(1)!.members, { venue: 'venue_b', marketId: 'B1', inverted: false }] });
    const second = engine.recompute(1)!.arbs[0]!.opportunity_id;
    groups.groups.delete(1);
    engine.recompute(1);
    expect(expired().map((r) => [r.opportunity_id, r.close_reason])).toEqual([
      [expect.any(String), 'group_changed'],
      [second, 'group_changed'],
    ]);
  });

  it('tracks an EV entry by market and side, and says nothing for a group with nothing open', () => {
    groups.groups.set(2, {
      groupId: 2,
      title: 'Fed cuts',
      members: ['venue_a', 'venue_b', 'venue_e'].map((v) => ({ venue: v, marketId: 'F', inverted: false })),
    });
    apply(market('venue_a', 'F'), market('venue_b', 'F'), market('venue_e', 'F'));
    apply(book('venue_a', 'F', [[4800, 100]], [[5000, 100]]), book('venue_b', 'F', [[4900, 100]], [[5100, 100]]));
    expect(events).toEqual([]);
    apply(book('venue_e', 'F', [[5800, 100]], [[6000, 100]]));
    const ev = engine.get(2)!.evs.find((e) => e.legs[0].platform === 'venue_e' && e.side === 'no')!;
    expect(ev.opportunity_id).toMatch(/^ev_/);
    at(2000);
    apply(book('venue_e', 'F', [[4850, 100]], [[5050, 100]]));
    const r = expired().find((x) => x.opportunity_id === ev.opportunity_id)!;
    expect(r).toMatchObject({ kind: 'ev', side: 'no', platforms: ['venue_e'], duration_ms: 2000, close_reason: 'book_moved' });
  });
});

describe('closeReason', () => {
  const leg = { member: true, active: true, feeKey: 'k', depth: 10 };
  it('names the most specific cause over all legs', () => {
    expect(closeReason([leg, leg], ['k', 'k'])).toBe('book_moved');
    expect(closeReason([leg, { ...leg, depth: 0 }], ['k', 'k'])).toBe('size_gone');
    expect(
      closeReason(
        [
          { ...leg, depth: 0 },
          { ...leg, feeKey: 'live' },
        ],
        ['k', 'k'],
      ),
    ).toBe('fee_change');
    expect(
      closeReason(
        [
          { ...leg, active: false },
          { ...leg, feeKey: 'live' },
        ],
        ['k', 'k'],
      ),
    ).toBe('market_closed');
    expect(
      closeReason(
        [
          { ...leg, active: false },
          { ...leg, member: false },
        ],
        ['k', 'k'],
      ),
    ).toBe('group_changed');
  });
});

describe('opportunity log (LMDB)', () => {
  const rec = (i: number, closedAt: number, over: Partial<OpportunityRecord> = {}): OpportunityRecord => ({
    opportunity_id: `arb_t${i}`,
    kind: 'arb',
    group_id: i,
    title: `g${i}`,
    category: i % 2 ? 'Sports' : 'Politics',
    side: null,
    legs: [],
    platforms: ['venue_a', 'venue_b'],
    first_seen: closedAt - 1000 * i,
    last_seen: closedAt,
    closed_at: closedAt,
    duration_ms: 1000 * i,
    close_reason: 'book_moved',
    open_roi: i,
    peak_roi: i,
    last_roi: i,
    peak_size: 10,
    roi_weighted_size: 5,
    updates: 0,
    ...over,
  });

  it('pages newest first by keyset, filters, and prunes past the retention window', async () => {
    for (let i = 1; i <= 7; i++) log.append(rec(i, T0 + i * 1000));
    log.append(rec(8, T0 + 7000)); // same closing time as #7: the id orders them
    await persistence.flushed();
    const p1 = log.page('arb', {}, 3);
    expect(p1.records.map((r) => r.opportunity_id)).toEqual(['arb_t8', 'arb_t7', 'arb_t6']);
    const p2 = log.page('arb', {}, 3, p1.next);
    expect(p2.records.map((r) => r.opportunity_id)).toEqual(['arb_t5', 'arb_t4', 'arb_t3']);
    const p3 = log.page('arb', {}, 3, p2.next);
    expect(p3.records.map((r) => r.opportunity_id)).toEqual(['arb_t2', 'arb_t1']);
    expect(p3.next).toBeUndefined();
    expect(log.page('arb', { from: T0 + 2000, to: T0 + 5000 }, 10).records.map((r) => r.group_id)).toEqual([4, 3, 2]);
    expect(log.page('arb', { minRoi: 6, category: 'Politics' }, 10).records.map((r) => r.group_id)).toEqual([8, 6]);
    expect(log.page('arb', { minDurationMs: 7000 }, 10).records.map((r) => r.group_id)).toEqual([8, 7]);
    expect(log.page('arb', { platforms: ['venue_c'] }, 10).records).toEqual([]);
    expect(log.page('ev', {}, 10).records).toEqual([]);
    expect(log.prune(T0 + 3_600_000 + 3500)).toBe(3);
    await persistence.flushed();
    expect(log.page('arb', {}, 10).records.map((r) => r.group_id)).toEqual([8, 7, 6, 5, 4]);
  });
});
