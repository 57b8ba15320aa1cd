import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { Api } from './access/api.js';
import { ApiContext } from './api/context.js';
import { registerAlerts } from './api/alerts.js';
import { registerDataRoutes } from './api/index.js';
import { registerMatching } from './api/matching.js';
import { registerSignals } from './api/signals.js';
import { registerVenueB } from './api/venue-b.js';
import { MatchingService } from './matching/service.js';
import { AlertEngine } from './signals/alerts.js';
import { SignalEngine } from './signals/engine.js';
import { WalletLedger } from './signals/wallets.js';
import { VenueDirectory } from './venues/directory.js';
import { WsHub } from './ws/hub.js';
import { wsPathItem } from './ws/protocol.js';
import { KeyStore } from './access/keys.js';
import { loadPlans } from './access/plans.js';
import { QuotaLedger } from './access/quota.js';
import { createIngest, liveEndpoints, type Ingest } from '../pipelines/ingest.js';
import type { Config } from './config/schema.js';
import { log as rootLog, type Logger } from './core/log.js';
import { openPersistence, type Persistence } from './persist/store.js';
import { errorReply, HttpServer } from './server/http.js';
import { registerMetrics } from './server/routes/metrics.js';
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
  readonly api: Api;
  readonly keys: KeyStore;
  readonly quota: QuotaLedger;
  /** The demo key (embedded default only), created once and kept in DATA_DIR/demo-key. */
  readonly demoKey: string | undefined;
  readonly ws: WsHub;
  readonly matching: MatchingService;
  readonly signals: SignalEngine;
  readonly ledger: WalletLedger;
  readonly alerts: AlertEngine;
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
  const persistence = openPersistence(config.dataDir, log);
  const state = new EngineState(config.venues, { tradeCapacity: config.memory.recentTrades });
  const restored = persistence.load(state);
  persistence.attach(state);
  log.info({ dataDir: persistence.dir, ...restored }, 'state restored');
  const directory = new VenueDirectory(config);
  const ledger = new WalletLedger(state, persistence, { ...config.signals?.wallets, log: log.child({ component: 'wallets' }) });
  const ledgerRestored = ledger.load();
  const alerts = new AlertEngine(ledger, persistence, { ...config.signals?.alerts, log: log.child({ component: 'alerts' }) });
  alerts.load();
  alerts.attach();
  ledger.attach();
  log.info(ledgerRestored, 'wallet ledger restored');
  const matching = new MatchingService(state, directory, persistence.db('groups'), log.child({ component: 'matching' }));
  const signals = new SignalEngine(state, directory, matching);
  signals.recomputeAll();
  const groupChanges = matching.changes$.subscribe((ids) => {
    for (const id of ids) signals.recompute(id);
  });

  let sim: RunningSim | undefined;
  const needsSim = config.venues.some((v) => v.enabled && v.connection.mode === 'sim');
  if (needsSim) {
    if (!config.sim.embedded) throw new Error('venues in sim mode need sim.embedded=true (or run `crossbook sim` and set them to live mode with its URLs)');
    sim = await startSim(config);
  }
  const ingest = createIngest(config, state, (v) => (v.connection.mode === 'sim' ? sim!.endpoints(v.label)! : liveEndpoints(v)), log);
  const ingestSub: Subscription = ingest.start();

  const snapshotTimer = setInterval(() => void persistence.snapshot(state), config.persistence.snapshotIntervalMs);
  // Feeds sending malformed frames: degraded on /status and a warning to subscribers, until quiet.
  const checkFeeds = (now: number): void => {
    for (const f of ingest.feeds) {
      const change = state.health.checkMalformed(f.venue.label, f.stats.malformedTotal, now);
      if (!change) continue;
      const detail = change === 'degraded' ? `malformed frames (${f.stats.malformedTotal} dropped so far)` : 'no malformed frames for 10 s';
      log.warn(
        { venue: f.venue.label, malformed: f.stats.malformedTotal },
        change === 'degraded' ? 'venue sending malformed frames' : 'venue frames clean again',
      );
      const ev = { type: 'feed', venue: f.venue.label, state: change, detail, timestamp: now, localTimestamp: now } as const;
      state.health.feed(ev);
      ws.onFeedEvent(ev);
    }
  };
  const flushTimer = setInterval(() => {
    const now = Date.now();
    state.candles.flush(now);
    void persistence.flushCatalog(state);
    checkFeeds(now);
  }, 1000);

  const plans = loadPlans();
  const keys = new KeyStore(persistence.db('keys'));
  keys.watch();
  const quota = new QuotaLedger(persistence.db('quota'));
  quota.start();
  const demoKey = needsSim ? ensureDemoKey(persistence.dir, keys) : undefined;

  const http = new HttpServer(log);
  const api = new Api(http, API_BASE, keys, quota, plans);
  registerStatus(
    api,
    config,
    state,
    startedAt,
    100,
    () => persistence.health(),
    () => matching.lastMatchedPriceAt,
  );
  const apiCtx = new ApiContext(config, state, persistence);
  registerDataRoutes(api, apiCtx);
  registerMatching(api, apiCtx, matching);
  registerSignals(api, apiCtx, signals);
  registerAlerts(api, apiCtx, ledger, alerts);
  registerVenueB(api, apiCtx, ledger);
  const ws = new WsHub(http, `${API_BASE}/ws`, state, directory, keys, plans, log);
  // A plain GET of the WebSocket path (no Upgrade header falls through uWS's ws route to the router):
  // the access layer answers it like any route (401 without a good key), a keyed one learns to upgrade.
  api.route({
    path: '/ws',
    summary: 'WebSocket stream (a plain GET answers 426)',
    handler: () =>
      errorReply(426, 'upgrade_required', `${API_BASE}/ws is a WebSocket endpoint: connect with a WebSocket client (Connection: Upgrade, Upgrade: websocket)`),
  });
  const catalogVenue = directory.withCapability('catalog');
  api.document(
    '/ws',
    wsPathItem(
      `${catalogVenue?.slug ?? 'venue_a'}_prices`,
      Object.values(plans).map((p) => `${p.name}: ${p.ws.connections} connections per key, ${p.ws.subscriptions} subscriptions per connection`),
    ),
  );
  ws.attachSignals(signals);
  ws.attachGames({
    eventOf: (venue, marketId) => {
      const id = matching.groupIdOf(venue, marketId);
      const g = id === undefined ? undefined : matching.servedGroup(id);
      return g?.market_class ? (g.event_id ?? undefined) : undefined;
    },
    hasEvent: (id) => matching.hasGameEvent(id),
    isLive: (id) => matching.isGameLive(id, Date.now()),
  });
  registerMetrics(api, { state, feeds: ingest.feeds, ws, persistence, ledger });
  const feedWarnings = ingest.events$.subscribe((ev) => {
    if (ev.type === 'feed') ws.onFeedEvent(ev);
  });
  http.get('/', () => ({
    status: 200,
    body: JSON.stringify({ name: 'crossbook', api: API_BASE, status: `${API_BASE}/status`, openapi: `${API_BASE}/openapi.json` }),
  }));
  const port = opts.listen === false ? 0 : await http.listen(config.server.host, config.server.port);
  const url = config.server.baseUrl ?? `http://${config.server.host}:${port}`;
  api.serveOpenapi(`${url}${API_BASE}`);

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
    api,
    keys,
    quota,
    demoKey,
    ws,
    matching,
    signals,
    ledger,
    alerts,
    async close() {
      if (closed) return;
      closed = true;
      feedWarnings.unsubscribe();
      ws.close();
      http.close();
      clearInterval(snapshotTimer);
      clearInterval(flushTimer);
      ingestSub.unsubscribe();
      await sim?.close();
      groupChanges.unsubscribe();
      signals.close();
      matching.close();
      await alerts.close();
      await ledger.close();
      keys.stop();
      await quota.stop();
      state.candles.flush(Date.now(), true);
      await persistence.snapshot(state);
      await persistence.close();
    },
  };
}

/**
 * The demo key of the embedded default: created once (plan pro, so every endpoint works in the
 * demo) and kept in DATA_DIR/demo-key (mode 0600) so that each `npm start` can print it. Only the
 * demo key is kept in plaintext; keys made with `crossbook keys create` exist only as hashes.
 */
function ensureDemoKey(dir: string, keys: KeyStore): string {
  const file = join(dir, 'demo-key');
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim();
    if (keys.verify(key).ok) return key;
  }
  const { key } = keys.create('pro', 'demo');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}
