/**
 * A crossbook service in a child process for the process-fault tests: starts on the DATA_DIR given
 * in argv[2] with the simulator at a high tick rate, then every 100 ms reports on stdout what is
 * durable: the highest trade seq written and flushed, and the demo key's monthly count a quota flush wrote.
 * SIGKILL can arrive at any moment; only what was reported may be relied on. Reports come in the
 * order of their ticks, each after the flushes of every tick before it.
 */
import { loadConfig } from '../../src/config/load.js';
import { startService } from '../../src/service.js';

const dir = process.argv[2]!;
const config = loadConfig({
  env: {},
  overrides: {
    dataDir: dir,
    logLevel: 'silent',
    server: { host: '127.0.0.1', port: 0, baseUrl: null },
    sim: { ticksPerSecond: 3000, seed: 11 },
    ingest: { pollMs: 200 },
  },
});
const svc = await startService(config);
process.stdout.write(`${JSON.stringify({ ready: true, url: svc.url, key: svc.demoKey })}\n`);
process.once('SIGTERM', () => void svc.close().then(() => process.exit(0)));
const verdict = svc.keys.verify(svc.demoKey);
const keyId = verdict.ok ? verdict.record.id : undefined;
/** The previous report's flushes: each report waits for them too, so reports come in order and each covers all before it. */
let previous: Promise<unknown> = Promise.resolve();
setInterval(() => {
  const seq = svc.state.trades.seq;
  const markets = svc.state.catalog.size;
  // The demo key's monthly count as the flush below begins: durable once it resolves.
  const quota = keyId === undefined ? 0 : (svc.quota.used(keyId)?.count ?? 0);
  // What the service does every second (catalog) and on every write (trades, quota), awaited here
  // so that the report names only what is on disk.
  // A catalog flush that takes many dirty markets can end after the next tick's short one.
  previous = Promise.all([previous, svc.persistence.flushCatalog(svc.state), svc.persistence.flushed(), svc.quota.flush()]).then(() => {
    // writeErrors: writes that failed (full disk); durableSeq then means "attempted", not "on disk".
    process.stdout.write(`${JSON.stringify({ durableSeq: seq, markets, quota, writeErrors: svc.persistence.writeErrors })}\n`);
  });
}, 100);
