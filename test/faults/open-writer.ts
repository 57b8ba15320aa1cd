/**
 * A second process for test/faults/concurrent-open.test.ts: writes to DATA_DIR (argv[2]) as the
 * service does, through `Persistence` (its write gate included), in small asynchronous batches back to
 * back, so a commit is nearly always under way when another process opens the store. Each batch puts
 * a key of its own (market `b`/`<n>`) and the counter `n`; once its promise resolves it reads the counter
 * back. Prints `{"ready":true}`, then on SIGTERM one line `{"done":{...}}` with how many batches
 * committed, how many failed and how many read back an older counter than the one just committed.
 */
import { ID_BASE, idKey } from '../../src/persist/keys.js';
import { Persistence } from '../../src/persist/store.js';

const p = new Persistence(process.argv[2]!);
const quotes = p.db('quotes');
const books = p.db('books');
/** Keys as the store writes them (src/persist/keys.ts). */
const COUNTER = idKey(ID_BASE);
let stop = false;
process.on('SIGTERM', () => (stop = true));
let committed = 0;
let failed = 0;
let stale = 0;
let firstError: string | undefined;
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for (let n = 0; !stop; n++) {
  const writes = [books.put(idKey(ID_BASE + (n % 512)), { n }), quotes.put(idKey(ID_BASE + 1 + n), n), quotes.put(COUNTER, n)];
  try {
    const ok = await Promise.all(writes);
    if (ok.every((x) => x === true)) {
      committed = n + 1;
      const seen = quotes.get(COUNTER) as number | undefined;
      if (seen === undefined || seen < n) stale++;
    } else failed++;
  } catch (e) {
    failed++;
    firstError ??= (e as Error & { commitError?: Error }).commitError?.message ?? (e as Error).message;
  }
  if (p.guard && !p.guard.open) {
    firstError ??= p.guard.state.reason;
    break;
  }
}
const writeErrors = p.writeErrors;
await p.close();
process.stdout.write(`${JSON.stringify({ done: { committed, failed, stale, writeErrors, firstError } })}\n`);
