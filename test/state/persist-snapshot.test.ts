import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { persistChanges } from '../../pipelines/persistence.js';
import { loadConfig } from '../../src/config/load.js';
import { Persistence } from '../../src/persist/store.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';

const venues = loadConfig({ env: {} }).venues;
const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'cb-lmdb-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const base = { venue: 'venue_a', timestamp: 1, localTimestamp: 60_000 };
/** More markets than one snapshot commit holds (SNAPSHOT_CHUNK), so a snapshot spans several. */
const MARKETS = 700;

function list(s: EngineState, from: number, to: number): void {
  for (let i = from; i < to; i++) {
    applyEvent(s, { ...base, type: 'market', marketId: `M${i}`, title: `Market ${i}`, status: 'active', closeTime: 9e12 });
    applyEvent(s, { ...base, type: 'book_snapshot', marketId: `M${i}`, instrument: `M${i}`, bids: [[4000 + i, 10]], asks: [[6000, 2]] });
  }
}

describe('Persistence snapshots', () => {
  it('writes what changed since the last snapshot, across several commits, and a full one on request', async () => {
    const dir = tmp();
    const p = new Persistence(dir);
    const s = new EngineState(venues);
    persistChanges(s, p);
    list(s, 0, MARKETS);
    expect(await p.snapshot(s)).toEqual({ catalog: MARKETS, quotes: MARKETS, books: MARKETS });
    // Nothing changed since: nothing is written.
    expect(await p.snapshot(s)).toEqual({ catalog: 0, quotes: 0, books: 0 });
    // One book changes (and with it the quote); a market is listed while the snapshot runs.
    applyEvent(s, { ...base, type: 'book_snapshot', marketId: 'M3', instrument: 'M3', bids: [[4100, 7]], asks: [[5900, 1]] });
    const running = p.snapshot(s);
    list(s, MARKETS, MARKETS + 1);
    expect(await running).toEqual({ catalog: 0, quotes: 1, books: 1 });
    // The market listed during that snapshot is in the next one.
    expect(await p.snapshot(s)).toEqual({ catalog: 1, quotes: 1, books: 1 });
    expect(await p.snapshot(s, true)).toEqual({ catalog: MARKETS + 1, quotes: MARKETS + 1, books: MARKETS + 1 });
    await p.close();

    const p2 = new Persistence(dir);
    const s2 = new EngineState(venues);
    expect(p2.load(s2)).toMatchObject({ markets: MARKETS + 1, quotes: MARKETS + 1, books: MARKETS + 1 });
    expect(s2.books.marketBook('venue_a', 'M3')).toMatchObject({ bids: [[4100, 7]], asks: [[5900, 1]] });
    expect(s2.books.marketBook('venue_a', `M${MARKETS - 1}`)).toMatchObject({ bids: [[4000 + MARKETS - 1, 10]] });
    expect(s2.catalog.get('venue_a', `M${MARKETS}`)!.title).toBe(`Market ${MARKETS}`);
    await p2.close();
  });

  it('writes a book that changes again after each kind of snapshot, and to every store marking it', async () => {
    const dirA = tmp();
    const dirB = tmp();
    const a = new Persistence(dirA);
    const b = new Persistence(dirB);
    const s = new EngineState(venues);
    persistChanges(s, a);
    persistChanges(s, b);
    list(s, 0, 2);
    const move = (bid: number): void => applyEvent(s, { ...base, type: 'book_delta', marketId: 'M1', instrument: 'M1', changes: [['bid', bid, 3]] });
    move(4500);
    move(4600);
    expect(await a.snapshot(s)).toEqual({ catalog: 2, quotes: 2, books: 2 });
    // Changed after store a's snapshot: a writes it again; b, whose marks are its own, still has both books.
    move(4700);
    expect(await a.snapshot(s)).toEqual({ catalog: 0, quotes: 1, books: 1 });
    expect(await b.snapshot(s)).toEqual({ catalog: 2, quotes: 2, books: 2 });
    await a.snapshot(s, true);
    move(4800);
    expect(await a.snapshot(s)).toEqual({ catalog: 0, quotes: 1, books: 1 });
    // Changed while a snapshot runs: in the next one.
    move(4900);
    const running = a.snapshot(s);
    move(5000);
    expect(await running).toEqual({ catalog: 0, quotes: 1, books: 1 });
    expect(await a.snapshot(s)).toEqual({ catalog: 0, quotes: 1, books: 1 });
    expect(await a.snapshot(s)).toEqual({ catalog: 0, quotes: 0, books: 0 });
    await a.close();
    await b.close();

    const back = new EngineState(venues);
    const a2 = new Persistence(dirA);
    a2.load(back);
    expect(back.books.marketBook('venue_a', 'M1')?.bids[0]).toEqual([5000, 3]);
    await a2.close();
  });

  it("writes the catalog flush in commits, reading each record when its put is issued (a venue's whole catalog is not one synchronous loop)", async () => {
    const dir = tmp();
    const p = new Persistence(dir);
    const s = new EngineState(venues);
    persistChanges(s, p);
    list(s, 0, MARKETS);
    const rename = (i: number): void => applyEvent(s, { ...base, type: 'market', marketId: `M${i}`, title: `Renamed ${i}`, status: 'active', closeTime: 9e12 });
    const running = p.flushCatalog(s);
    // Back from the call: the first commit's records are issued, the last market's is not yet.
    rename(0);
    rename(MARKETS - 1);
    expect(await running).toBe(MARKETS);
    await p.close();
    const p2 = new Persistence(dir);
    const s2 = new EngineState(venues);
    expect(p2.load(s2)).toMatchObject({ markets: MARKETS });
    // The first commit's record as it was at the call, the last as it was when its commit came.
    expect(s2.catalog.get('venue_a', 'M0')!.title).toBe('Market 0');
    expect(s2.catalog.get('venue_a', `M${MARKETS - 1}`)!.title).toBe(`Renamed ${MARKETS - 1}`);
    await p2.close();
  });
});
