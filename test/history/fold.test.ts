import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { Capture, CaptureStore } from '../../src/capture/index.js';
import { loadConfig } from '../../src/config/load.js';
import { VirtualClock } from '../../src/core/clock.js';
import { log } from '../../src/core/log.js';
import type { FeedEvent, NormalizedEvent } from '../../src/core/types.js';
import { HISTORY_LIMITS, HistoryIndex, type MarketRef } from '../../src/history/index.js';
import { sliceStarts } from '../../src/history/slice.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';

/**
 * SIMULATOR DATA: test/fixtures/backtest/sim-session.ndjson.gz, 31 s of the eight simulated venues'
 * normalized events (catalogs with YES/NO token instruments on venue_b and venue_e, snapshots,
 * deltas, quotes, trades), written to a capture as event records, with two resets added (venue_b
 * disconnected mid-session, a gap on one venue_a book) since the recording has none. The index
 * takes each slice's starts from the slice before (its starts folded with its events), so the
 * truth to hold it to is a live `EngineState` that applied the same events in order: at moments
 * across every slice (closed by time and by size, written to disk, the open one in memory), each
 * market's books, book of record and quote read from the index equal the live state's.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-hist-fold-'));
const limits = { ...HISTORY_LIMITS };
afterAll(() => {
  Object.assign(HISTORY_LIMITS, limits);
  rmSync(dir, { recursive: true, force: true });
});

const config = loadConfig({ env: {} });
const recorded = gunzipSync(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'backtest', 'sim-session.ndjson.gz')))
  .toString('utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { type: string; event?: NormalizedEvent })
  .flatMap((l) => (l.type === 'event' ? [l.event!] : []));

/** The recording with a venue_b disconnect at 40% and a gap of one venue_a book at 70% (each at the time of the event before it). */
function withResets(events: readonly NormalizedEvent[]): NormalizedEvent[] {
  const out = [...events];
  const at = (i: number): number => out[i - 1]!.localTimestamp;
  const i1 = Math.floor(out.length * 0.4);
  out.splice(i1, 0, { type: 'feed', venue: 'venue_b', timestamp: at(i1), localTimestamp: at(i1), state: 'disconnected' } satisfies FeedEvent);
  const i2 = Math.floor(out.length * 0.7);
  const book = out.slice(0, i2).find((e) => e.venue === 'venue_a' && e.type === 'book_snapshot');
  expect(book).toBeDefined();
  const instrument = book!.type === 'book_snapshot' ? book!.instrument : '';
  out.splice(i2, 0, { type: 'feed', venue: 'venue_a', timestamp: at(i2), localTimestamp: at(i2), state: 'gap', instrument } satisfies FeedEvent);
  return out;
}

const events = withResets(recorded);
const T0 = events[0]!.localTimestamp;
const T1 = events.at(-1)!.localTimestamp;
const markets = [...new Map(events.flatMap((e) => (e.type === 'feed' ? [] : [[`${e.venue}:${e.marketId}`, [e.venue, e.marketId] as const]]))).values()];

/** What a read of a market shows: its book of record, each of its instruments' books, and its quote. */
function view(s: EngineState, ref: MarketRef): unknown {
  const books = [...new Set([ref.marketId, ref.yes, ref.no])].flatMap((ins) => {
    const b = ins === undefined ? undefined : s.books.instrument(ref.venue, ins);
    return b ? [[ins, b.bids.levels(), b.asks.levels(), b.ready, b.timestamp, b.recvTs, b.role]] : [];
  });
  return { book: s.books.marketBook(ref.venue, ref.marketId), books, quote: s.quotes.get(ref.venue, ref.marketId) };
}

describe('the history index takes each slice start from the slice before', () => {
  it('answers every market at moments across slices (by time, by size, on disk and open) as the live state that applied the same events', async () => {
    // Slices of 4 s, closed sooner past 600 events; chunks of 4 KiB, so the open slice reads back from its file.
    Object.assign(HISTORY_LIMITS, { sliceEvents: 600, chunkBytes: 4096 });
    const clock = new VirtualClock(T0);
    const cap = new Capture(new CaptureStore(join(dir, 'cap')), { clock, log });
    const index = new HistoryIndex(cap.store, config.venues, { sliceMs: 4000, after: cap.lastSeq, from: T0 });
    const live = new EngineState(config.venues);
    const refOf = ([venue, marketId]: readonly [string, string]): MarketRef => {
      const rec = live.catalog.get(venue, marketId);
      return { venue, marketId, yes: rec?.yesInstrument, no: rec?.noInstrument };
    };
    // Moments: every second, each reset's, and each event's at a few indexes; the open slice is read as the capture goes.
    const moments = new Set<number>();
    for (let t = T0; t <= T1; t += 1000) moments.add(t);
    for (let i = 0; i < events.length; i += 397) moments.add(events[i]!.localTimestamp);
    for (const e of events) if (e.type === 'feed' && (e.state === 'disconnected' || e.state === 'gap')) moments.add(e.localTimestamp);
    const sorted = [...moments].sort((a, b) => a - b);
    let openReads = 0;
    for (let i = 0; i < events.length; i += 1000) {
      const batch = events.slice(i, i + 1000);
      for (const e of batch) cap.venue(e.venue).event(e);
      const upTo = cap.lastSeq;
      await cap.flush();
      await index.sync(upTo);
      for (const e of batch) applyEvent(live, e);
      // A read at the last moment indexed, from the open slice (its next event may share the moment: read the one before).
      const t = batch.at(-1)!.localTimestamp;
      if (events[i + 1000]?.localTimestamp === t) continue;
      const refs = markets.map(refOf);
      const got = index.stateAt(t, refs);
      for (const ref of refs) expect(view(got, ref), `${ref.venue}:${ref.marketId} at ${t} (open slice)`).toEqual(view(live, ref));
      openReads++;
    }
    expect(openReads).toBeGreaterThan(3);
    const slices = sliceStarts(join(cap.store.dir, '_history'));
    // Slices by time (4 s over 31 s) and by size (600 events): more than the 8 time alone makes.
    expect(slices.length).toBeGreaterThan(9);
    expect(slices.filter((s) => s % 4000 !== 0).length).toBeGreaterThan(0);

    const truth = new EngineState(config.venues);
    let next = 0;
    let compared = 0;
    for (const t of sorted) {
      while (next < events.length && events[next]!.localTimestamp <= t) applyEvent(truth, events[next++]!);
      const refs = markets.map(([venue, marketId]) => {
        const rec = truth.catalog.get(venue, marketId);
        return { venue, marketId, yes: rec?.yesInstrument, no: rec?.noInstrument };
      });
      const got = index.stateAt(t, refs);
      for (const ref of refs) {
        const want = view(truth, ref);
        expect(view(got, ref), `${ref.venue}:${ref.marketId} at ${t - T0} ms`).toEqual(want);
        if ((want as { book?: unknown }).book !== undefined) compared++;
      }
    }
    expect(compared).toBeGreaterThan(10_000);
    await cap.close();
  });
});
