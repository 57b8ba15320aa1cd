import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import { runEntry } from './check.js';
import { REKEYED, upgradeKey } from './keys.js';
import { DB_NAMES, dbOptions, type DbName } from './store.js';

/**
 * The upgrade of a format-1 or -2 store to format 3 (keys.ts: binary keys for the market-keyed
 * databases). The whole environment is copied into a new file beside it, `crossbook.mdb.format3`,
 * every record decoded and written again (keys rewritten where format 3 changed them), in a child
 * process: the child maps the old file's pages, and they leave with it instead of staying in the
 * service's RSS. Only a complete copy, synced, replaces the old file (one rename); the marker says
 * format 3 after that. So an upgrade stopped at any point (a crash, a full disk, a key it cannot
 * read) leaves the old file as it was, with its marker, and the next start begins again. The new
 * file's own `meta.format` is 3: a start that finds a format-3 file under a format-2 marker (stopped
 * between the rename and the marker) only marks it.
 */

/** Records per commit in the copy. */
const CHUNK = 10_000;

/** What an upgrade did. */
export interface Upgrade {
  /** Records copied, per database. */
  readonly copied: Partial<Record<DbName, number>>;
  /** True when the file was format 3 already (only its marker was older). */
  readonly already: boolean;
  readonly ms: number;
}

/** The format the file's own meta database records (2 when it records none: every store since format 1 writes it). */
function fileFormat(root: RootDatabase): number {
  const meta = root.openDB(dbOptions('meta'));
  const f = meta.get('format');
  return typeof f === 'number' ? f : 2;
}

/** Copies the store `file` (format < 3) into the new file `out` in format 3, in this process. Throws on a key it cannot rewrite. */
export async function copyUpgraded(file: string, out: string, progress: (name: DbName, copied: number) => void = () => {}): Promise<Upgrade> {
  const t0 = performance.now();
  // The parent holds the opening lock (and made sure no other process has the file open).
  const src = open({ path: file, noSubdir: true, maxDbs: 32, readOnly: true });
  const copied: Partial<Record<DbName, number>> = {};
  try {
    const from = fileFormat(src);
    if (from >= 3) return { copied, already: true, ms: performance.now() - t0 };
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
          batch.push({ key: rekey ? upgradeKey(name, key) : key, value });
          if (batch.length >= CHUNK) await commit();
        }
        if (batch.length) await commit();
        copied[name] = n;
      }
      await dst.openDB(dbOptions('meta')).put('format', 3);
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
 * Upgrades the store `file` (marker `marker`, which says an older format) to format 3 in place,
 * with the copy in a child (see the module comment). The caller holds the opening lock and has
 * made sure no other process has the file open. Throws UpgradeError, the old file and its marker
 * untouched, when the copy cannot be made.
 */
export function upgradeStore(file: string, marker: string, markerValue: object): Upgrade {
  const out = `${file}.format3`;
  removeStore(out); // a copy an earlier start did not finish
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
    // The rename durable before the marker says format 3: a marker ahead of its file would read old keys as new.
    syncDir(dirname(file));
  }
  const tmp = `${marker}.tmp`;
  writeFileSync(tmp, JSON.stringify({ ...markerValue, format: 3 }, null, 2));
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
