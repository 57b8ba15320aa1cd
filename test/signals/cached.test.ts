import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Subscription } from 'rxjs';
import { arbFlow } from '../../pipelines/signals.js';
import { loadConfig } from '../../src/config/load.js';
import type { Level, NormalizedEvent } from '../../src/core/types.js';
import { Turn } from '../../src/pipeline/turn.js';
import { groupArbs, ladders, type GroupMember, type MemberLadders } from '../../src/signals/arb.js';
import { groupEv } from '../../src/signals/ev.js';
import type { FeeContext } from '../../src/signals/fees.js';
import { SignalEngine, type GroupSignals, type SignalGroup } from '../../src/signals/engine.js';
import { LifecycleTracker } from '../../src/signals/lifecycle/tracker.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { marketUrl, nativeId, VenueDirectory } from '../../src/venues/directory.js';
import { HandGroups } from '../support/groups.js';
import { MatchingService } from '../../src/matching/service.js';
import { Rng } from '../../src/sim/rng.js';

/**
 * The engine keeps what it resolved for each member (record, books, fee context, link) and the
 * opportunities it published between recomputes, and copies only the levels a pair could take.
 * Over random events (book snapshots and deltas on YES and NO books, relinked instruments, records
 * listed late, status, URL and fee-context changes, quotes of a venue without books, feed resets,
 * groups replaced), every group of the long-lived engine reads exactly what an engine built just
 * then computes from the same state, and what `groupArbs` and `groupEv` give over 20 levels of
 * every member's book read through the state's own views.
 */
const config = loadConfig({ env: {} });
const directory = new VenueDirectory(config);
const T0 = Date.UTC(2026, 10, 24, 12, 0, 0);
const MARKETS = 4;
const STEPS = 3_000;

/** Venues with a book per market (venue_b: YES and NO token books), and one quoting only (venue_c). */
const BOOK_VENUES = ['venue_a', 'venue_b', 'venue_h'] as const;
const ALL_VENUES = [...BOOK_VENUES, 'venue_c'] as const;

const idOf = (venue: string, i: number): string => `${venue.slice(-1).toUpperCase()}-${i}`;

/** A venue_a book of one bid and one ask, its market's own instrument, at T0. */
function snapshot(id: string): NormalizedEvent {
  return { timestamp: T0, localTimestamp: T0, venue: 'venue_a', type: 'book_snapshot', marketId: id, instrument: id, bids: [[4000, 5]], asks: [[6000, 5]] };
}

/** The fee context of a record, as the engine reads it from the record's extra fields. */
function feeOf(extra: Readonly<Record<string, unknown>> | undefined): FeeContext {
  if (extra === undefined) return { live: false, league: undefined, futures: false };
  return { live: extra['live'] === true, league: typeof extra['league'] === 'string' ? extra['league'] : undefined, futures: extra['futures'] === true };
}

/** A group's arbitrage and EV from full copies of its members' books (the state's views), with no engine between. */
function reference(state: EngineState, g: SignalGroup): unknown {
  const ls: MemberLadders[] = [];
  for (const { venue, marketId, inverted } of g.members) {
    const v = directory.byLabel.get(venue);
    const rec = state.catalog.get(venue, marketId);
    if (!v || !rec || rec.status !== 'active') continue;
    const member: GroupMember = { venue: v, marketId, inverted, fee: feeOf(rec.extra), url: rec.url ?? marketUrl(v, nativeId(v, marketId), rec.extra) };
    const book = state.books.marketBook(venue, marketId, 20);
    if (book?.ready) {
      ls.push(ladders(member, book.bids, book.asks));
      continue;
    }
    const q = state.quotes.get(venue, marketId);
    if (q && (q.yesBid !== undefined || q.yesAsk !== undefined))
      ls.push(ladders(member, q.yesBid !== undefined ? [[q.yesBid, q.yesBidSize ?? 0]] : [], q.yesAsk !== undefined ? [[q.yesAsk, q.yesAskSize ?? 0]] : []));
  }
  return { arbs: groupArbs(g.groupId, ls), evs: groupEv(g.groupId, ls) };
}

