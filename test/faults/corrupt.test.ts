import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataCommand, damagedCopies } from '../../src/cli/data.js';
import { checkInChild, healthy } from '../../src/persist/check.js';
import { ID_BASE, idKey } from '../../src/persist/keys.js';
import { openPersistence, Persistence, PersistenceError } from '../../src/persist/store.js';

// A data file damaged in the ways a disk or a careless copy damages one. LMDB has no page
// checksums and aborts the process (an assertion) on some damaged pages, so every walk of a
// damaged file here runs in a child, as the service's own start-up check does.

const BIN = new URL('../../bin/crossbook.js', import.meta.url).pathname;
const PAGE = 4096;
const MARKETS = 3000;
const dirs: string[] = [];
let seed: string;

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'crossbook-corrupt-'));
  dirs.push(d);
  return d;
}

/**
 * A store of MARKETS catalog records and as many trades, closed cleanly and compacted (LMDB's own
 * compacting copy), so that every page in the file is live and damage to any of them is damage.
 */
async function buildSeed(): Promise<string> {
  const written = tmp();
  const p = new Persistence(written);
  const catalog = p.db('catalog');
  const trades = p.db('trades');
  for (let i = 0; i < MARKETS; i++) {
    const id = `M-${String(i).padStart(5, '0')}`;
    void catalog.put(idKey(ID_BASE + i), {
      venue: 'venue_a',
      marketId: id,
      title: `Will market ${i} settle YES by the end of the season?`,
      status: 'open',
    });
    void trades.put(i + 1, { seq: i + 1, venue: 'venue_a', marketId: id, price: 5_000 + (i % 100), size: 10, ts: 1_700_000_000_000 + i });
  }
  await p.flushed();
  const dir = tmp();
  await p.root.backup(join(dir, 'crossbook.mdb'), true);
  cpSync(join(written, 'crossbook.json'), join(dir, 'crossbook.json'));
  await p.close();
  return dir;
}

/** A copy of the seed with `damage` done to its data file. */
function damagedCopy(damage: (file: Buffer) => Buffer): string {
  const dir = tmp();
  cpSync(seed, dir, { recursive: true });
  rmSync(join(dir, 'crossbook.mdb-lock'), { force: true });
  const file = join(dir, 'crossbook.mdb');
  writeFileSync(file, damage(readFileSync(file)));
  return dir;
}

/** Page numbers of the pages with `flag` in their header (1 branch, 2 leaf; lmdb-js: page number, txn id, pad, flags at byte 18) that carry their own number. */
function pagesWith(buf: Buffer, flag: number): number[] {
  const out: number[] = [];
  for (let pg = 2; (pg + 1) * PAGE <= buf.length; pg++) {
    const o = pg * PAGE;
    if (Number(buf.readBigUInt64LE(o)) === pg && (buf.readUInt16LE(o + 18) & flag) !== 0) out.push(pg);
  }
  return out;
}

function invertPage(buf: Buffer, pg: number): Buffer {
  for (let i = pg * PAGE; i < (pg + 1) * PAGE; i++) buf[i] = buf[i]! ^ 0xff;
  return buf;
}

const DAMAGED = /DATA_DIR .*: crossbook\.mdb is damaged \(.+\)\. Restore it from a backup .*crossbook data repair/;

