/**
 * The child process of `checkInChild` and `copyInChild`. `check FILE [full|state]`: walks crossbook.mdb and
 * prints one JSON line per database before walking it, then the report. `copy FILE OUT DB CHUNK one|rest AFTER`:
 * copies the readable records of database DB (and with `rest`, of every database after it) into
 * the store file OUT, DB's after the JSON key AFTER when given, committing every CHUNK and printing
 * which database it is in and the count and last key committed so far. If LMDB aborts on a damaged page, the last line says where.
 */
import type { Key } from 'lmdb';
import { copyDb, walkStore } from './check.js';
import { copyUpgraded } from './migrate.js';
import { DB_NAMES } from './store.js';

const [mode, file, out, db, chunk, which, after] = process.argv.slice(2);
try {
  if (mode === 'check' && file !== undefined) {
    const report = walkStore(file, (name) => process.stdout.write(`${JSON.stringify({ db: name })}\n`), out === 'state' ? 'state' : 'full');
    process.stdout.write(`${JSON.stringify({ report })}\n`);
  } else if (mode === 'copy' && file !== undefined && out !== undefined && db !== undefined) {
    const first = DB_NAMES.findIndex((n) => n === db);
    if (first < 0) throw new Error(`no database named ${db}`);
    const names = which === 'rest' ? DB_NAMES.slice(first) : [DB_NAMES[first]!];
    const opts = { chunk: Number(chunk ?? 1000) || 1000, after: after ? (JSON.parse(after, bufferReviver) as Key) : undefined };
    for (const name of names) {
      process.stdout.write(`${JSON.stringify({ db: name })}\n`);
      const r = await copyDb(file, out, name, name === names[0] ? opts : { chunk: opts.chunk }, (copied, lastKey) =>
        process.stdout.write(`${JSON.stringify({ copied, lastKey })}\n`),
      );
      process.stdout.write(`${JSON.stringify({ done: r })}\n`);
    }
  } else if (mode === 'migrate' && file !== undefined && out !== undefined) {
    const done = await copyUpgraded(file, out, (name, copied) => process.stdout.write(`${JSON.stringify({ db: name, copied })}\n`));
    process.stdout.write(`${JSON.stringify({ done })}\n`);
  } else {
    process.stderr.write('usage: check-entry check FILE [full|state] | copy FILE OUT DB CHUNK one|rest [AFTER] | migrate FILE OUT\n');
    process.exit(2);
  }
} catch (e) {
  const message = e instanceof Error ? e.message : String(e);
  // The file could not be opened for a reason that is not its content: say so apart from damage.
  if (/EACCES|EPERM|EROFS|EAGAIN|Permission denied|Read-only file system/i.test(message)) process.stdout.write(`${JSON.stringify({ unopened: message })}\n`);
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** A binary key (format 3) comes back through JSON as `{ type: 'Buffer', data }`. */
function bufferReviver(_key: string, value: unknown): unknown {
  const v = value as { type?: unknown; data?: unknown } | null;
  return v !== null && typeof v === 'object' && v.type === 'Buffer' && Array.isArray(v.data) ? Buffer.from(v.data as number[]) : value;
}
