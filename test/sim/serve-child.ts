/**
 * A crossbook service on the embedded default (simulator child) in a process of its own, for the
 * test that kills it with SIGKILL: starts on the DATA_DIR given in argv[2] and prints its own pid
 * and its simulator child's pid as one JSON line once it serves.
 */
import { loadConfig } from '../../src/config/load.js';
import { startService } from '../../src/service.js';

const config = loadConfig({
  env: {},
  overrides: { dataDir: process.argv[2]!, logLevel: 'silent', server: { host: '127.0.0.1', port: 0, baseUrl: null }, sim: { ticksPerSecond: 100, seed: 3 } },
});
const svc = await startService(config);
process.stdout.write(`${JSON.stringify({ pid: process.pid, simPid: svc.simChild?.pid, url: svc.url })}\n`);
process.once('SIGTERM', () => void svc.close().then(() => process.exit(0)));
