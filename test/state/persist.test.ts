import { persistChanges } from '../../pipelines/persistence.js';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { idCandleKey, idKey } from '../../src/persist/keys.js';
import { Persistence, PersistenceError } from '../../src/persist/store.js';
import { storeIdOf } from '../../src/state/catalog.js';
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

/**
 * The store in `dir` with its state loaded, market M of venue_a listed in it and its catalog record
 * written (format 4: a market's candles are found again after a restart through the record that
 * carries its id).
 */
async function listedM(dir: string): Promise<{ p: Persistence; s: EngineState; id: number }> {
  const p = new Persistence(dir);
  const s = new EngineState(venues);
  p.load(s);
  if (!s.catalog.get('venue_a', 'M')) {
    applyEvent(s, { ...base, type: 'market', marketId: 'M', title: 'M', status: 'active' });
    p.markMarket('venue_a', 'M');
    await p.flushCatalog(s);
  }
  return { p, s, id: storeIdOf(s.catalog.get('venue_a', 'M')!) };
}

describe('Persistence', () => {
  it('restores catalog, quotes, books and trades after a restart', async () => {
    const dir = tmp();
    const p = new Persistence(dir);
    const s = new EngineState(venues);
    persistChanges(s, p);
    const evs: NormalizedEvent[] = [
      { ...base, type: 'market', marketId: 'M', title: 'Will it?', status: 'active', closeTime: 9e12 },
      { ...base, type: 'book_snapshot', marketId: 'M', instrument: 'M', bids: [[4000, 10]], asks: [[4500, 2]] },
      { ...base, type: 'trade', marketId: 'M', tradeId: 't1', price: 4500, yesPrice: 4500, size: 3 },
      { ...base, localTimestamp: 130_000, type: 'trade', marketId: 'M', tradeId: 't2', price: 4400, yesPrice: 4400, size: 1 },
    ];
    for (const e of evs) applyEvent(s, e);
    await p.snapshot(s);
    await p.close();

    const p2 = new Persistence(dir);
    const s2 = new EngineState(venues);
    const counts = p2.load(s2);
    expect(counts).toEqual({ markets: 1, quotes: 1, books: 1, trades: 2 });
    expect(s2.catalog.get('venue_a', 'M')!.title).toBe('Will it?');
    // stored with the fields it has, no key for an absent one
    expect(Object.keys(p2.db('catalog').get(idKey(storeIdOf(s2.catalog.get('venue_a', 'M')!))) as object).sort()).toEqual(
      ['venue', 'marketId', 'title', 'status', 'closeTime', 'firstSeenAt', 'recordedAt', 'updatedAt'].sort(),
    );
    expect(s2.quotes.get('venue_a', 'M')).toMatchObject({ yesBid: 4000, yesAsk: 4500, lastPrice: 4400 });
    expect(s2.books.marketBook('venue_a', 'M')).toMatchObject({ bids: [[4000, 10]], asks: [[4500, 2]], ready: true });
    expect(s2.trades.seq).toBe(2);
    // the closed one-minute candle was appended
    expect(p2.candles('venue_a', 'M', 0, Infinity)).toMatchObject([{ t: 60_000, volume: 3 }]);
    // a restored trade is not duplicated when the venue re-sends it
    expect(s2.trades.add({ ...base, type: 'trade', marketId: 'M', tradeId: 't2', price: 1, yesPrice: 1, size: 1 })).toBeUndefined();
    await p2.close();
  });

  it('folds closed minutes into hour and day rollups, continuing a bucket after a restart', async () => {
    const dir = tmp();
    const H = 3_600_000;
    const m = (t: number, o: number, h: number, l: number, c: number, volume: number) => ({
      venue: 'venue_a',
      marketId: 'M',
      t,
      o,
      h,
      l,
      c,
      mid: c,
      volume,
      trades: volume ? 1 : 0,
    });
    const { p } = await listedM(dir);
    p.appendCandle(m(10 * H, 4000, 4200, 3900, 4100, 5));
    p.appendCandle(m(10 * H + 60_000, 4100, 4500, 4000, 4400, 2));
    p.appendCandle(m(11 * H, 4400, 4400, 4300, 4300, 1));
    await p.close();
    const { p: p2 } = await listedM(dir);
    p2.appendCandle(m(11 * H + 60_000, 4300, 4600, 4250, 4550, 3)); // same hour, after a restart
    await p2.flushed();
    expect(p2.candles('venue_a', 'M', 0, Infinity, '1h')).toEqual([
      { venue: 'venue_a', marketId: 'M', t: 10 * H, o: 4000, h: 4500, l: 3900, c: 4400, mid: 4400, volume: 7, trades: 2 },
      { venue: 'venue_a', marketId: 'M', t: 11 * H, o: 4400, h: 4600, l: 4250, c: 4550, mid: 4550, volume: 4, trades: 2 },
    ]);
    expect(p2.candles('venue_a', 'M', 0, Infinity, '1d')).toEqual([
      { venue: 'venue_a', marketId: 'M', t: 0, o: 4000, h: 4600, l: 3900, c: 4550, mid: 4550, volume: 11, trades: 4 },
    ]);
    expect(p2.candles('venue_a', 'M', 0, Infinity)).toHaveLength(4);
    await p2.close();
  });

  it('keeps the YES bid, ask and money traded through the minute log and its rollups; a minute stored before them reads without them', async () => {
    const dir = tmp();
    const { p, id } = await listedM(dir);
    // A minute as stored before bid, ask and money traded were kept: the stored record has no such keys.
    p.db('candles').putSync(idCandleKey(id, 60_000), { o: 4000, h: 4100, l: 3900, c: 4050, mid: 4025, volume: 3, trades: 1 });
    const older = p.candles('venue_a', 'M', 0, Infinity)[0]!;
    expect([older.bid, older.ask, older.notional]).toEqual([undefined, undefined, undefined]);
    const minute = { venue: 'venue_a', marketId: 'M', o: 4050, h: 4200, l: 4000, c: 4200, mid: 4150, volume: 2, trades: 2 };
    p.appendCandle({ ...minute, t: 120_000, bid: 4100, ask: 4200, notional: 8_300 });
    p.appendCandle({ ...minute, t: 180_000, bid: 4150, ask: undefined, notional: 4_200 });
    await p.close();
    const { p: p2 } = await listedM(dir);
    expect(p2.candles('venue_a', 'M', 100_000, Infinity)).toEqual([
      { ...minute, t: 120_000, bid: 4100, ask: 4200, notional: 8_300 },
      { ...minute, t: 180_000, bid: 4150, notional: 4_200 },
    ]);
    // The hour: bid and ask of its last minute, the money of the minutes that recorded it.
    expect(p2.candles('venue_a', 'M', 0, Infinity, '1h')).toMatchObject([{ t: 0, bid: 4150, ask: undefined, notional: 12_500, volume: 4 }]);
    await p2.close();
  });

  it('gives each market and instrument an id that its records carry across a restart; a new market after it gets the next', async () => {
    const dir = tmp();
    const p = new Persistence(dir);
    const s = new EngineState(venues);
    p.load(s);
    persistChanges(s, p);
    for (const id of ['A', 'B']) {
      applyEvent(s, { ...base, type: 'market', marketId: id, title: id, status: 'active' });
      applyEvent(s, { ...base, type: 'book_snapshot', marketId: id, instrument: id, bids: [[4000, 10]], asks: [[4500, 2]] });
    }
    await p.snapshot(s);
    const minute = { venue: 'venue_a', marketId: 'B', t: 60_000, o: 4000, h: 4100, l: 3900, c: 4050, mid: 4025, volume: 3, trades: 1 };
    p.appendCandle(minute);
    // Listed, but its catalog record not flushed yet: its first candle puts the record first.
    applyEvent(s, { ...base, type: 'market', marketId: 'C', title: 'C', status: 'active' });
    p.appendCandle({ ...minute, marketId: 'C' });
    const ids = ['A', 'B', 'C'].map((m) => storeIdOf(s.catalog.get('venue_a', m)!));
    const books = ['A', 'B'].map((m) => s.books.instrument('venue_a', m)!.storeId);
    expect(new Set(ids).size).toBe(3);
    expect(books.every((b) => b !== 0)).toBe(true);
    await p.close();

    const p2 = new Persistence(dir);
    const s2 = new EngineState(venues);
    p2.load(s2);
    expect(['A', 'B', 'C'].map((m) => storeIdOf(s2.catalog.get('venue_a', m)!))).toEqual(ids);
    expect(['A', 'B'].map((m) => s2.books.instrument('venue_a', m)!.storeId)).toEqual(books);
    expect(p2.candles('venue_a', 'B', 0, Infinity)).toEqual([minute]);
    expect(p2.candles('venue_a', 'C', 0, Infinity)).toEqual([{ ...minute, marketId: 'C' }]);
    expect(p2.candles('venue_a', 'A', 0, Infinity)).toEqual([]);
    persistChanges(s2, p2);
    applyEvent(s2, { ...base, type: 'market', marketId: 'D', title: 'D', status: 'active' });
    applyEvent(s2, { ...base, type: 'book_snapshot', marketId: 'D', instrument: 'D', bids: [[4000, 10]], asks: [[4500, 2]] });
    await p2.snapshot(s2);
    const d = storeIdOf(s2.catalog.get('venue_a', 'D')!);
    expect(d).toBe(Math.max(...ids) + 1);
    expect(s2.books.instrument('venue_a', 'D')!.storeId).toBe(Math.max(...books) + 1);
    expect(p2.db('catalog').get(idKey(d))).toMatchObject({ venue: 'venue_a', marketId: 'D' });
    await p2.close();
  });

  it('refuses to guess when data files are missing or corrupt', async () => {
    const dir = tmp();
    const p = new Persistence(dir);
    await p.close();
    rmSync(join(dir, 'crossbook.mdb'));
    expect(() => new Persistence(dir)).toThrow(/crossbook.mdb is missing/);

    const dir2 = tmp();
    writeFileSync(join(dir2, 'crossbook.mdb'), 'x'.repeat(20_000));
    expect(() => new Persistence(dir2)).toThrow(/without crossbook.json/);
    writeFileSync(join(dir2, 'crossbook.json'), JSON.stringify({ format: 1, createdAt: 'x' }));
    expect(() => new Persistence(dir2)).toThrow(PersistenceError);

    const dir3 = tmp();
    writeFileSync(join(dir3, 'crossbook.json'), '{not json');
    writeFileSync(join(dir3, 'crossbook.mdb'), '');
    expect(() => new Persistence(dir3)).toThrow(/crossbook.json is corrupt/);

    const file = join(tmp(), 'plain-file');
    writeFileSync(file, '');
    expect(() => new Persistence(file)).toThrow(/not a directory/);
    expect(existsSync(join(dir3, 'crossbook.mdb'))).toBe(true);
  });
});
