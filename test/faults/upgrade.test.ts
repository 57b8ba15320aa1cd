import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type Database } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { checkInChild, damageLines, healthy } from '../../src/persist/check.js';
import { candleKey, ID_BASE, idCandleKey, idKey, marketCode } from '../../src/persist/keys.js';
import { dbOptions, Persistence, type DbName } from '../../src/persist/store.js';
import type { Candle } from '../../src/state/candles.js';
import { storedMarket, storeIdOf } from '../../src/state/catalog.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';

/**
 * Store format 4 (u32 ids, src/persist/keys.ts): a store of format 1, 2 or 3 is upgraded on its first
 * writable open, in a child process, into a new file that replaces the old one only when complete
 * (src/persist/migrate.ts). These stores are written as format 2 wrote them (the options and keys
 * of src/persist/store.ts at 7d02c41) or as format 3 did (keys.ts's codes, store.ts at 44937ac), then
 * read through Persistence.
 */
const venues = loadConfig({ env: {} }).venues;
const dirs: string[] = [];
const mounts: string[] = [];
afterAll(() => {
  for (const m of mounts) spawnSync('umount', ['-l', m]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'cb-upgrade-'));
  dirs.push(d);
  return d;
}

const base = { venue: 'venue_a', timestamp: 1, localTimestamp: 60_000 };

/** How format 2 opened each database. */
const f2 = (name: string) => ({
  name,
  encoding: 'msgpack' as const,
  sharedStructuresKey: Symbol.for('structures'),
  ...(name === 'catalog' ? { compression: { threshold: 128 } } : {}),
});

const TOKEN_YES = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
const TOKEN_NO = '10240109582747612983472395623498723649872364987236498723649872364987236498721';
const CONDITION = '0x9915bea232fa12b20058f9cea1187ea51366352bf833393676cd0db557a58249';
const TICKER = 'KXNFLGAME-25NOV30SEAMIN-SEA';

/** The state a service would hold: a Polymarket-shaped market (a book per token), a Kalshi-shaped one, trades. */
function state(markets = 0): EngineState {
  const s = new EngineState(venues);
  const ev = (venue: string, e: Record<string, unknown>): void =>
    applyEvent(s, { venue, timestamp: 1, localTimestamp: 60_000, ...e } as unknown as NormalizedEvent);
  ev('venue_b', {
    type: 'market',
    marketId: CONDITION,
    title: 'Will it rain in Seattle on Sunday?',
    status: 'active',
    closeTime: 9e12,
    yesInstrument: TOKEN_YES,
    noInstrument: TOKEN_NO,
  });
  ev('venue_b', { type: 'book_snapshot', marketId: CONDITION, instrument: TOKEN_YES, bids: [[4000, 10]], asks: [[4500, 2]] });
  ev('venue_b', { type: 'book_snapshot', marketId: CONDITION, instrument: TOKEN_NO, bids: [[5500, 3]], asks: [[6000, 7]] });
  ev('venue_a', { type: 'market', marketId: TICKER, title: 'Seattle at Minnesota: Seattle wins?', status: 'active', closeTime: 9e12 });
  ev('venue_a', {
    type: 'book_snapshot',
    marketId: TICKER,
    instrument: TICKER,
    bids: [
      [3000, 1],
      [2900, 5],
    ],
    asks: [[3100, 4]],
  });
  ev('venue_a', { type: 'trade', marketId: TICKER, tradeId: 't1', price: 3100, yesPrice: 3100, size: 2 });
  ev('venue_b', { type: 'trade', marketId: CONDITION, tradeId: 't2', price: 4500, yesPrice: 4500, size: 1 });
  for (let i = 0; i < markets; i++)
    ev('venue_d', {
      type: 'market',
      marketId: `${(i * 7919).toString(16).padStart(20, '0')}`,
      title: `Filler market ${i} `.repeat(8),
      status: 'active',
      closeTime: 9e12,
    });
  return s;
}

