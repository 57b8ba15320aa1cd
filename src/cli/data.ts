import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkInChild, copyInChild, damageLines, healthy, type CheckReport } from '../persist/check.js';
import { DB_FILE, MARKER, Persistence, WHAT_TO_DO } from '../persist/store.js';

type Say = (s: string) => void;

/**
 * `crossbook data check|repair|backup`: what an operator does about the data file. `check` walks
 * every database in a child process (LMDB aborts on some damaged pages) and lists the damage;
 * `repair` copies what can still be read into a new file and keeps the damaged one beside it;
 * `backup` takes a consistent hot copy while the service runs (LMDB's copy, as `mdb_copy` does).
 * Exit codes: 0 done (or nothing to do), 1 damage found or not repaired, 2 bad arguments or DATA_DIR.
 */
export async function dataCommand(
  dataDir: string,
  action: 'check' | 'repair' | 'backup',
  arg: { readonly dir?: string; readonly compact?: boolean },
  out: Say,
  err: Say,
): Promise<number> {
  const dir = resolve(dataDir);
  const file = join(dir, DB_FILE);
  if (!existsSync(file) || !existsSync(join(dir, MARKER))) {
    err(`DATA_DIR ${dir} holds no crossbook store (${DB_FILE} and ${MARKER} are both needed)`);
    return 2;
  }
  if (action === 'check') return check(file, out, err);
  if (action === 'repair') return repair(dir, file, out, err);
  if (arg.dir === undefined) {
    err('crossbook data backup: the directory to write the copy into is required');
    return 2;
  }
  return backup(dir, resolve(arg.dir), arg.compact ?? false, out, err);
}

function check(file: string, out: Say, err: Say): number {
  const report = checkInChild(file);
  for (const d of report.dbs) out(`${d.name.padEnd(14)} ${String(d.read).padStart(9)} records${d.read === d.entries && !d.error ? '' : `  DAMAGED`}`);
  const o = report.orphans;
  if (o !== undefined)
    out(
      `orphaned history: ${o.candles} one-minute, ${o.candles1h} hour and ${o.candles1d} day candles under ${o.ids} market ids no record carries (a market whose catalog record was not written before a crash came back under a new id; not damage)`,
    );
  if (healthy(report)) {
    out(`${file}: no damage found`);
    return 0;
  }
  err(`${file} is damaged: ${damageLines(report).join('; ')}`);
  err(WHAT_TO_DO);
  return 1;
}

/**
 * Copies every database's readable records, one child per database (what a child committed before
 * LMDB aborted is kept), checks the copy, then moves the damaged file aside and the copy into its
 * place. The service must be stopped first: it holds the old file open.
 */
function repair(dir: string, file: string, out: Say, err: Say): number {
  const before = checkInChild(file);
  if (healthy(before)) {
    out(`${file}: no damage found; nothing to repair`);
    return 0;
  }
  out(`damage: ${damageLines(before).join('; ')}`);
  const fresh = join(dir, `${DB_FILE}.repairing`);
  removeStore(fresh);
  let kept = 0;
  for (const r of copyInChild(file, fresh)) {
    const name = r.name;
    kept += r.copied;
    const had = before.dbs.find((d) => d.name === name)?.entries;
    out(
      `${name.padEnd(14)} ${String(r.copied).padStart(9)} records kept${had !== undefined && had !== r.copied ? ` of ${had}` : ''}${r.stopped ? ` (stopped: ${r.stopped})` : ''}`,
    );
  }
  const after = checkInChild(fresh);
  if (!healthy(after)) {
    err(`the repaired copy did not check clean (${damageLines(after).join('; ')}); ${file} is left as it was`);
    removeStore(fresh);
    return 1;
  }
  const fd = openSync(fresh, 'r+');
  fsyncSync(fd);
  closeSync(fd);
  const aside = join(dir, `${DB_FILE}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  renameSync(file, aside);
  rmSync(`${file}-lock`, { force: true });
  renameSync(fresh, file);
  rmSync(`${fresh}-lock`, { force: true });
  out(`repaired: ${kept} records kept in ${file}; the damaged file is at ${aside}`);
  return 0;
}

async function backup(dir: string, to: string, compact: boolean, out: Say, err: Say): Promise<number> {
  if (to === dir) {
    err('crossbook data backup: the copy must go to another directory than DATA_DIR');
    return 2;
  }
  mkdirSync(to, { recursive: true });
  if (existsSync(join(to, DB_FILE))) {
    err(`crossbook data backup: ${join(to, DB_FILE)} exists; choose an empty directory`);
    return 2;
  }
  const p = new Persistence(dir, undefined, { readOnly: true });
  try {
    await p.root.backup(join(to, DB_FILE), compact);
  } finally {
    await p.close();
  }
  copyFileSync(join(dir, MARKER), join(to, MARKER));
  const report: CheckReport = checkInChild(join(to, DB_FILE));
  if (!healthy(report)) {
    err(`the copy in ${to} did not check clean: ${damageLines(report).join('; ')} (is ${dir} itself damaged? \`crossbook data check\`)`);
    return 1;
  }
  const records = report.dbs.reduce((n, d) => n + d.read, 0);
  out(`backup of ${dir} written to ${to} (${records} records, checked); start a service on it with DATA_DIR=${to}`);
  return 0;
}

/** Removes an LMDB store file and its lock file. */
function removeStore(file: string): void {
  rmSync(file, { force: true });
  rmSync(`${file}-lock`, { force: true });
}

/** Damaged files `repair` set aside in `dir` (for tests and operators). */
export function damagedCopies(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.startsWith(`${DB_FILE}.damaged-`));
}
