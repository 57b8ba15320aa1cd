import { spawnSync } from 'node:child_process';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import { openAlone } from './opening.js';
import { scriptArgs } from '../core/script.js';
import { candleId, readIdKey } from './keys.js';
import { DB_NAMES, dbOptions, type DbName } from './store.js';

/**
 * How much a check walks. `full`: every database. `state`: what start reads into memory (catalog,
 * quotes, books, keys, quota, groups, matching, wallets, webhooks), not the history logs that grow
 * with time (candles, trades, opportunities, audit), which a large instance holds gigabytes of:
 * start reads only their ends, and a damaged page there fails that read, not the process's start.
 */
export type CheckScope = 'full' | 'state';

/** The history logs a `state` check leaves out. */
const HISTORY_LOGS: ReadonlySet<DbName> = new Set(['candles', 'candles1h', 'candles1d', 'trades', 'tradesByTime', 'opportunities', 'audit']);

function scopeNames(scope: CheckScope): readonly DbName[] {
  return scope === 'full' ? DB_NAMES : DB_NAMES.filter((n) => !HISTORY_LOGS.has(n));
}

/** What a walk of one sub-database found. */
export interface DbCheck {
  readonly name: DbName;
  /** Records the database's own header counts (LMDB's entry count, less msgpackr's structures record). */
  readonly entries: number;
  /** Records a full walk read and decoded. */
  readonly read: number;
  /** Why the walk stopped early, when it threw. */
  readonly error?: string | undefined;
}

/** What a check of crossbook.mdb found. */
export interface CheckReport {
  readonly file: string;
  readonly dbs: readonly DbCheck[];
  /** Set when the walk killed its process (LMDB asserts, and aborts, on some damaged pages): what and where. */
  readonly crashed?: string | undefined;
  /** Set when the file could not be opened at all (permissions, a lock): not damage; whoever opens it next says why. */
  readonly unopened?: string | undefined;
  /**
   * A `full` check of a format-4 store: candles under a market id that no catalog or quote record
   * carries (a crash between a new market's first candle and its catalog record's commit: the market
   * came back under a new id, ARCHITECTURE.md persistence). Not damage: unreachable history.
   */
  readonly orphans?: OrphanedCandles | undefined;
}

/** Candles no market reaches: how many, of how many ids, per candle log. */
export interface OrphanedCandles {
  readonly ids: number;
  readonly candles: number;
  readonly candles1h: number;
  readonly candles1d: number;
}

/** The databases of a report that are damaged: a walk that threw or read fewer (or more) records than the header counts. */
export function damaged(r: CheckReport): DbCheck[] {
  return r.dbs.filter((d) => d.error !== undefined || d.read !== d.entries);
}

/** Whether a report found no damage at all. */
export function healthy(r: CheckReport): boolean {
  return r.crashed === undefined && damaged(r).length === 0;
}

/** One line per damaged database, in words: "catalog: 43 of 995 records readable (…)". */
export function damageLines(r: CheckReport): string[] {
  const lines = damaged(r).map((d) => `${d.name}: ${d.read} of ${d.entries} records readable${d.error ? ` (${d.error})` : ''}`);
  if (r.crashed !== undefined) lines.push(r.crashed);
  return lines;
}

/**
 * Walks every sub-database of `file` in this process, reading and decoding each record and
 * comparing the count with what the database's header says it holds (a damaged branch page ends a
 * walk early and silently). LMDB trusts its pages: on some damage it aborts the process with an
 * assertion, so the service runs this in a child (`checkInChild`). `progress` is told which
 * database is being walked, so a parent knows where a child died.
 */
export function walkStore(file: string, progress: (name: DbName) => void = () => {}, scope: CheckScope = 'full'): CheckReport {
  const root = openAlone(file, () => open({ path: file, noSubdir: true, maxDbs: 32, readOnly: true }));
  try {
    const format = storedFormat(root);
    const dbs = scopeNames(scope).map((name) => (progress(name), walkDb(root, name, format)));
    // Orphans are looked for in a store that walked clean (a damaged one's counts say enough).
    const orphans = scope === 'full' && format >= 4 && dbs.every((d) => d.error === undefined && d.read === d.entries) ? findOrphans(root) : undefined;
    return { file, dbs, ...(orphans ? { orphans } : {}) };
  } finally {
    void root.close();
  }
}

/**
 * The format the store's own meta database records (how its databases are opened: keys.ts). A store
 * of format 1 or 2 records it too; 2 when unreadable (the walk of meta then says why).
 */
