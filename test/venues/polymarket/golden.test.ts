import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { VenueConfig } from '../../../src/config/schema.js';
import { OrderBook } from '../../../src/core/book.js';
import type { BookSnapshot, NormalizedEvent } from '../../../src/core/types.js';
import { PolymarketMapper } from '../../../src/venues/polymarket/mappers.js';
import { expectGolden } from './golden.js';

const venue: VenueConfig = loadConfig({ env: {} }).venues.find((v) => v.protocol === 'polymarket')!;
const LOCAL = 1_790_700_000_000;

/** Maps frames in order; returns the events and each token's book, applied level by level. */
function replay(frames: readonly unknown[]): { m: PolymarketMapper; events: NormalizedEvent[]; books: Map<string, OrderBook>; before: Map<string, OrderBook> } {
  const m = new PolymarketMapper(venue);
  const events: NormalizedEvent[] = [];
  const books = new Map<string, OrderBook>();
  // Each token's book as it stood just before its last `book` frame.
  const before = new Map<string, OrderBook>();
  for (const f of frames) {
    for (const e of m.map(f, LOCAL)) {
      events.push(e);
      if (e.type === 'book_snapshot') {
        const prev = books.get(e.instrument);
        if (prev) before.set(e.instrument, prev);
        const b = new OrderBook(e.instrument);
        b.snapshot(e.bids, e.asks, e.timestamp);
        books.set(e.instrument, b);
      } else if (e.type === 'book_delta') books.get(e.instrument)?.apply(e.changes, e.timestamp);
      else if (e.type === 'feed' && e.state === 'gap' && e.instrument) books.get(e.instrument)?.reset();
    }
  }
  return { m, events, books, before };
}

describe('polymarket golden: best_bid/best_ask leading the levels around a trade (real frames)', () => {
  const FIXTURE = 'test/fixtures/polymarket/ws_price_change_burst_capture_2026-09-29.json';
  const frames = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];

  it('maps book → 48 price_change → book to the expected events', () => {
    expect(frames.map((f) => f['event_type'])).toEqual(['book', ...Array<string>(frames.length - 2).fill('price_change'), 'book']);
    expectGolden(FIXTURE, replay(frames).events);
  });

  it('warns on the leading best price but never resets: the level updates rebuild the venue next book exactly', () => {
    const { m, events, before } = replay(frames);
    // The trade frames at …827000 report best_bid 0.29 while the bids at 0.311 and 0.301 are only
    // removed by the two frames after it: a disagreement, not a lost update.
    expect(m.bestPriceWarnings).toBeGreaterThan(0);
    expect(m.stats.gaps).toBe(0);
    expect(events.filter((e) => e.type === 'feed')).toEqual([]);
    const last = events[events.length - 1] as BookSnapshot;
    expect(last.type).toBe('book_snapshot');
    const rebuilt = before.get(last.instrument)!;
    expect(rebuilt.ready).toBe(true);
    expect([rebuilt.bids.levels(), rebuilt.asks.levels()]).toEqual([last.bids, last.asks]);
  });

  it('a disagreement that persists through later frames is a gap (the feed resyncs the token)', () => {
    // The same real frames with the removals of the stale 0.311 and 0.301 bids (the last two
    // price_change frames) lost: the venue's best bid stays 0.29 while ours stays 0.311.
    const lossy = frames.slice(0, -3);
    const repeats = frames.slice(-4, -3);
    const { m, events } = replay([...lossy, ...repeats, ...repeats, ...repeats]);
    // Only the token the capture has a `book` of is checked (the other's changes pass unchecked).
    const gaps = events.filter((e) => e.type === 'feed' && e.state === 'gap');
    expect(gaps).toEqual([
      expect.objectContaining({
        instrument: '76670567130917723816490572615540605537878462672464291990940067659127658071111',
        detail: expect.stringMatching(/^best bid 3110 != venue 2900 through 3 frames/),
      }),
    ]);
    expect(m.stats.gaps).toBe(1);
    expect(m.bestPriceWarnings).toBe(1);
    // Within the allowance (two more frames) it is still a warning only.
    expect(replay([...lossy, ...repeats, ...repeats]).m.stats.gaps).toBe(0);
  });
});
