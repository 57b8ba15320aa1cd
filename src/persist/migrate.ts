import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import { runEntry } from './check.js';
import { ID_BASE, idCandleKey, idKey, KeyError, readCandleKey, readCode, readMarketKey, REKEYED, upgradeKey } from './keys.js';
import { DB_NAMES, dbOptions, FORMAT, type DbName } from './store.js';

/**
 * The upgrade of a store of format 1, 2 or 3 to format 4 (keys.ts: u32 ids for the market-keyed
 * databases; format 3 gave them binary codes, formats 1 and 2 strings and arrays). The whole
 * environment is copied into a new file beside it, `crossbook.mdb.format4`, every record decoded and
 * written again (keys rewritten where format 4 changed them: `Rekey`), in a child
 * process: the child maps the old file's pages, and they leave with it instead of staying in the
 * service's RSS. Only a complete copy, synced, replaces the old file (one rename); the marker says
 * format 4 after that. So an upgrade stopped at any point (a crash, a full disk, a key it cannot
 * read) leaves the old file as it was, with its marker, and the next start begins again. The new
 * file's own `meta.format` is 4: a start that finds a format-4 file under an older marker (stopped
 * between the rename and the marker) only marks it.
 */

/**
 * The key rewriting of an upgrade: a key of an older format → format 4's. Ids are given in the copy's
 * order (catalog, quotes, books, then the candle logs: DB_NAMES): a market's in the order of its
 * catalog record, then of quote records whose market the catalog lacks (the quote carries the id), an
 * instrument's in the order of its book record; the candles of a market neither holds (none a
 * running service leaves, but an older store may) keep an id of their own, which `data check`
 * reports as orphaned. The code → id map lives only in the child that copies.
 */
class Rekey {
  private readonly markets = new Map<string, number>();
  private nextMarket = ID_BASE;
  private nextInstrument = ID_BASE;

  constructor(private readonly from: number) {}

  key(db: DbName, key: unknown): Buffer {
    if (db === 'candles' || db === 'candles1h' || db === 'candles1d') {
      const code = this.code3(db, key);
      const { t } = this.wrap(db, key, () => readCandleKey(code));
      return idCandleKey(this.market(code.subarray(0, readCode(code).end)), t);
    }
    const code = this.code3(db, key);
    this.wrap(db, key, () => readMarketKey(code));
    return idKey(db === 'books' ? this.nextInstrument++ : this.market(code));
  }

  /** The key as format 3 wrote it (formats 1 and 2: rewritten by upgradeKey). */
  private code3(db: DbName, key: unknown): Buffer {
    if (this.from < 3) return upgradeKey(db, key);
    if (!(key instanceof Uint8Array)) throw new KeyError(`${db}: key ${JSON.stringify(key)} is not a format-3 key`);
    return Buffer.from(key);
  }

  private wrap<T>(db: DbName, key: unknown, read: () => T): T {
    try {
      return read();
    } catch (e) {
      throw new KeyError(`${db}: ${(e as Error).message}${this.from < 3 ? ` (from ${JSON.stringify(key)})` : ''}`);
    }
  }

  private market(code: Buffer): number {
    const k = code.toString('latin1');
    let id = this.markets.get(k);
    if (id === undefined) this.markets.set(k, (id = this.nextMarket++));
    return id;
  }
}

/** Records per commit in the copy. */
const CHUNK = 10_000;

/** What an upgrade did. */
export interface Upgrade {
  /** Records copied, per database. */
  readonly copied: Partial<Record<DbName, number>>;
  /** True when the file was format 4 already (only its marker was older). */
  readonly already: boolean;
  readonly ms: number;
}

/** The format the file's own meta database records (2 when it records none: every store since format 1 writes it). */
function fileFormat(root: RootDatabase): number {
  const meta = root.openDB(dbOptions('meta'));
  const f = meta.get('format');
  return typeof f === 'number' ? f : 2;
}

