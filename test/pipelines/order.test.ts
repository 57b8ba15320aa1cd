import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startPipelines, wireFlows } from '../../pipelines/index.js';
import { ingestFlow } from '../../pipelines/ingest.js';
import { REINDEX_AFTER_MS, REINDEX_MS_PER_GROUP, reindexAfterMs } from '../../pipelines/signals.js';
import { Turn } from '../../src/pipeline/turn.js';
import { buildCore, buildDomain, buildHttp, type Core, type Domain, type HttpLayer } from '../../src/compose.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { Persistence } from '../../src/persist/store.js';
import { applyEvent } from '../../src/state/engine.js';
import { FeedStats } from '../../src/venues/common/stats.js';
import type { VenueFeed } from '../../src/venues/protocol.js';

const T = Date.UTC(2026, 10, 20, 12);
const base = { venue: 'venue_a', timestamp: T, localTimestamp: T } as const;
const M = 'KXNFLGAME-26NOV23NESEA-SEA';

interface Built {
  core: Core;
  domain: Domain;
  http: HttpLayer;
}
const open: { b: Built; dir: string; sub?: Subscription }[] = [];

function build(): Built {
  const config = loadConfig({ env: {} });
  const dir = mkdtempSync(join(tmpdir(), 'cb-order-'));
  const core = buildCore(config, { persistence: new Persistence(dir), log });
  const domain = buildDomain(core);
  const http = buildHttp(core, domain);
  const b = { core, domain, http };
  open.push({ b, dir });
  return b;
}

