/**
 * What an interned market id would save of LMDB's pages, measured offline on a real store (issue 34,
 * BENCHMARKS.md "an interned u32 market id"): the records of the six market-keyed databases of a
 * format-3 DATA_DIR (a 108k q2.sh run's, kept), shuffled with one seed and put into a fresh file per
 * key layout in commits of 1,000 (live-like fill, as key20 measured format 3 against format 2). Each
 * layout runs in its own child process, which reports the databases' pages and the RSS of the file's
 * mapping in that process (smaps): the pages a writer touches, which is what the service keeps
 * resident.
 *
 *   f3       format 3's keys as they are (keys.ts: a market code, + 6 bytes of time for candles)
 *   u32      the code replaced by a dense u32 (big-endian), no table: what the keys alone save
 *   u32rev   u32 keys and a table u32 → code, appended in id order (MDB_APPEND)
 *   u32both  u32 keys and the table both ways (code → u32 looked up where a code is first seen, and
 *            u32 → code), as a store that must find a code's id again without holding it in memory
 *   candles  only the three candle logs keyed by u32 (+ time), the table both ways over the markets
 *            that have candles; catalog, quotes and books keep format 3's codes
 *
 * Ids are given in the order codes are first seen in the shuffled records (a service gives them in
 * listing order); an instrument's code (books) is interned like a market's, so a Kalshi ticker,
 * both market and instrument, has one id.
 *
 * Usage (built): node dist/bench/persist/key-layouts.js DATA_DIR [WORK_DIR]; KEY_LAYOUTS_ORDER=grouped puts
 * each code's records together, codes in first-seen order (the u32 layouts' best case: appends only).
 * Values are copied as bytes (encoding 'binary'), so each layout stores the very same values.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { open, type Database } from 'lmdb';
import { BINARY_KEYS, readCode } from '../../src/persist/keys.js';

const DBS = ['catalog', 'quotes', 'books', 'candles', 'candles1h', 'candles1d'] as const;
const LAYOUTS = ['f3', 'u32', 'u32rev', 'u32both', 'candles'] as const;
type Layout = (typeof LAYOUTS)[number];
const MiB = 2 ** 20;
const COMMIT = 1_000;

interface Rec {
  readonly db: (typeof DBS)[number];
  readonly key: Buffer;
  readonly value: Buffer;
}

/** The six databases' records of a format-3 store, shuffled with one seed (every layout the same order). */
function readRecords(dataDir: string): Rec[] {
  const root = open({ path: join(dataDir, 'crossbook.mdb'), noSubdir: true, maxDbs: 32, readOnly: true });
  const recs: Rec[] = [];
  try {
    for (const name of DBS) {
      const db = root.openDB(raw(name));
      for (const { key, value } of db.getRange()) {
        const k = key as unknown as Buffer;
        if (k.length === 1) continue; // the shared structures
        recs.push({ db: name, key: Buffer.from(k), value: Buffer.from(value as Buffer) });
      }
    }
  } finally {
    void root.close();
  }
  let s = 12_345;
  const rnd = (): number => (s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
  for (let i = recs.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [recs[i], recs[j]] = [recs[j]!, recs[i]!];
  }
  if (process.env['KEY_LAYOUTS_ORDER'] !== 'grouped') return recs;
  // Each code's records together, codes in the order first seen: the u32 layouts then only ever append
  // (LMDB packs pages full at the right edge), a bound on how much denser a live file under u32 keys
  // could be than the shuffled one, where new markets' first puts come in id order.
  const rank = new Map<string, number>();
  const rankOf = (r: Rec): number => {
    const c = r.key.subarray(0, readCode(r.key).end).toString('latin1');
    let k = rank.get(c);
    if (k === undefined) rank.set(c, (k = rank.size));
    return k;
  };
  const ranked = recs.map((r) => ({ r, k: rankOf(r) }));
  ranked.sort((a, b) => a.k - b.k);
  return ranked.map((x) => x.r);
}

/** A database of `name` read and written as bytes, keys through keys.ts's encoder (lmdb-js's types leave `keyEncoder` out). */
function raw(name: string): { name: string; encoding: 'binary'; keyEncoder: typeof BINARY_KEYS } {
  return { name, encoding: 'binary', keyEncoder: BINARY_KEYS };
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
}

/** `put` with MDB_APPEND: lmdb-js takes the flag in its options (write.js), which its types leave out. */
function appendPut(db: Database, key: Buffer, value: Buffer): Promise<boolean> {
  const put = db.put as unknown as (this: Database, k: Buffer, v: Buffer, o: { append: boolean }) => Promise<boolean>;
  return put.call(db, key, value, { append: true });
}

function pagesMiB(db: Database): number {
  const s = db.getStats() as { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
  return round(((s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages) * 4096) / MiB);
}

const round = (x: number): number => Math.round(x * 10) / 10;

/** RSS (MiB) of this process's mappings of `file` (smaps). */
function mappedRss(file: string): number {
  let kb = 0;
  let inFile = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inFile = line.endsWith(file);
    else if (inFile && line.startsWith('Rss:')) kb += Number(line.split(/\s+/)[1]);
  }
  return round(kb / 1024);
}

/** One layout, in this process: the records put, then its pages and the file's mapped RSS. */
async function runLayout(dataDir: string, work: string, layout: Layout): Promise<Record<string, number>> {
  const recs = readRecords(dataDir);
  const file = join(work, `${layout}.mdb`);
  rmSync(file, { force: true });
  rmSync(`${file}-lock`, { force: true });
  const env = open({ path: file, noSubdir: true, maxDbs: 32, noSync: true, mapSize: 4 * 1024 ** 3 });
  const dbs = new Map(DBS.map((n) => [n, env.openDB(raw(n))]));
  const fwd = env.openDB(raw('ids'));
  const rev = env.openDB(raw('codes'));
  // What the service's records would carry in memory (the heap, not measured here).
  const held = new Map<string, number>();
  let next = 1;
  const idOf = (code: Buffer): number => {
    const c = code.toString('latin1');
    let id = held.get(c);
    if (id !== undefined) return id;
    const both = layout === 'u32both' || layout === 'candles';
    if (both) {
      const v = fwd.getBinary(code);
      if (v) id = v.readUInt32BE(0);
    }
    if (id === undefined) {
      id = next++;
      if (both) void fwd.put(code, u32(id));
      if (layout !== 'u32') void appendPut(rev, u32(id), code);
    }
    held.set(c, id);
    return id;
  };
  try {
    for (let i = 0; i < recs.length; i += COMMIT)
      await env.transaction(() => {
        for (const r of recs.slice(i, i + COMMIT)) {
          const db = dbs.get(r.db)!;
          if (layout === 'f3' || (layout === 'candles' && !r.db.startsWith('candles'))) {
            void db.put(r.key, r.value);
            continue;
          }
          const end = readCode(r.key).end;
          void db.put(Buffer.concat([u32(idOf(r.key.subarray(0, end))), r.key.subarray(end)]), r.value);
        }
      });
    await env.flushed;
    const out: Record<string, number> = { records: recs.length, interned: held.size };
    let total = 0;
    for (const n of DBS) total += out[n] = pagesMiB(dbs.get(n)!);
    out['ids'] = pagesMiB(fwd);
    out['codes'] = pagesMiB(rev);
    out['pages'] = round(total + out['ids'] + out['codes']);
    out['mappedRss'] = mappedRss(file);
    return out;
  } finally {
    await env.close();
    rmSync(file, { force: true });
    rmSync(`${file}-lock`, { force: true });
  }
}

const [dataDir, workArg, layoutArg] = process.argv.slice(2);
if (dataDir === undefined) {
  process.stderr.write('usage: node dist/bench/persist/key-layouts.js DATA_DIR [WORK_DIR]  (DATA_DIR: a format-3 store)\n');
  process.exit(2);
}
if (layoutArg !== undefined) {
  // a child: one layout
  const layout = LAYOUTS.find((l) => l === layoutArg);
  if (layout === undefined || workArg === undefined) throw new Error(`unknown layout ${layoutArg}`);
  process.stdout.write(`${JSON.stringify(await runLayout(dataDir, workArg, layout))}\n`);
} else {
  const work = workArg ?? mkdtempSync(join(tmpdir(), 'crossbook-key-layouts-'));
  const rows: Record<string, Record<string, number>> = {};
  for (const layout of LAYOUTS) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), dataDir, work, layout], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (r.status !== 0) throw new Error(`layout ${layout} failed: ${r.stderr}`);
    rows[layout] = JSON.parse(r.stdout) as Record<string, number>;
    process.stdout.write(`${layout} ${r.stdout}`);
  }
  const base = rows['f3']!;
  process.stdout.write('\n| layout | catalog | quotes | books | candles | 1h | 1d | ids | codes | pages | vs f3 | mapped RSS | vs f3 |\n');
  process.stdout.write('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n');
  for (const [l, r] of Object.entries(rows)) {
    const cells = [...DBS, 'ids', 'codes'].map((k) => r[k]);
    const d = (k: string): string => (l === 'f3' ? '' : (r[k]! - base[k]!).toFixed(1));
    process.stdout.write(`| ${l} | ${cells.join(' | ')} | ${r['pages']} | ${d('pages')} | ${r['mappedRss']} | ${d('mappedRss')} |\n`);
  }
  if (workArg === undefined) rmSync(work, { recursive: true, force: true });
}