/** Copies the store `file` (format < 4) into the new file `out` in format 4, in this process. Throws on a key it cannot rewrite. */
export async function copyUpgraded(file: string, out: string, progress: (name: DbName, copied: number) => void = () => {}): Promise<Upgrade> {
  const t0 = performance.now();
  // The parent holds the opening lock (and made sure no other process has the file open).
  const src = open({ path: file, noSubdir: true, maxDbs: 32, readOnly: true });
  const copied: Partial<Record<DbName, number>> = {};
  try {
    const from = fileFormat(src);
    if (from >= FORMAT) return { copied, already: true, ms: performance.now() - t0 };
    const rekeyer = new Rekey(from);
    // No fsync per commit: the caller syncs the finished file once before it replaces the old one.
    const dst = open({ path: out, noSubdir: true, maxDbs: 32, noSync: true });
    try {
      for (const name of DB_NAMES) {
        let db: Database | undefined;
        try {
          db = src.openDB(dbOptions(name, from)) as Database | undefined;
        } catch (e) {
          if (!/MDB_NOTFOUND|not found/i.test((e as Error).message)) throw e;
        }
        if (db === undefined) continue; // a store of an older version may not have every database
        const to = dst.openDB(dbOptions(name));
        const rekey = REKEYED.has(name);
        let batch: { key: Key; value: unknown }[] = [];
        let n = 0;
        const commit = async (): Promise<void> => {
          const rows = batch;
          batch = [];
          await to.transaction(() => {
            for (const { key, value } of rows) void to.put(key, value);
          });
          n += rows.length;
          progress(name, n);
        };
        for (const { key, value } of db.getRange()) {
          // meta's format is written last, once everything else is in
          if (name === 'meta' && key === 'format') continue;
          batch.push({ key: rekey ? rekeyer.key(name, key) : key, value });
          if (batch.length >= CHUNK) await commit();
        }
        if (batch.length) await commit();
        copied[name] = n;
      }
      await dst.openDB(dbOptions('meta')).put('format', FORMAT);
    } finally {
      await dst.close();
    }
  } finally {
    await src.close();
  }
  return { copied, already: false, ms: performance.now() - t0 };
}

/** Why an upgrade did not happen; the old file is as it was. */
export class UpgradeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpgradeError';
  }
}

/**
 * Upgrades the store `file` (marker `marker`, which says an older format) to format 4 in place,
 * with the copy in a child (see the module comment). The caller holds the opening lock and has
 * made sure no other process has the file open. Throws UpgradeError, the old file and its marker
 * untouched, when the copy cannot be made.
 */
export function upgradeStore(file: string, marker: string, markerValue: object): Upgrade {
  const out = `${file}.format${FORMAT}`;
  removeStore(out); // a copy an earlier start did not finish
  removeStore(`${file}.format3`); // one an earlier version's upgrade did not finish
  const size = statSync(file).size;
  const fs = statfsSync(dirname(file));
  const free = fs.bavail * fs.bsize;
  // The copy is at most about the size of the old file (its records, rewritten more densely).
  if (free < size + 8 * 1024 ** 2)
    throw new UpgradeError(`it needs about ${mib(size + 8 * 1024 ** 2)} MiB free beside ${file} for the copy, and ${mib(free)} MiB are`);
  const r = runEntry(['migrate', file, out]);
  let done: Upgrade | undefined;
  let last: { db?: DbName; copied?: number } = {};
  for (const m of r.lines as { db?: DbName; copied?: number; done?: Upgrade }[]) {
    if (m.done !== undefined) done = m.done;
    else last = m;
  }
  if (r.died !== undefined || done === undefined) {
    removeStore(out);
    throw new UpgradeError(`the copy stopped${last.db ? ` in ${last.db} after ${last.copied ?? 0} records` : ''} (${r.died ?? 'no report'})`);
  }
  if (!done.already) {
    const fd = openSync(out, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // Nobody has the old file open (the caller made sure): its lock file goes with it, as `repair` does.
    rmSync(`${file}-lock`, { force: true });
    renameSync(out, file);
    rmSync(`${out}-lock`, { force: true });
    // The rename durable before the marker says format 4: a marker ahead of its file would read old keys as new.
    syncDir(dirname(file));
  }
  const tmp = `${marker}.tmp`;
  writeFileSync(tmp, JSON.stringify({ ...markerValue, format: FORMAT }, null, 2));
  renameSync(tmp, marker);
  return done;
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function removeStore(file: string): void {
  if (existsSync(file)) rmSync(file, { force: true });
  rmSync(`${file}-lock`, { force: true });
}

function mib(bytes: number): number {
  return Math.ceil(bytes / 1024 ** 2);
}
