import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { VirtualClock } from '../../src/core/clock.js';
import { log } from '../../src/core/log.js';
import { timerSchedule } from '../../src/pipeline/turn.js';
import { createVenueFeed, type FeedRuntime } from '../../src/venues/common/runtime.js';
import { ManifoldMapper } from '../../src/venues/manifold/mappers.js';
import { countTurns } from '../support/turns.js';

/**
 * The two ways a long piece of work waits for a later turn between its slices: the feed runtime's
 * `nextTurn` (Polymarket's trades page, 100 rows a turn) and the pipeline's `timerSchedule` (the
 * minute's candle close). Each slice must run in a turn of its own, after the flush that the turn
 * before it asked for. On Node 20 a bare `setTimeout(0)` broke both when the slice went on past a
 * millisecond after asking for the next one and a timer was set after that (what a slice's work and
 * its consumers do): the next slice ran in the same timers phase, with no check phase between.
 */

const cfg = loadConfig({ env: {} });
const subs: Subscription[] = [];
afterEach(() => {
  for (const s of subs.splice(0)) s.unsubscribe();
});

/** What a slice does after it asked for the next one: work past a millisecond boundary, then a timer set (it reads the loop's clock). */
function restOfTheSlice(): void {
  const start = Date.now();
  while (Date.now() < start + 2);
  clearTimeout(setTimeout(() => undefined, 1));
}

interface Slice {
  /** The turn it ran in, counted by an immediate that re-arms itself (one a check phase). */
  turn: number;
  /** Whether the flush asked for in the turn before it (an immediate) had run. */
  flushed: boolean;
}

/** Twenty slices, each waiting on `later`: the turn each ran in and whether the previous turn's flush was out. */
async function slices(later: () => Promise<void>): Promise<Slice[]> {
  const turns = countTurns();
  const out: Slice[] = [];
  let flushed = true;
  try {
    for (let i = 0; i < 20; i++) {
      const next = later();
      // This turn's flush, asked for after the next slice was: it must still go out first.
      flushed = false;
      setImmediate(() => (flushed = true));
      queueMicrotask(restOfTheSlice);
      await next;
      out.push({ turn: turns.turn, flushed });
    }
  } finally {
    turns.stop();
  }
  return out;
}

function expectOnePerTurn(run: readonly Slice[]): void {
  expect(run).toHaveLength(20);
  const shared = run.filter((s, i) => i > 0 && s.turn === run[i - 1]!.turn);
  expect(shared).toEqual([]);
  expect(run.filter((s) => !s.flushed)).toEqual([]);
}

describe('a later turn', () => {
  it('feed runtime nextTurn: each slice in a turn of its own, after the turn’s flush', async () => {
    let runtime: FeedRuntime | undefined;
    const venue = cfg.venues.find((v) => v.protocol === 'manifold')!;
    const feed = createVenueFeed({ venue, endpoints: { rest: 'http://127.0.0.1:9/' }, ingest: cfg.ingest, log }, 'manifold', (rt) => ({
      mapper: new ManifoldMapper(rt.venue, rt.stats),
      start: () => (runtime = rt),
    }));
    subs.push(feed.events$.subscribe());
    const rt = runtime!;
    expectOnePerTurn(await slices(() => rt.nextTurn()));
  });

  it('pipeline timerSchedule: each slice in a turn of its own, after the turn’s flush, as a unit of the clock', async () => {
    const clock = new VirtualClock(1_800_000_000_000);
    const schedule = timerSchedule(clock);
    expectOnePerTurn(await slices(() => new Promise<void>((resolve) => schedule(resolve))));
  });

  it('timerSchedule: a cancelled slice does not run', async () => {
    const schedule = timerSchedule(new VirtualClock(0));
    let ran = false;
    schedule(() => (ran = true))();
    // A slice asked for after it has run: the cancelled one, asked for first, would have run before it.
    await new Promise<void>((resolve) => schedule(resolve));
    expect(ran).toBe(false);
  });
});