export function storedFormat(root: RootDatabase): number {
  try {
    const f = root.openDB(dbOptions('meta')).get('format');
    return typeof f === 'number' ? f : 2;
  } catch {
    return 2;
  }
}

/** Candle-log keys of a format-4 store whose market id neither a catalog nor a quote record carries. */
function findOrphans(root: RootDatabase): OrphanedCandles | undefined {
  try {
    return orphansOf(root);
  } catch {
    return undefined; // a key no format-4 writer made: not what this looks for (the service's own reads say so)
  }
}

function orphansOf(root: RootDatabase): OrphanedCandles | undefined {
  const carried = new Set<number>();
  for (const name of ['catalog', 'quotes'] as const) for (const key of root.openDB(dbOptions(name)).getKeys()) carried.add(readIdKey(key as Buffer));
  const ids = new Set<number>();
  const count = (name: 'candles' | 'candles1h' | 'candles1d'): number => {
    let n = 0;
    for (const key of root.openDB(dbOptions(name)).getKeys()) {
      const id = candleId(key as Buffer);
      if (carried.has(id)) continue;
      ids.add(id);
      n++;
    }
    return n;
  };
  const r = { candles: count('candles'), candles1h: count('candles1h'), candles1d: count('candles1d') };
  return ids.size === 0 ? undefined : { ids: ids.size, ...r };
}

function walkDb(root: RootDatabase, name: DbName, format: number): DbCheck {
  let db: Database | undefined;
  const opts = dbOptions(name, format);
  try {
    db = root.openDB(opts) as Database | undefined;
  } catch (e) {
    // A store of an older version may not have every database yet.
    if (/MDB_NOTFOUND|not found/i.test(messageOf(e))) return { name, entries: 0, read: 0 };
    return { name, entries: 0, read: 0, error: messageOf(e) };
  }
  // lmdb-js opening read-only answers a database the file lacks with undefined, not MDB_NOTFOUND.
  if (db === undefined) return { name, entries: 0, read: 0 };
  const header = (db.getStats() as { entryCount?: number }).entryCount ?? 0;
  let read = 0;
  let error: string | undefined;
  let structures = false;
  try {
    structures = db.get(opts.sharedStructuresKey) !== undefined;
    for (const entry of db.getRange()) if (entry.value !== null || entry.key !== null) read++;
  } catch (e) {
    error = messageOf(e);
  }
  return { name, entries: header - (structures ? 1 : 0), read, error };
}

/** The check's entry script: the built .js beside this file, or the .ts source through tsx (tests). */
function entryCommand(): string[] {
  return scriptArgs(import.meta.url, 'check-entry');
}

/**
 * `walkStore` in a child process, so damage that makes LMDB abort ends the child, not the caller:
 * the report then says which database the walk was in and how the child died. Synchronous: it runs
 * at start, before anything reads the file.
 */
export function checkInChild(file: string, scope: CheckScope = 'full'): CheckReport {
  const r = runEntry(['check', file, scope]);
  let report: CheckReport | undefined;
  let last: string | undefined;
  let unopened: string | undefined;
  for (const m of r.lines as { db?: DbName; report?: CheckReport; unopened?: string }[]) {
    if (m.db !== undefined) last = m.db;
    if (m.report !== undefined) report = m.report;
    if (m.unopened !== undefined) unopened = m.unopened;
  }
  if (report !== undefined && r.died === undefined) return report;
  if (unopened !== undefined) return { file, dbs: [], unopened };
  return { file, dbs: [], crashed: `reading ${last ?? 'the file'} stopped the check (${r.died ?? 'no report'})` };
}

/** What copying one database found: records copied, and why it stopped early (damage) if it did. */
export interface CopyResult {
  readonly name: DbName;
  readonly copied: number;
  readonly stopped?: string | undefined;
}

/**
 * Copies the readable records of every database of `file` into the store file `out`, in a child
 * (LMDB may abort on a damaged page): what a child committed before it died is kept. One child
 * walks the databases in turn; if one dies, that database is copied once more from its last
 * committed key a record at a time (so only the records after the damage are lost, not the rest of
 * the chunk), and a new child goes on with the next database.
 */
export function copyInChild(file: string, out: string): CopyResult[] {
  const results: CopyResult[] = [];
  let from = 0;
  while (from < DB_NAMES.length) {
    const run = runCopy(file, out, DB_NAMES[from]!, COPY_CHUNK, undefined, true);
    results.push(...run.done);
    if (run.died === undefined) break;
    const name = run.at ?? DB_NAMES[from]!;
    const again = runCopy(file, out, name, 1, run.lastKey ?? null, false);
    const copied = run.copied + (again.done[0]?.copied ?? again.copied);
    results.push({ name, copied, stopped: again.done[0]?.stopped ?? again.died ?? run.died });
    from = DB_NAMES.indexOf(name) + 1;
  }
  return results;
}