/** Candles of both markets at three resolutions, as Persistence reads them back. */
function candles(): Record<'candles' | 'candles1h' | 'candles1d', Candle[]> {
  const c = (venue: string, marketId: string, t: number, o: number, extra: Partial<Candle> = {}): Candle => ({
    venue,
    marketId,
    t,
    o,
    h: o + 100,
    l: o - 100,
    c: o + 50,
    mid: o + 25,
    volume: 3,
    trades: 1,
    bid: o,
    ask: o + 100,
    notional: 9_000,
    ...extra,
  });
  const T = 1_764_460_800_000; // a day boundary
  return {
    candles: [
      c('venue_a', TICKER, T, 3000),
      c('venue_a', TICKER, T + 60_000, 3050, { mid: undefined, bid: undefined }),
      c('venue_b', CONDITION, T + 120_000, 4000),
    ],
    candles1h: [c('venue_a', TICKER, T, 3000, { volume: 6, trades: 2 }), c('venue_b', CONDITION, T, 4000)],
    candles1d: [c('venue_a', TICKER, T, 3000, { volume: 6, trades: 2 }), c('venue_b', CONDITION, T, 4000)],
  };
}

/** Writes `s` and candles() into `dir` as a format-2 store (plus trades, their index, a group and an API key). */
function writeFormat2(dir: string, s: EngineState, extra?: (db: (name: string) => Database) => void): void {
  writeFileSync(join(dir, 'crossbook.json'), JSON.stringify({ format: 2, createdAt: 'x' }));
  const root = open({ path: join(dir, 'crossbook.mdb'), noSubdir: true, maxDbs: 32 });
  const db = (name: string) => root.openDB(f2(name));
  db('meta').putSync('format', 2);
  root.transactionSync(() => {
    for (const m of s.catalog.all()) db('catalog').putSync(`${m.venue}:${m.marketId}`, storedMarket(m));
    for (const q of s.quotes.all()) db('quotes').putSync(`${q.venue}:${q.marketId}`, { ...q });
    for (const [venue, instrument, b] of s.books.entries())
      db('books').putSync(`${venue}:${instrument}`, { venue, instrument, bids: b.bids.levels(), asks: b.asks.levels(), ts: b.timestamp });
    for (const [name, list] of Object.entries(candles()))
      for (const c of list)
        db(name).putSync([c.venue, c.marketId, c.t], {
          o: c.o,
          h: c.h,
          l: c.l,
          c: c.c,
          mid: c.mid,
          volume: c.volume,
          trades: c.trades,
          bid: c.bid,
          ask: c.ask,
          n: c.notional,
        });
    for (const t of s.trades.recent()) {
      db('trades').putSync(t.seq, { ...t });
      db('tradesByTime').putSync([t.timestamp, t.seq], 1);
    }
    db('groups').putSync('venue_a:KX|venue_b:0x99', 7);
    db('keys').putSync('pmx_hash', { name: 'demo', plan: 'free' });
    extra?.(db);
  });
  void root.close();
}

/** Writes `s` and candles() into `dir` as a format-3 store (binary codes, keys.ts), as writeFormat2 does. */
function writeFormat3(dir: string, s: EngineState, extra?: (db: (name: DbName) => Database) => void): void {
  writeFileSync(join(dir, 'crossbook.json'), JSON.stringify({ format: 3, createdAt: 'x' }));
  const root = open({ path: join(dir, 'crossbook.mdb'), noSubdir: true, maxDbs: 32 });
  const db = (name: DbName) => root.openDB(dbOptions(name, 3));
  db('meta').putSync('format', 3);
  root.transactionSync(() => {
    for (const m of s.catalog.all()) db('catalog').putSync(marketCode(m.venue, m.marketId), storedMarket(m));
    for (const q of s.quotes.all()) db('quotes').putSync(marketCode(q.venue, q.marketId), { ...q });
    for (const [venue, instrument, b] of s.books.entries())
      db('books').putSync(marketCode(venue, instrument), { venue, instrument, bids: b.bids.levels(), asks: b.asks.levels(), ts: b.timestamp });
    for (const [name, list] of Object.entries(candles()))
      for (const c of list)
        db(name as DbName).putSync(candleKey(c.venue, c.marketId, c.t), {
          o: c.o,
          h: c.h,
          l: c.l,
          c: c.c,
          mid: c.mid,
          volume: c.volume,
          trades: c.trades,
          bid: c.bid,
          ask: c.ask,
          n: c.notional,
        });
    for (const t of s.trades.recent()) {
      db('trades').putSync(t.seq, { ...t });
      db('tradesByTime').putSync([t.timestamp, t.seq], 1);
    }
    db('groups').putSync('venue_a:KX|venue_b:0x99', 7);
    db('keys').putSync('pmx_hash', { name: 'demo', plan: 'free' });
    extra?.(db);
  });
  void root.close();
}

