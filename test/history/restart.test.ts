import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Capture, CaptureStore } from '../../src/capture/index.js';
import { loadConfig } from '../../src/config/load.js';
import { VirtualClock } from '../../src/core/clock.js';
import { log } from '../../src/core/log.js';
import { HistoryIndex, NotIndexedError } from '../../src/history/index.js';
import { SliceFile, sliceStarts } from '../../src/history/slice.js';

/**
 * A restart inside a slice's window: the earlier process wrote its last slice at the window's
 * boundary, and the next process's first slice falls in the same window. Its name (the start) must
 * not be the boundary's, or writing it replaces the earlier run's slice and every `as_of` read of a
 * moment before the restart in that window loses what that run indexed. And a moment between the
 * two runs (the service stopped) is not the earlier run's last state: the index says it holds
 * nothing there (`NotIndexedError`, the API's 400 as_of.not_indexed). Real Kalshi snapshot frame
 * (test/fixtures/kalshi, the venue's documented example).
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-hist-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const config = loadConfig({ env: {} });
const kalshi = config.venues.find((v) => v.protocol === 'kalshi')!;
const snapshot = (
  JSON.parse(readFileSync(new URL('../fixtures/kalshi/ws_orderbook_snapshot_then_delta_spec_example.json', import.meta.url), 'utf8')) as unknown[]
).map((f) => JSON.stringify(f))[0]!;
const T0 = 1_800_000_000_000; // a 5-minute boundary
const SLICE_MS = 300_000;
const first = { venue: kalshi.label, marketId: 'FED-23DEC-T3.00' };
const second = { venue: kalshi.label, marketId: 'FED-23DEC-T4.00' };

/** One process's run: a capture on the store, an index from `from`, one snapshot frame of `market` at `at`, then its close half a second later. */
async function run(clock: VirtualClock, from: number, at: number, marketId: string, connection: number): Promise<void> {
  const cap = new Capture(new CaptureStore(join(dir, 'cap')), { clock, log });
  const index = new HistoryIndex(cap.store, config.venues, { sliceMs: SLICE_MS, after: cap.lastSeq, from });
  cap.venue(kalshi.label).frame(snapshot.replace('"FED-23DEC-T3.00"', JSON.stringify(marketId)), connection, at);
  await cap.flush();
  await index.close(cap.lastSeq, at + 500);
  await cap.close();
}

describe('the history index across a restart inside a slice window', () => {
  it("keeps the earlier run's last slice: moments it covers read it, moments after the new run began read that, and the stop between is a gap", async () => {
    const clock = new VirtualClock(T0);
    await run(clock, T0, T0 + 1_000, first.marketId, 1);
    // The next process starts a minute later, inside the same 5-minute window: its first slice begins when it began.
    await run(clock, T0 + 60_000, T0 + 61_000, second.marketId, 2);
    const hist = join(dir, 'cap', '_history');
    expect(sliceStarts(hist)).toEqual([T0, T0 + 60_000]);
    // Each covers from its start to its close (the earlier run's first slice from when that run began).
    expect([T0, T0 + 60_000].map((s) => SliceFile.open(hist, s).covers)).toEqual([
      [T0, T0 + 1_500],
      [T0 + 60_000, T0 + 61_500],
    ]);
    const index = new HistoryIndex(new CaptureStore(join(dir, 'cap')), config.venues, { sliceMs: SLICE_MS, after: 2, from: T0 + 120_000 });
    const at = (t: number, m: typeof first): unknown => index.stateAt(t, [m]).books.marketBook(m.venue, m.marketId)?.bids;
    const book = [
      [2200, 333],
      [800, 300],
    ];
    expect(at(T0 + 1_200, first)).toEqual(book);
    expect(at(T0 + 1_200, second)).toBeUndefined();
    expect(at(T0 + 60_500, second)).toBeUndefined();
    expect(at(T0 + 61_200, second)).toEqual(book);
    // While no process ran, the index holds nothing: not the earlier run's last state.
    for (const t of [T0 + 1_501, T0 + 30_000, T0 + 59_999]) {
      const gap = catchGap(() => at(t, first));
      expect(gap, String(t)).toBeInstanceOf(NotIndexedError);
      expect([gap!.before, gap!.after]).toEqual([T0 + 1_500, T0 + 60_000]);
    }
    // After the last run's close: nothing since.
    const after = catchGap(() => at(T0 + 100_000, second));
    expect([after?.before, after?.after]).toEqual([T0 + 61_500, undefined]);
  });
});

function catchGap(f: () => unknown): NotIndexedError | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    if (e instanceof NotIndexedError) return e;
    throw e;
  }
}