interface CopyRun {
  /** Databases finished. */
  readonly done: CopyResult[];
  /** How the child died, when it did; the database it was in, and what it had committed there. */
  readonly died?: string | undefined;
  readonly at?: DbName | undefined;
  readonly copied: number;
  readonly lastKey?: Key | undefined;
}

function runCopy(file: string, out: string, first: DbName, chunk: number, after: Key | null | undefined, rest: boolean): CopyRun {
  const r = runEntry(['copy', file, out, first, String(chunk), rest ? 'rest' : 'one', after === undefined ? '' : JSON.stringify(after)]);
  const done: CopyResult[] = [];
  let at: DbName | undefined;
  let copied = 0;
  let lastKey: Key | undefined;
  for (const m of r.lines as { db?: DbName; copied?: number; lastKey?: Key; done?: CopyResult }[]) {
    if (m.db !== undefined) [at, copied, lastKey] = [m.db, 0, undefined];
    if (m.copied !== undefined) [copied, lastKey] = [m.copied, m.lastKey];
    if (m.done !== undefined) done.push(m.done);
  }
  return r.died === undefined ? { done, copied } : { done, died: r.died, at, copied, lastKey };
}

/** Records per commit when copying (what a child that dies has committed is kept). */
const COPY_CHUNK = 1000;

/**
 * `copyInChild`'s work, in this process: the readable records of `name`, in key order (after the
 * key `after` when given: null means from the start), `chunk` per commit, until the first error.
 * `progress` is told the count and last key committed.
 */
export async function copyDb(
  file: string,
  out: string,
  name: string,
  opts: { readonly chunk: number; readonly after?: Key | null | undefined },
  progress: (copied: number, lastKey: Key | undefined) => void,
): Promise<CopyResult> {
  const db = DB_NAMES.find((n) => n === name);
  if (db === undefined) throw new Error(`no database named ${name}`);
  const src = openAlone(file, () => open({ path: file, noSubdir: true, maxDbs: 32, readOnly: true }));
  // No fsync per commit (a child that aborts keeps what it committed: the pages are in the page
  // cache); `repair` syncs the finished file once before moving it into place.
  const dst = open({ path: out, noSubdir: true, maxDbs: 32, noSync: true });
  let copied = 0;
  let stopped: string | undefined;
  try {
    // The copy keeps the store's format (its meta, format included, is copied like the rest).
    const format = storedFormat(src);
    const from = src.openDB(dbOptions(db, format));
    const to = dst.openDB(dbOptions(db, format));
    let batch: { key: Key; value: unknown }[] = [];
    const commit = async (): Promise<void> => {
      const rows = batch;
      if (rows.length === 0) return;
      batch = [];
      await to.transaction(() => {
        for (const { key, value } of rows) void to.put(key, value);
      });
      copied += rows.length;
      progress(copied, rows[rows.length - 1]!.key);
    };
    const range = opts.after === undefined || opts.after === null ? from.getRange() : from.getRange({ start: opts.after });
    try {
      for (const { key, value } of range) {
        if (opts.after !== undefined && opts.after !== null && copied === 0 && batch.length === 0 && sameKey(key, opts.after)) continue;
        batch.push({ key, value });
        if (batch.length >= opts.chunk) await commit();
      }
    } catch (e) {
      stopped = messageOf(e);
    }
    await commit();
  } finally {
    await dst.close();
    await src.close();
  }
  return { name: db, copied, stopped };
}

function sameKey(a: Key, b: Key): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Runs the entry script with `args`: its JSON lines, and how it died if it did not exit 0. */
export function runEntry(args: string[]): { lines: unknown[]; died?: string } {
  const r = spawnSync(process.execPath, [...entryCommand(), ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const lines: unknown[] = [];
  for (const line of (r.stdout ?? '').split('\n')) {
    try {
      if (line) lines.push(JSON.parse(line));
    } catch {
      // a line cut short by the child's death
    }
  }
  if (r.status === 0 && !r.error) return { lines };
  const how = r.error ? r.error.message : r.signal ? `killed by ${r.signal}` : `exit code ${r.status}`;
  const said = (r.stderr ?? '').trim().split('\n').filter(Boolean).pop();
  return { lines, died: `${how}${said ? `: ${said.slice(0, 200)}` : ''}` };
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