const sha = (f: string): string => createHash('sha256').update(readFileSync(f)).digest('hex');
const sorted = <T extends { venue: string; marketId: string }>(xs: Iterable<T>): T[] =>
  [...xs].sort((a, b) => `${a.venue}:${a.marketId}`.localeCompare(`${b.venue}:${b.marketId}`));

/** Everything of `dir` as Persistence reads it. */
function readAll(p: Persistence) {
  const s = new EngineState(venues);
  const counts = p.load(s);
  const books = [...s.books.entries()].map(([venue, instrument, b]) => ({ venue, instrument, bids: b.bids.levels(), asks: b.asks.levels(), ts: b.timestamp }));
  const hist = (res: '1m' | '1h' | '1d') => [...p.candles('venue_a', TICKER, 0, Infinity, res), ...p.candles('venue_b', CONDITION, 0, Infinity, res)];
  return {
    counts,
    catalog: sorted(s.catalog.all()),
    quotes: sorted(s.quotes.all()),
    books: books.sort((a, b) => `${a.venue}:${a.instrument}`.localeCompare(`${b.venue}:${b.instrument}`)),
    candles: hist('1m'),
    candles1h: hist('1h'),
    candles1d: hist('1d'),
    trades: [...p.db('trades').getRange()].map((e) => e.value),
    tradesByTime: [...p.db('tradesByTime').getKeys()],
    group: p.db('groups').get('venue_a:KX|venue_b:0x99'),
    key: p.db('keys').get('pmx_hash'),
  };
}

function expected(s: EngineState) {
  const c = candles();
  return {
    catalog: sorted(s.catalog.all()).map((m) => ({ ...m })),
    quotes: sorted(s.quotes.all()).map((q) => ({ ...q })),
    books: [...s.books.entries()]
      .map(([venue, instrument, b]) => ({ venue, instrument, bids: b.bids.levels(), asks: b.asks.levels(), ts: b.timestamp }))
      .sort((a, b) => `${a.venue}:${a.instrument}`.localeCompare(`${b.venue}:${b.instrument}`)),
    candles: c.candles,
    candles1h: c.candles1h,
    candles1d: c.candles1d,
    trades: [...s.trades.recent()].reverse().map((t) => ({ ...t })),
  };
}

