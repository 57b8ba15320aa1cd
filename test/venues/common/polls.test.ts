import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { VirtualClock } from '../../../src/core/clock.js';
import { log } from '../../../src/core/log.js';
import { POLL_GAP_MS, PollStarts } from '../../../src/venues/common/polls.js';
import { createVenueFeed } from '../../../src/venues/common/runtime.js';
import { ManifoldMapper } from '../../../src/venues/manifold/mappers.js';

/**
 * The polls of one service (Polymarket's trades, PredictIt's document, Manifold's walk: each runs
 * `pollMs` after its previous run ended) on a virtual clock: the real feed runtime's `repeat`, the
 * service's one PollStarts, runs that last a given time of the clock. Without the shared starts the
 * polls start together at start-up and drift into step whenever their runs' lengths line up.
 */

const cfg = loadConfig({ env: {} });
const T0 = 1_800_000_000_000;
const POLL_MS = 2000;
const subs: Subscription[] = [];
afterEach(() => {
  for (const s of subs.splice(0)) s.unsubscribe();
});

/** The microtasks of the runs' ends (a run's promise, then its `then`) all settled. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

/**
 * Three polled venues, each run lasting the next of its durations (ms of the clock), on one clock
 * and one PollStarts for `seconds`: the start times of each venue's runs.
 */
async function pollStarts(seconds: number, durations: Record<string, readonly number[]>): Promise<Map<string, number[]>> {
  const clock = new VirtualClock(T0);
  const polls = new PollStarts();
  const starts = new Map<string, number[]>();
  for (const [label, ds] of Object.entries(durations)) {
    const venue = cfg.venues.find((v) => v.label === label)!;
    const ingest = { ...cfg.ingest, pollMs: POLL_MS };
    const feed = createVenueFeed({ venue, endpoints: { rest: 'http://127.0.0.1:9/' }, ingest, log, clock, polls }, 'manifold', (rt) => ({
      mapper: new ManifoldMapper(rt.venue, rt.stats),
      start: () => {
        let n = 0;
        rt.repeat(
          POLL_MS,
          () => {
            starts.set(label, [...(starts.get(label) ?? []), clock.now()]);
            const d = ds[n++ % ds.length]!;
            return new Promise<void>((resolve) => clock.after(d, resolve));
          },
          `${label} poll`,
        );
      },
    }));
    subs.push(feed.events$.subscribe());
  }
  for (let t = T0; t <= T0 + seconds * 1000; t++) {
    clock.advanceTo(t);
    await settle();
  }
  return starts;
}

/** Run lengths that put the polls in step without the shared starts (equal ends), then out, then in again. */
const DURATIONS = { venue_b: [30, 30, 5, 400, 30, 1200, 17], venue_c: [30, 30, 120, 5, 30, 3, 900], venue_d: [30, 30, 60, 700, 30, 2000, 3] };

describe('poll starts', () => {
  it('no two polls of the service start within POLL_GAP_MS of each other, at start-up or later', async () => {
    const starts = await pollStarts(60, DURATIONS);
    const all = [...starts].flatMap(([label, ts]) => ts.map((t) => ({ label, t }))).sort((a, b) => a.t - b.t);
    // Every venue kept polling: about a run every pollMs plus its run's length over the minute.
    for (const ts of starts.values()) expect(ts.length).toBeGreaterThanOrEqual(20);
    const close = all.filter((s, i) => i > 0 && s.t - all[i - 1]!.t < POLL_GAP_MS && s.label !== all[i - 1]!.label);
    expect(close).toEqual([]);
    // The starts depend only on the clock and the runs: a second run on a new clock gives the same times.
    expect(await pollStarts(60, DURATIONS)).toEqual(starts);
  });

  it('a poll waits pollMs after its run, and at most the other polls’ gaps more', async () => {
    const starts = await pollStarts(60, DURATIONS);
    for (const [label, ts] of starts) {
      expect(ts.length).toBeGreaterThanOrEqual(20);
      const ds = DURATIONS[label as keyof typeof DURATIONS];
      for (let i = 1; i < ts.length; i++) {
        const wait = ts[i]! - ts[i - 1]! - ds[(i - 1) % ds.length]!;
        expect(wait).toBeGreaterThanOrEqual(POLL_MS);
        expect(wait).toBeLessThanOrEqual(POLL_MS + 2 * POLL_GAP_MS);
      }
    }
  });
});
