import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { Persistence, PersistenceError } from '../../src/persist/store.js';
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

describe('Persistence', () => {
  it('restores catalog, quotes, books and trades after a restart', async () => {
    const dir = tmp();
    const p = new Persistence(dir);
    const s = new EngineState(venues);
    p.attach(s);
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
    expect(s2.quotes.get('venue_a', 'M')).toMatchObject({ yesBid: 4000, yesAsk: 4500, lastPrice: 4400 });
    expect(s2.books.marketBook('venue_a', 'M')).toMatchObject({ bids: [[4000, 10]], asks: [[4500, 2]], ready: true });
    expect(s2.trades.seq).toBe(2);
    // the closed one-minute candle was appended
    expect(p2.candles('venue_a', 'M', 0, Infinity)).toMatchObject([{ t: 60_000, volume: 3 }]);
    // a restored trade is not duplicated when the venue re-sends it
    expect(s2.trades.add({ ...base, type: 'trade', marketId: 'M', tradeId: 't2', price: 1, yesPrice: 1, size: 1 })).toBeUndefined();
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