/** A group's opportunities without what the tracker and the stamp add (ids, group fields, detection time). */
function bare(s: GroupSignals | undefined): unknown {
  if (!s) return undefined;
  const strip = (o: object): object => {
    const { opportunity_id: _id, group_title: _t, event_date: _d, event_type: _e, detected_at: _at, ...rest } = o as Record<string, unknown>;
    return rest;
  };
  return { arbs: s.arbs.map(strip), evs: s.evs.map(strip) };
}

let state: EngineState;
let groups: HandGroups;
let engine: SignalEngine;
let flow: Subscription;
const turn = new Turn(() => () => {});

beforeEach(() => {
  state = new EngineState(config.venues);
  groups = new HandGroups();
  engine = new SignalEngine(state, directory, groups, new LifecycleTracker(undefined));
  flow = arbFlow(state, engine, turn);
});

afterEach(() => flow.unsubscribe());

describe('signal engine caches', () => {
  it('read the same as an engine built from the state at every step of a random run', () => {
    const rand = new Rng(18);
    const r = (): number => rand.next();
    const pick = <T>(xs: readonly T[]): T => rand.pick(xs);
    let now = T0;
    const base = (venue: string): { venue: string; timestamp: number; localTimestamp: number } => ({ venue, timestamp: now, localTimestamp: now });
    /** venue_b's token ids of each market (relinked now and then). */
    const tokens = new Map<string, [string, string]>();
    const instrumentOf = (venue: string, id: string): string => {
      if (venue !== 'venue_b') return id;
      const t = tokens.get(id);
      return t ? pick(t) : id;
    };
    const levels = (mid: number, dir: 1 | -1): Level[] =>
      Array.from({ length: 1 + Math.floor(r() * 4) }, (_, k) => [mid + dir * (100 + k * 100), 10 + Math.floor(r() * 300)] as Level);
    const market = (venue: string, id: string): NormalizedEvent => {
      const ev: Record<string, unknown> = { ...base(venue), type: 'market', marketId: id, title: id, status: r() < 0.85 ? 'active' : 'closed' };
      if (r() < 0.5) ev['url'] = `https://${venue}.example/${id}/${Math.floor(r() * 3)}`;
      if (r() < 0.5) ev['extra'] = { live: r() < 0.5, league: pick(['NFL', 'NBA', 'MLB']), futures: r() < 0.3 };
      if (venue === 'venue_b' && r() < 0.7) {
        const gen = Math.floor(r() * 3);
        const t: [string, string] = [`${id}-Y${gen}`, `${id}-N${gen}`];
        tokens.set(id, t);
        ev['yesInstrument'] = t[0];
        ev['noInstrument'] = t[1];
      }
      return ev as unknown as NormalizedEvent;
    };
    const groupOf = (groupId: number): SignalGroup => {
      const n = 2 + Math.floor(r() * 3);
      const members = Array.from({ length: n }, () => {
        const venue = pick(ALL_VENUES);
        return { venue, marketId: idOf(venue, Math.floor(r() * MARKETS)), inverted: r() < 0.3 };
      });
      return {
        groupId,
        title: `Group ${groupId} v${Math.floor(r() * 100)}`,
        members,
        eventDate: r() < 0.5 ? '2026-11-24' : null,
        eventType: pick(['sports', null]),
      };
    };
    const event = (): NormalizedEvent | undefined => {
      const x = r();
      const venue = pick(BOOK_VENUES);
      const id = idOf(venue, Math.floor(r() * MARKETS));
      if (x < 0.45) {
        const side = r() < 0.5 ? 'bid' : 'ask';
        const p = 3_000 + 100 * Math.floor(r() * 40);
        return {
          ...base(venue),
          type: 'book_delta',
          marketId: id,
          instrument: instrumentOf(venue, id),
          changes: [[side, p, r() < 0.2 ? 0 : 10 + Math.floor(r() * 300)]],
        };
      }
      if (x < 0.6) {
        const mid = 3_500 + 100 * Math.floor(r() * 30);
        return { ...base(venue), type: 'book_snapshot', marketId: id, instrument: instrumentOf(venue, id), bids: levels(mid, -1), asks: levels(mid, 1) };
      }
      if (x < 0.72) return market(venue, id);
      if (x < 0.75) return market('venue_c', idOf('venue_c', Math.floor(r() * MARKETS)));
      if (x < 0.8) return { ...base(venue), type: 'market_status', marketId: id, status: r() < 0.7 ? 'active' : 'closed' };
      if (x < 0.9) {
        const q = 3_000 + 100 * Math.floor(r() * 40);
        return {
          ...base('venue_c'),
          type: 'quote',
          marketId: idOf('venue_c', Math.floor(r() * MARKETS)),
          yesBid: q,
          yesAsk: q + 100 * (1 + Math.floor(r() * 3)),
        };
      }
      if (x < 0.93) return { ...base(venue), type: 'feed', state: r() < 0.5 ? 'disconnected' : 'gap', instrument: instrumentOf(venue, id) };
      return undefined;
    };

    for (let g = 1; g <= 5; g++) groups.groups.set(g, groupOf(g));
    let compared = 0;
    let withOpportunities = 0;
    for (let step = 0; step < STEPS; step++) {
      now += 1_000;
      const ev = event();
      if (ev) applyEvent(state, ev);
      else {
        const g = 1 + Math.floor(r() * 5);
        groups.groups.set(g, groupOf(g));
      }
      turn.flush();
      for (const g of groups.groups.keys()) {
        const got = engine.recompute(g);
        const want = new SignalEngine(state, directory, groups).recompute(g);
        expect(bare(got), `group ${g} at step ${step}`).toEqual(bare(want));
        expect(bare(got), `group ${g} at step ${step}, against the reference`).toEqual(reference(state, groups.groups.get(g)!));
        expect(got?.arbs.every((a) => a.group_title === groups.groups.get(g)!.title)).toBe(true);
        compared++;
        if (want && want.arbs.length + want.evs.length > 0) withOpportunities++;
      }
    }
    expect(compared).toBe(STEPS * 5);
    // The run reaches groups with opportunities often enough to test the lists, not only empty ones.
    expect(withOpportunities).toBeGreaterThan(compared / 10);
  });

  it('a book change marks the groups its market is in as they stand after a regroup, though each book keeps its market groups between changes', () => {
    const at = { timestamp: T0, localTimestamp: T0 };
    const delta = (id: string, size: number): NormalizedEvent => ({
      ...at,
      venue: 'venue_a',
      type: 'book_delta',
      marketId: id,
      instrument: id,
      changes: [['bid', 4000, size]],
    });
    const group = (id: string): SignalGroup => ({
      groupId: 1,
      title: 'G',
      members: [
        { venue: 'venue_a', marketId: id, inverted: false },
        { venue: 'venue_b', marketId: 'B-0', inverted: false },
      ],
    });
    groups.groups.set(1, group('A-0'));
    for (const id of ['A-0', 'A-1']) applyEvent(state, snapshot(id));
    turn.flush();
    const recomputes = (ev: NormalizedEvent): number => {
      const n = engine.recomputed;
      applyEvent(state, ev);
      turn.flush();
      return engine.recomputed - n;
    };
    expect(recomputes(delta('A-0', 6))).toBe(1);
    expect(recomputes(delta('A-1', 6))).toBe(0);
    groups.groups.set(1, group('A-1'));
    expect(recomputes(delta('A-1', 7))).toBe(1);
    expect(recomputes(delta('A-0', 7))).toBe(0);
    groups.groups.delete(1);
    expect(recomputes(delta('A-1', 8))).toBe(0);
  });

  it("a book holds the serial of the matching service's market → groups index it looked up, not the index each regroup replaces", () => {
    const matching = new MatchingService(state, directory, undefined);
    const eng = new SignalEngine(state, directory, matching, new LifecycleTracker(undefined));
    applyEvent(state, snapshot('A-0'));
    const book = state.books.instrument('venue_a', 'A-0')!;
    eng.markBook('venue_a', 'A-0', book);
    const first = matching.index();
    expect(book.groupsIndex).toBe(first);
    matching.reindex();
    expect(matching.index()).toBe(first + 1);
    eng.markBook('venue_a', 'A-0', book);
    expect(book.groupsIndex).toBe(first + 1);
    // A book no change reaches after a regroup keeps what it held: a number, no replaced index (a Map per venue) with it.
    expect(Object.values(book).some((v) => v instanceof Map)).toBe(false);
    matching.close();
  });
});
