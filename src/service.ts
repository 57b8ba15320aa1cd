import type { Subscription } from 'rxjs';
import { createIngest, liveEndpoints, type Ingest } from '../pipelines/ingest.js';
import type { Config } from './config/schema.js';
import { log as rootLog, type Logger } from './core/log.js';
import { Persistence } from './persist/store.js';
import { HttpServer } from './server/http.js';
import { registerStatus } from './server/routes/status.js';
import { startSim, type RunningSim } from './sim/runner.js';
import { EngineState } from './state/engine.js';

export const API_BASE = '/api/v2';

/** A running crossbook: state, ingest, persistence and the HTTP server. */
export interface Service {
  readonly config: Config;
  readonly state: EngineState;
  readonly persistence: Persistence;
  readonly http: HttpServer;
  readonly ingest: Ingest;
  readonly sim: RunningSim | undefined;
  readonly port: number;
  /** http://host:port */
  readonly url: string;
  readonly restored: { markets: number; quotes: number; books: number; trades: number };
  close(): Promise<void>;
}

/**
 * The composition root of the process: opens DATA_DIR and restores state (so a restart serves
 * what it had before the venues reconnect), starts the embedded simulator when configured, wires
 * the ingest pipeline, persistence and the HTTP server, and returns a handle whose close()
 * snapshots everything and stops in order.
 */
export async function startService(config: Config, opts: { log?: Logger; listen?: boolean } = {}): Promise<Service> {
  const log = opts.log ?? rootLog;
  const startedAt = Date.now();
  const persistence = new Persistence(config.dataDir, log);
  const state = new EngineState(config.venues);
  const restored = persistence.load(state);
  persistence.attach(state);
  log.info({ dataDir: persistence.dir, ...restored }, 'state restored');

  let sim: RunningSim | undefined;
  const needsSim = config.venues.some((v) => v.enabled && v.connection.mode === 'sim');
  if (needsSim) {
    if (!config.sim.embedded) throw new Error('venues in sim mode need sim.embedded=true (or run `crossbook sim` and set them to live mode with its URLs)');
    sim = await startSim(config);
  }
  const ingest = createIngest(config, state, (v) => (v.connection.mode === 'sim' ? sim!.endpoints(v.label)! : liveEndpoints(v)), log);
  const ingestSub: Subscription = ingest.start();

  const snapshotTimer = setInterval(() => void persistence.snapshot(state), config.persistence.snapshotIntervalMs);
  const flushTimer = setInterval(() => state.candles.flush(Date.now()), 1000);

  const http = new HttpServer(log);
  registerStatus(http, API_BASE, config, state, startedAt);
  http.get('/', () => ({ status: 200, body: JSON.stringify({ name: 'crossbook', api: API_BASE, status: `${API_BASE}/status` }) }));
  const port = opts.listen === false ? 0 : await http.listen(config.server.host, config.server.port);
  const url = config.server.baseUrl ?? `http://${config.server.host}:${port}`;

  let closed = false;
  return {
    config,
    state,
    persistence,
    http,
    ingest,
    sim,
    port,
    url,
    restored,
    async close() {
      if (closed) return;
      closed = true;
      http.close();
      clearInterval(snapshotTimer);
      clearInterval(flushTimer);
      ingestSub.unsubscribe();
      await sim?.close();
      state.candles.flush(Date.now(), true);
      await persistence.snapshot(state);
      await persistence.close();
    },
  };
}
