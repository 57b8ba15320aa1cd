import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CaptureStore } from '../../src/capture/index.js';
import { normalizerVersion } from '../../src/capture/normblock.js';
import { NormLines } from '../../src/capture/normcache.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/core/log.js';
import { HistoryIndex, stateFrom, type MarketRef } from '../../src/history/index.js';
import { SliceFile, sliceStarts } from '../../src/history/slice.js';
import { startService, type Service } from '../../src/service.js';

/**
 * SIMULATOR DATA. The service's history index takes each capture record with the events the live
 * feeds made of it (src/history/handoff.ts) instead of mapping the capture again. Both inputs must
 * index alike: a live service (every simulated venue: venue_a's relative book deltas, venue_b's
 * Polymarket frames, REST-polled venues) writes its slices and normalized cache lines from the
 * handed events; the same capture, copied, is then indexed through `ReplayFeed` (the capture-reading
 * path), and the slice files, the `as_of` states read from them and the cache files are the same bytes.
 */
const SLICE_MS = 2_000;
const dir = mkdtempSync(join(tmpdir(), 'cb-handoff-'));
const again = mkdtempSync(join(tmpdir(), 'cb-handoff-replay-'));
const config = loadConfig({
  env: {},
  overrides: {
    dataDir: dir,
    server: { host: '127.0.0.1', port: 0, baseUrl: null },
    sim: { ticksPerSecond: 100, seed: 41, process: 'inline' },
    capture: { enabled: true, retention: { days: 7, bytes: 1024 ** 3 }, checkpointIntervalMs: SLICE_MS, historyCloseMs: 600_000 },
  },
});
let svc: Service | undefined;

beforeAll(async () => {
  svc = await startService(config, { log: createLogger('warn', { write: () => undefined }) });
});

afterAll(async () => {
  await svc?.close();
  for (const d of [dir, again]) rmSync(d, { recursive: true, force: true });
});

/** Every file under `root` (relative path → sha256 of its bytes). */
function digests(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[relative(root, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  if (existsSync(root)) walk(root);
  return out;
}

describe('the history index from the live events handed to it', () => {
  it('writes the slices, as_of states and normalized cache lines that ReplayFeed over the same capture gives', { timeout: 180_000 }, async () => {
    const s = svc!;
    const capDir = s.capture!.store.dir;
    const hist = join(capDir, '_history');
    // Several slices (each market's start in the next taken from this one's events), with books of the delta venue and of venue_b in them.
    await vi.waitFor(
      () => {
        expect(sliceStarts(hist).length).toBeGreaterThanOrEqual(3);
        expect(s.state.books.marketRecvTs('venue_a', anyMarket(s, 'venue_a') ?? '')).toBeGreaterThan(0);
        expect(anyMarket(s, 'venue_b')).toBeDefined();
      },
      { timeout: 150_000, interval: 200 },
    );
    const markets = ['venue_a', 'venue_b', 'venue_c'].flatMap((v) => refs(s, v, 20));
    await s.close();
    svc = undefined;
    const live = sliceStarts(hist);
    expect(live.length).toBeGreaterThanOrEqual(4);
    const first = SliceFile.open(hist, live[0]!).covers!;
    const last = SliceFile.open(hist, live.at(-1)!).covers!;

    // The same capture, without what the index wrote, indexed again from its records through ReplayFeed.
    const copy = join(again, 'capture');
    cpSync(capDir, copy, { recursive: true, filter: (src) => !src.includes('_history') && !src.includes('_norm') });
    const store = new CaptureStore(copy);
    const lines = new NormLines(store, 0, config.venues, { version: normalizerVersion(config.venues), maxBytes: 1024 ** 3 / 4 });
    const index = new HistoryIndex(store, config.venues, { sliceMs: SLICE_MS, after: 0, from: first[0], tail: [], lines });
    await index.close(store.lastSeq(), last[1]);
    expect(index.stopped).toBeUndefined();
    expect(index.gaps).toBe(0);

    const replayed = join(copy, '_history');
    expect(sliceStarts(replayed)).toEqual(live);
    const a = digests(hist);
    expect(Object.keys(a).length).toBe(live.length);
    expect(digests(replayed)).toEqual(a);
    const norm = digests(join(capDir, '_norm'));
    expect(Object.keys(norm).length).toBeGreaterThan(0);
    expect(digests(join(copy, '_norm'))).toEqual(norm);

    // as_of reads in every slice: the same books and quotes from both.
    for (const start of live) {
      const f = SliceFile.open(hist, start);
      const g = SliceFile.open(replayed, start);
      const [from, to] = f.covers!;
      for (const t of [from, (from + to) / 2, to]) {
        const x = stateFrom(config.venues, f, t, markets);
        const y = stateFrom(config.venues, g, t, markets);
        expect([...y.quotes.all()]).toEqual([...x.quotes.all()]);
        expect([...y.books.entries()].map(([v, i]) => [v, i, y.books.instrument(v, i)!.bids.levels(), y.books.instrument(v, i)!.asks.levels()])).toEqual(
          [...x.books.entries()].map(([v, i]) => [v, i, x.books.instrument(v, i)!.bids.levels(), x.books.instrument(v, i)!.asks.levels()]),
        );
      }
    }
  });
});

function anyMarket(s: Service, venue: string): string | undefined {
  for (const q of s.state.quotes.all()) if (q.venue === venue && s.state.books.marketRecvTs(q.venue, q.marketId) > 0) return q.marketId;
  return undefined;
}

function refs(s: Service, venue: string, n: number): MarketRef[] {
  const out: MarketRef[] = [];
  for (const m of s.state.catalog.venue(venue).values()) {
    if (out.length >= n) break;
    out.push({ venue, marketId: m.marketId, yes: m.yesInstrument, no: m.noInstrument });
  }
  return out;
}