beforeAll(async () => {
  seed = await buildSeed();
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a damaged crossbook.mdb', () => {
  it('a healthy store checks clean and opens', async () => {
    expect(healthy(checkInChild(join(seed, 'crossbook.mdb')))).toBe(true);
    const dir = tmp();
    cpSync(seed, dir, { recursive: true });
    const p = openPersistence(dir);
    expect(p.db('catalog').getCount()).toBe(MARKETS);
    await p.close();
  });

  const cases: [string, (b: Buffer) => Buffer][] = [
    ['an inverted leaf page', (b) => invertPage(b, pagesWith(b, 2)[Math.floor(pagesWith(b, 2).length / 2)]!)],
    ['a zeroed branch page', (b) => b.fill(0, pagesWith(b, 1)[0]! * PAGE, (pagesWith(b, 1)[0]! + 1) * PAGE)],
    [
      'garbage in the second half of every leaf page of one run',
      (b) => {
        for (const pg of pagesWith(b, 2).slice(5, 8)) for (let i = pg * PAGE + PAGE / 2; i < (pg + 1) * PAGE; i++) b[i] = (i * 131) & 0xff;
        return b;
      },
    ],
    ['a file cut short past its meta pages', (b) => b.subarray(0, Math.max(3 * PAGE, pagesWith(b, 2)[3]! * PAGE))],
  ];

  for (const [what, damage] of cases)
    it(`${what}: start refuses in one line naming the file and what to do; nothing is written`, () => {
      const dir = damagedCopy(damage);
      const before = readFileSync(join(dir, 'crossbook.mdb'));
      let error: unknown;
      try {
        void openPersistence(dir, undefined, { check: 'full' }).close();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(PersistenceError);
      expect((error as Error).message).toMatch(/DATA_DIR:? .*crossbook\.mdb/);
      expect((error as Error).message).not.toContain('\n');
      expect(readFileSync(join(dir, 'crossbook.mdb')).equals(before)).toBe(true);
    });

  it('`crossbook serve` on it exits 2 with that line, not a stack trace (the default check: what start reads)', async () => {
    // A quarter of the way into the leaf pages of a compacted copy is the catalog's (databases are
    // copied in name order, and the catalog holds most of the bytes).
    const dir = damagedCopy((b) => invertPage(b, pagesWith(b, 2)[Math.floor(pagesWith(b, 2).length / 4)]!));
    const child = spawn(process.execPath, [BIN, 'serve'], {
      // Nothing of this process's environment but what node needs: the service's own defaults, on this DATA_DIR.
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? tmpdir(), DATA_DIR: dir, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(2);
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toMatch(DAMAGED);
    expect(stderr).not.toMatch(/\bat .*\.js:\d+/);
  });

  it('`crossbook data check` lists the damage; `repair` keeps what can be read and sets the damaged file aside', async () => {
    const dir = damagedCopy((b) => invertPage(b, pagesWith(b, 2)[Math.floor(pagesWith(b, 2).length / 2)]!));
    const said: string[] = [];
    const say = (s: string): void => void said.push(s);
    expect(await dataCommand(dir, 'check', {}, say, say)).toBe(1);
    expect(said.join('\n')).toMatch(/is damaged: /);

    said.length = 0;
    expect(await dataCommand(dir, 'repair', {}, say, say)).toBe(0);
    expect(said.join('\n')).toMatch(/repaired: \d+ records kept/);
    expect(damagedCopies(dir)).toHaveLength(1);
    expect(
      await dataCommand(
        dir,
        'check',
        {},
        () => {},
        () => {},
      ),
    ).toBe(0);

    const p = openPersistence(dir);
    const kept = p.db('catalog').getCount();
    const trades = p.db('trades').getCount();
    await p.close();
    // What was on the inverted page is gone; everything around it is kept.
    expect(kept + trades).toBeLessThan(2 * MARKETS);
    expect(kept + trades).toBeGreaterThan(MARKETS);
  });

  it('`crossbook data repair` on a healthy store changes nothing', async () => {
    const dir = tmp();
    cpSync(seed, dir, { recursive: true });
    const before = readFileSync(join(dir, 'crossbook.mdb'));
    const said: string[] = [];
    expect(
      await dataCommand(
        dir,
        'repair',
        {},
        (s) => void said.push(s),
        (s) => void said.push(s),
      ),
    ).toBe(0);
    expect(said.join('\n')).toMatch(/no damage found; nothing to repair/);
    expect(readFileSync(join(dir, 'crossbook.mdb')).equals(before)).toBe(true);
    expect(damagedCopies(dir)).toHaveLength(0);
  });
});

describe('crossbook data backup', () => {
  it('copies a store that is open for writing into a store that opens with the same records', async () => {
    const dir = tmp();
    cpSync(seed, dir, { recursive: true });
    const live = new Persistence(dir);
    void live.db('keys').put('k1', { id: 'k1', plan: 'pro' });
    await live.flushed();
    const to = join(tmp(), 'backup');
    const said: string[] = [];
    expect(
      await dataCommand(
        dir,
        'backup',
        { dir: to },
        (s) => void said.push(s),
        (s) => void said.push(s),
      ),
    ).toBe(0);
    await live.close();
    expect(said.join('\n')).toMatch(/backup of .* written to .*checked/);
    const copy = openPersistence(to);
    expect(copy.db('catalog').getCount()).toBe(MARKETS);
    expect(copy.db('keys').get('k1')).toEqual({ id: 'k1', plan: 'pro' });
    await copy.close();
  });

  it('refuses to write over a store or into DATA_DIR itself', async () => {
    const dir = tmp();
    cpSync(seed, dir, { recursive: true });
    const errs: string[] = [];
    expect(
      await dataCommand(
        dir,
        'backup',
        { dir },
        () => {},
        (s) => void errs.push(s),
      ),
    ).toBe(2);
    expect(
      await dataCommand(
        dir,
        'backup',
        { dir: seed },
        () => {},
        (s) => void errs.push(s),
      ),
    ).toBe(2);
    expect(errs.join('\n')).toMatch(/another directory than DATA_DIR/);
    expect(errs.join('\n')).toMatch(/exists; choose an empty directory/);
    expect(existsSync(join(dir, 'crossbook.mdb'))).toBe(true);
  });

  it('says what is missing when DATA_DIR holds no store', async () => {
    const errs: string[] = [];
    expect(
      await dataCommand(
        tmp(),
        'check',
        {},
        () => {},
        (s) => void errs.push(s),
      ),
    ).toBe(2);
    expect(errs[0]).toMatch(/holds no crossbook store/);
  });
});