afterEach(async () => {
  vi.useRealTimers();
  for (const { b, dir, sub } of open.splice(0)) {
    sub?.unsubscribe();
    b.http.ws?.close();
    b.http.http.close();
    b.domain.matching.close();
    await b.core.persistence.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Records, in order, which of fan-out and signals a state change reached (the real methods still run). */
function record(b: Built): string[] {
  const calls: string[] = [];
  const spy = <T extends object>(obj: T, method: keyof T & string, name: string): void => {
    const real = (obj[method] as (...a: unknown[]) => unknown).bind(obj);
    vi.spyOn(obj, method as never).mockImplementation(((...a: unknown[]) => {
      calls.push(name);
      return real(...a);
    }) as never);
  };
  spy(b.http.ws!, 'onBook', 'fanout');
  spy(b.domain.signals, 'flush', 'signals');
  return calls;
}

/**
 * `b`'s hub as when some connection holds a market topic: with none (these tests open no socket)
 * the fan-out marks nothing (`WsHub.quiet`), and the order of its effects is what is under test.
 */
function listened(b: Built): NonNullable<Built['http']['ws']> {
  const hub = b.http.ws!;
  vi.spyOn(hub, 'quiet').mockReturnValue(false);
  return hub;
}

/** A turn flushed by hand: what one event-loop turn of the service flushes at its end. */
const manualTurn = (): Turn => new Turn(() => () => {});

/** Wires `b`'s flows as the service does (its periodic snapshot out of the way), plus `more`; unsubscribed after the test. */
function wire(b: Built, more: Partial<Parameters<typeof wireFlows>[0]> = {}): void {
  open.find((o) => o.b === b)!.sub = wireFlows({
    state: b.core.state,
    persistence: b.core.persistence,
    persistenceOptions: { snapshotIntervalMs: 60_000 },
    rooms: b.domain,
    ...more,
  });
}

describe('order of effects (pipelines/index.ts)', () => {
  it("applies a book change to state, then persistence, then (at the turn's flush) fan-out, then signals", () => {
    const b = build();
    const turn = manualTurn();
    wire(b, { hub: listened(b), turn });
    applyEvent(b.core.state, { ...base, type: 'market', marketId: M, title: 'Seattle to win?', status: 'active' });
    const calls = record(b);
    let bidAtPersist: number | undefined;
    const mark = b.core.persistence.markBook.bind(b.core.persistence);
    vi.spyOn(b.core.persistence, 'markBook').mockImplementation((venue, instrument) => {
      bidAtPersist = b.core.state.books.instrument('venue_a', M)?.bids.best();
      calls.push('persistence');
      mark(venue, instrument);
    });
    applyEvent(b.core.state, { ...base, type: 'book_snapshot', marketId: M, instrument: M, bids: [[4100, 10]], asks: [[4300, 5]] });
    // The book is already in state when its first consumer runs.
    expect(bidAtPersist).toBe(4100);
    // Conflation: persistence marks at once, fan-out and signals wait for the flush.
    expect(calls).toEqual(['persistence']);
    turn.flush();
    expect(calls).toEqual(['persistence', 'fanout', 'signals']);
  });

  it('conflates a turn: each dirty book published once with the latest frame times, each dirty group recomputed once', () => {
    const b = build();
    const turn = manualTurn();
    wire(b, { hub: listened(b), turn });
    applyEvent(b.core.state, { ...base, type: 'market', marketId: M, title: 'Seattle to win?', status: 'active' });
    applyEvent(b.core.state, { ...base, type: 'book_snapshot', marketId: M, instrument: M, bids: [[4100, 10]], asks: [[4300, 5]] });
    turn.flush();
    const onBook = vi.spyOn(b.http.ws!, 'onBook');
    const onQuote = vi.spyOn(b.http.ws!, 'onQuote');
    const marks = vi.spyOn(b.core.persistence, 'markBook');
    const flush = vi.spyOn(b.domain.signals, 'flush');
    for (let i = 1; i <= 3; i++)
      applyEvent(b.core.state, {
        ...base,
        type: 'book_delta',
        marketId: M,
        instrument: M,
        changes: [['bid', 4100 + i * 10, i]],
        timestamp: T + i,
        localTimestamp: T + 10 + i,
      });
    // State and persistence see every delta; the fan-out nothing yet.
    expect(b.core.state.books.instrument('venue_a', M)?.bids.best()).toBe(4130);
    expect(marks).toHaveBeenCalledTimes(3);
    expect(onBook).not.toHaveBeenCalled();
    turn.flush();
    expect(onBook).toHaveBeenCalledTimes(1);
    // With the changed book in hand, so the hub reads its sides without looking the book up.
    expect(onBook).toHaveBeenCalledWith(
      'venue_a',
      M,
      expect.objectContaining({ timestamp: T + 3, localTimestamp: T + 13 }),
      b.core.state.books.instrument('venue_a', M),
    );
    expect(onQuote).toHaveBeenCalledTimes(1);
    expect(onQuote.mock.calls[0]![0].yesBid).toBe(4130);
    expect(flush).toHaveBeenCalledTimes(1);
    // Nothing dirty: a second flush publishes nothing.
    turn.flush();
    expect(onBook).toHaveBeenCalledTimes(1);
  });

  it('publishes each turn venue by venue in the order the turn first marked them, with that turn’s frame times', () => {
    const b = build();
    const turn = manualTurn();
    wire(b, { hub: listened(b), turn });
    const H = 'venue_h_987';
    const h = { venue: 'venue_h', timestamp: T, localTimestamp: T } as const;
    applyEvent(b.core.state, { ...base, type: 'market', marketId: M, title: 'Seattle to win?', status: 'active' });
    applyEvent(b.core.state, { ...h, type: 'market', marketId: H, title: 'Seattle Seahawks', status: 'active', yesInstrument: '987' });
    applyEvent(b.core.state, { ...base, type: 'book_snapshot', marketId: M, instrument: M, bids: [[4100, 10]], asks: [[4300, 5]] });
    applyEvent(b.core.state, { ...h, type: 'book_snapshot', marketId: H, instrument: '987', bids: [[4000, 10]], asks: [[4400, 5]] });
    turn.flush();
    const books: string[] = [];
    vi.spyOn(b.http.ws!, 'onBook').mockImplementation((venue, marketId, at) => void books.push(`${venue} ${marketId} ${at?.localTimestamp}`));
    const delta = (venue: 'venue_a' | 'venue_h', marketId: string, instrument: string, t: number): void =>
      applyEvent(b.core.state, { venue, type: 'book_delta', marketId, instrument, changes: [['bid', 3900, t]], timestamp: T, localTimestamp: T + t });
    delta('venue_a', M, M, 1);
    delta('venue_h', H, '987', 2);
    delta('venue_a', M, M, 3);
    turn.flush();
    expect(books).toEqual([`venue_a ${M} ${T + 3}`, `venue_h ${H} ${T + 2}`]);
    // The next turn marks venue_h first; nothing of the turn before is left in it.
    books.length = 0;
    delta('venue_h', H, '987', 4);
    delta('venue_a', M, M, 5);
    turn.flush();
    expect(books).toEqual([`venue_h ${H} ${T + 4}`, `venue_a ${M} ${T + 5}`]);
    turn.flush();
    expect(books).toHaveLength(2);
  });

  it('flushes once per event-loop turn, on setImmediate, however many changes it holds', () => {
    vi.useFakeTimers({ toFake: ['setImmediate', 'clearImmediate'] });
    const turn = new Turn();
    const ran: string[] = [];
    turn.add(() => ran.push('fanout'));
    turn.add(() => ran.push('signals'));
    turn.touch();
    turn.touch();
    expect(ran).toEqual([]);
    vi.runOnlyPendingTimers();
    expect(ran).toEqual(['fanout', 'signals']);
    expect(turn.flushes).toBe(1);
    // A flush by hand (a feed warning) cancels the scheduled one.
    turn.touch();
    turn.flush();
    vi.runOnlyPendingTimers();
    expect(turn.flushes).toBe(2);
  });

  it('starts ingest only when started, and feed health reaches the WebSocket hub by one path', () => {
    const b = build();
    const source = new Subject<NormalizedEvent>();
    const venue = b.core.config.venues.find((v) => v.label === 'venue_a')!;
    // A feed whose frames are already normalized events: the edge of the system, driven by the test.
    const feed: VenueFeed = { venue, stats: new FeedStats(), events$: source };
    const ingest = ingestFlow([feed], b.core.state, log);
    const warned = vi.spyOn(b.http.ws!, 'onFeedEvent');
    source.next({ ...base, type: 'market', marketId: M, title: 'Seattle to win?', status: 'active' });
    expect(b.core.state.catalog.get('venue_a', M)).toBeUndefined();
    const sub = startPipelines({
      state: b.core.state,
      ingest,
      persistence: b.core.persistence,
      persistenceOptions: { snapshotIntervalMs: 60_000 },
      rooms: b.domain,
      hub: b.http.ws,
      log,
    });
    open[open.length - 1]!.sub = sub;
    source.next({ ...base, type: 'market', marketId: M, title: 'Seattle to win?', status: 'active' });
    expect(b.core.state.catalog.get('venue_a', M)?.title).toBe('Seattle to win?');
    source.next({ ...base, type: 'feed', state: 'disconnected', detail: 'test' });
    expect(warned).toHaveBeenCalledTimes(1);
    expect(b.core.state.health.get('venue_a')?.connected).toBe(false);
  });

  it('re-groups a burst of catalog changes once, REINDEX_AFTER_MS after its first change', () => {
    vi.useFakeTimers();
    const b = build();
    wire(b);
    const reindex = vi.spyOn(b.domain.matching, 'reindex');
    for (let i = 0; i < 3; i++) applyEvent(b.core.state, { ...base, type: 'market', marketId: `${M}${i}`, title: `Game ${i}?`, status: 'active' });
    expect(reindex).not.toHaveBeenCalled();
    vi.advanceTimersByTime(REINDEX_AFTER_MS - 1);
    expect(reindex).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(reindex).toHaveBeenCalledTimes(1);
  });

  it('waits longer the more groups a re-group walks (a function of the groups, so a replay re-groups when live did)', () => {
    expect(reindexAfterMs(0)).toBe(REINDEX_AFTER_MS);
    expect(reindexAfterMs(10)).toBe(REINDEX_AFTER_MS);
    expect(reindexAfterMs(22_000)).toBe(22_000 * REINDEX_MS_PER_GROUP);
    expect(Number.isInteger(reindexAfterMs(22_001))).toBe(true); // timers at whole ms: the clock's times stay integers
    // At 108k markets a walk of 22k groups took 3 s here: the window keeps re-grouping under a quarter of the thread.
    expect(3_000 / (3_000 + reindexAfterMs(22_000))).toBeLessThan(0.25);
  });
});