/**
 * The store in `dir` with its state loaded, market M of venue_a listed in it and its catalog record
 * written (its id carried by that record).
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

describe('store format 4', () => {
  it('a market whose catalog record was lost comes back under a new id: its earlier candles are orphaned, not given to another market, and `data check` reports them', async () => {
    const dir = tmp();
    const { p, id } = await listedM(dir);
    const minute = { venue: 'venue_a', marketId: 'M', t: 60_000, o: 4000, h: 4100, l: 3900, c: 4050, mid: 4025, volume: 3, trades: 1 };
    p.appendCandle(minute);
    await p.flushed();
    // What a crash before the catalog record's commit leaves: the candles without it.
    p.db('catalog').removeSync(idKey(id));
    await p.close();
    expect(checkInChild(join(dir, 'crossbook.mdb')).orphans).toEqual({ ids: 1, candles: 1, candles1h: 1, candles1d: 1 });
    const again = await listedM(dir);
    expect(again.id).toBeGreaterThan(id);
    expect(again.p.candles('venue_a', 'M', 0, Infinity)).toEqual([]);
    // Another market listed now gets an id past the orphans' too.
    applyEvent(again.s, { ...base, type: 'market', marketId: 'N', title: 'N', status: 'active' });
    again.p.markMarket('venue_a', 'N');
    await again.p.flushCatalog(again.s);
    expect(storeIdOf(again.s.catalog.get('venue_a', 'N')!)).toBe(again.id + 1);
    expect(again.p.candles('venue_a', 'N', 0, Infinity)).toEqual([]);
    await again.p.close();
    const report = checkInChild(join(dir, 'crossbook.mdb'));
    expect(healthy(report)).toBe(true);
    expect(report.orphans).toEqual({ ids: 1, candles: 1, candles1h: 1, candles1d: 1 });
  });

  it.each([
    [2, writeFormat2],
    [3, writeFormat3],
  ] as const)('upgrades a populated format-%i store on its first writable open, every record read back as it was', async (_format, write) => {
    const dir = tmp();
    const s = state(300);
    write(dir, s);
    const p = new Persistence(dir);
    expect(p.format).toBe(4);
    expect(JSON.parse(readFileSync(join(dir, 'crossbook.json'), 'utf8'))).toEqual({ format: 4, createdAt: 'x' });
    expect(existsSync(join(dir, 'crossbook.mdb.format4'))).toBe(false);
    const got = readAll(p);
    const want = expected(s);
    expect(got.counts).toEqual({ markets: 302, quotes: s.quotes.size, books: 3, trades: 2 });
    expect(got.catalog).toEqual(want.catalog);
    expect(got.quotes).toEqual(want.quotes);
    expect(got.books).toEqual(want.books);
    expect(got.candles).toEqual(want.candles);
    expect(got.candles1h).toEqual(want.candles1h);
    expect(got.candles1d).toEqual(want.candles1d);
    expect(got.trades).toEqual(want.trades);
    expect(got.tradesByTime).toEqual(want.trades.map((t) => [t.timestamp, t.seq]));
    expect(got.group).toBe(7);
    expect(got.key).toEqual({ name: 'demo', plan: 'free' });
    // The candle log goes on in the new layout: a minute appended after the upgrade reads back in order.
    const next = { ...want.candles[1]!, t: want.candles[1]!.t + 60_000 };
    p.appendCandle(next);
    await p.close();
    // `crossbook data check` walks the upgraded file clean, every record counted.
    const report = checkInChild(join(dir, 'crossbook.mdb'));
    expect(healthy(report)).toBe(true);
    expect(report.dbs.find((d) => d.name === 'catalog')).toMatchObject({ entries: 302, read: 302 });
    expect(report.dbs.find((d) => d.name === 'candles')).toMatchObject({ entries: 4, read: 4 });
    const again = new Persistence(dir);
    again.load(new EngineState(venues));
    expect(again.candles('venue_a', TICKER, 0, Infinity)).toEqual([...want.candles.slice(0, 2), next]);
    await again.close();
  });

  it('a key format 2 did not write stops the upgrade with a clear error and leaves the store as it was; the next start upgrades it', async () => {
    const dir = tmp();
    const s = state(50);
    // the last database the upgrade copies: everything before it was copied when it stops
    writeFormat2(dir, s, (db) => db('candles1d').putSync(['venue_a', TICKER, 'soon'], { o: 1 }));
    const file = join(dir, 'crossbook.mdb');
    const before = sha(file);
    expect(() => new Persistence(dir)).toThrow(
      /upgrading crossbook.mdb from format 2 to 4 failed: the copy stopped in candles1h after 2 records .*candles1d: key \["venue_a","KXNFLGAME-25NOV30SEAMIN-SEA","soon"\] is not a format-2 key.*The store is unchanged \(format 2\)/,
    );
    expect(sha(file)).toBe(before);
    expect(JSON.parse(readFileSync(join(dir, 'crossbook.json'), 'utf8')).format).toBe(2);
    expect(existsSync(`${file}.format4`)).toBe(false);
    // `crossbook data check` still reads it as format 2
    const checked = checkInChild(file);
    expect(damageLines(checked)).toEqual([]);
    // Without the bad record, the next open upgrades it.
    const root = open({ path: file, noSubdir: true, maxDbs: 32 });
    root.openDB(f2('candles1d')).removeSync(['venue_a', TICKER, 'soon']);
    await root.close();
    const p = new Persistence(dir);
    const got = readAll(p);
    const want = expected(s);
    expect(got.catalog).toEqual(want.catalog);
    expect(got.books).toEqual(want.books);
    expect(got.candles1d).toEqual(want.candles1d);
    await p.close();
  });

  it('a key format 3 did not write stops the upgrade to 4 and leaves the file and its marker as they were', () => {
    const dir = tmp();
    // an id tag format 3 never wrote, in the catalog: the first database keyed by ids
    writeFormat3(dir, state(20), (db) => db('catalog').putSync(Buffer.from([5, 9, 1, 0x4d]), { venue: 'venue_a', marketId: 'M', title: 'x' }));
    const file = join(dir, 'crossbook.mdb');
    const before = sha(file);
    expect(() => new Persistence(dir)).toThrow(
      /upgrading crossbook.mdb from format 3 to 4 failed: the copy stopped .*catalog: not a format-3 market key \(unknown id tag 9\): 0509014d.*The store is unchanged \(format 3\)/,
    );
    expect(sha(file)).toBe(before);
    expect(JSON.parse(readFileSync(join(dir, 'crossbook.json'), 'utf8')).format).toBe(3);
    expect(existsSync(`${file}.format4`)).toBe(false);
  });

  it('a store upgraded but not yet marked (stopped between the two) is only marked', async () => {
    const dir = tmp();
    const p = new Persistence(dir);
    const s = state();
    await p.snapshot(s, true);
    await p.close();
    writeFileSync(join(dir, 'crossbook.json'), JSON.stringify({ format: 2, createdAt: 'y' }));
    const ino = statSync(join(dir, 'crossbook.mdb')).ino;
    const again = new Persistence(dir);
    expect(JSON.parse(readFileSync(join(dir, 'crossbook.json'), 'utf8'))).toEqual({ format: 4, createdAt: 'y' });
    expect(statSync(join(dir, 'crossbook.mdb')).ino).toBe(ino);
    expect(readAll(again).catalog).toEqual(expected(s).catalog);
    await again.close();
  });

  it('a read-only open of a format-2 store copies it but refuses to read its records, saying what to do', async () => {
    const dir = tmp();
    writeFormat2(dir, state());
    const before = sha(join(dir, 'crossbook.mdb'));
    const p = new Persistence(dir, undefined, { readOnly: true });
    expect(p.format).toBe(2);
    expect(() => p.load(new EngineState(venues))).toThrow(/holds a format-2 store: start the service on it once to upgrade it to format 4/);
    expect(() => p.candles('venue_a', TICKER, 0, Infinity)).toThrow(/format-2 store/);
    const copy = tmp();
    await p.root.backup(join(copy, 'crossbook.mdb'), true);
    await p.close();
    expect(sha(join(dir, 'crossbook.mdb'))).toBe(before);
    expect(JSON.parse(readFileSync(join(dir, 'crossbook.json'), 'utf8')).format).toBe(2);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'on a disk without room for the copy, the upgrade is refused, saying how much it needs, and the store is unchanged',
    async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'cb-upgrade-tmpfs-'));
      dirs.push(dir);
      if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', dir]).status !== 0) return t.skip('cannot mount a tmpfs here (needs CAP_SYS_ADMIN)');
      mounts.push(dir);
      // about 2 MiB of records that do not compress
      writeFormat2(dir, state(), (db) => {
        for (let i = 0; i < 1000; i++)
          db('catalog').putSync(`venue_d:${i}`, { venue: 'venue_d', marketId: String(i), title: randomBytes(1500).toString('base64') });
      });
      const file = join(dir, 'crossbook.mdb');
      expect(statSync(file).size).toBeGreaterThan(1.5 * 1024 ** 2);
      const before = sha(file);
      expect(() => new Persistence(dir)).toThrow(
        /failed: it needs about \d+ MiB free beside .* for the copy, and \d+ MiB are\. The store is unchanged \(format 2\)/,
      );
      expect(sha(file)).toBe(before);
      expect(JSON.parse(readFileSync(join(dir, 'crossbook.json'), 'utf8')).format).toBe(2);
      expect(existsSync(`${file}.format4`)).toBe(false);
    },
  );

  it('stores catalog records compressed and candles without their key, and upgrades a format-1 store to format 4', async () => {
    const title = 'Will the Seattle Seahawks beat the New England Patriots by more than 7.5 points on Sunday? '.repeat(3);
    const dir = tmp();
    const p = new Persistence(dir);
    const s = new EngineState(venues);
    applyEvent(s, { ...base, type: 'market', marketId: 'M', title, status: 'active', closeTime: 9e12 });
    await p.snapshot(s, true);
    await p.close();
    // Read as plain bytes: lmdb-js marks a compressed value by a first byte of 254 or 255.
    const raw = open({ path: join(dir, 'crossbook.mdb'), noSubdir: true, maxDbs: 32, readOnly: true });
    const stored = raw.openDB({ name: 'catalog', encoding: 'binary', keyEncoding: 'binary' }).getBinary(idKey(ID_BASE));
    expect(stored?.[0]).toBeGreaterThanOrEqual(254);
    await raw.close();

    // A store as the previous format wrote it: the same databases, the catalog uncompressed.
    const old = tmp();
    writeFileSync(join(old, 'crossbook.json'), JSON.stringify({ format: 1, createdAt: 'x' }));
    const v1 = open({ path: join(old, 'crossbook.mdb'), noSubdir: true, maxDbs: 32 });
    v1.openDB({ name: 'meta', encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures') }).putSync('format', 1);
    const cat = v1.openDB({ name: 'catalog', encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures') });
    cat.putSync('venue_a:M', { ...s.catalog.get('venue_a', 'M')! });
    expect(cat.getBinary('venue_a:M')![0]).toBeLessThan(250);
    const minute = { venue: 'venue_a', marketId: 'M', t: 60_000, o: 4000, h: 4100, l: 3900, c: 4050, mid: 4025, volume: 3, trades: 1 };
    v1.openDB({ name: 'candles', encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures') }).putSync(['venue_a', 'M', 60_000], minute);
    await v1.close();
    const p2 = new Persistence(old);
    const s2 = new EngineState(venues);
    expect(p2.load(s2).markets).toBe(1);
    expect(s2.catalog.get('venue_a', 'M')!.title).toBe(title);
    expect(JSON.parse(readFileSync(join(old, 'crossbook.json'), 'utf8'))).toMatchObject({ format: 4, createdAt: 'x' });
    expect(p2.candles('venue_a', 'M', 0, Infinity)).toEqual([minute]);
    // A new minute goes in without the fields its key holds, and both read back whole.
    p2.appendCandle({ ...minute, t: 120_000, o: 4050, volume: 0, trades: 0, mid: undefined });
    await p2.flushed();
    expect(p2.candles('venue_a', 'M', 0, Infinity)).toEqual([minute, { ...minute, t: 120_000, o: 4050, volume: 0, trades: 0, mid: undefined }]);
    expect(p2.db('candles').get(idCandleKey(storeIdOf(s2.catalog.get('venue_a', 'M')!), 120_000))).toEqual({
      o: 4050,
      h: 4100,
      l: 3900,
      c: 4050,
      mid: undefined,
      volume: 0,
      trades: 0,
    });
    expect(p2.candles('venue_a', 'M', 0, Infinity, '1h')).toEqual([{ ...minute, t: 0, o: 4050, h: 4100, l: 3900, volume: 0, trades: 0, mid: undefined }]);
    // New writes go in compressed beside the old record, and both read back.
    applyEvent(s2, { ...base, type: 'market', marketId: 'N', title: `${title}(2)`, status: 'active', closeTime: 9e12 });
    await p2.snapshot(s2, true);
    await p2.close();
    const s3 = new EngineState(venues);
    const p3 = new Persistence(old);
    expect(p3.load(s3).markets).toBe(2);
    expect(s3.catalog.get('venue_a', 'N')!.title).toBe(`${title}(2)`);
    await p3.close();
    // A format this version does not know is refused, with the formats it reads.
    writeFileSync(join(old, 'crossbook.json'), JSON.stringify({ format: 5, createdAt: 'x' }));
    expect(() => new Persistence(old)).toThrow(/data format 5 is not supported by this version \(reads 1, 2, 3, 4\)/);
  });
});
