import { Api } from './access/api.js';
import { KeyStore } from './access/keys.js';
import { loadPlans, type Plan, type PlanName } from './access/plans.js';
import { QuotaLedger } from './access/quota.js';
import { registerAlerts } from './api/alerts.js';
import { ApiContext } from './api/context.js';
import { registerDataRoutes } from './api/index.js';
import { registerMatching } from './api/matching.js';
import { registerSignalHistory } from './api/signal-history.js';
import { registerSignals } from './api/signals.js';
import { registerVenueB } from './api/venue-b.js';
import { registerReplay } from './api/replay.js';
import { registerFills } from './api/fills.js';
import { captureSettings, captureStatus, openCapture, type Capture } from './capture/index.js';
import { registerCaptureMetrics } from './capture/metrics.js';
import { NormCache } from './capture/normcache.js';
import { normalizerVersion } from './capture/normblock.js';
import { HistoryClient } from './history/client.js';
import type { Config } from './config/schema.js';
import { realClock, type Clock } from './core/clock.js';
import { log as rootLog, type Logger } from './core/log.js';
import { MatchingService } from './matching/service.js';
import { openPersistence, restoring, type Persistence } from './persist/store.js';
import { Cors } from './server/cors.js';
import { errorReply, HttpServer } from './server/http.js';
import { registerMetrics } from './server/routes/metrics.js';
import type { Registry } from 'prom-client';
import type { ClusterStatus } from './cluster/health.js';
import { registerStatus } from './server/routes/status.js';
import { dashboardDir, registerDashboard } from './server/static.js';
import { AlertEngine } from './signals/alerts.js';
import { SignalEngine } from './signals/engine.js';
import { OpportunityLog } from './signals/lifecycle/log.js';
import { LifecycleTracker } from './signals/lifecycle/tracker.js';
import { WalletLedger } from './signals/wallets.js';
import { EngineState } from './state/engine.js';
import { VenueDirectory } from './venues/directory.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { registerLifecycleMetrics } from './webhooks/metrics.js';
import { WebhookStore } from './webhooks/store.js';
import { Webhooks } from './webhooks/webhooks.js';
import type { VenueFeed } from './venues/protocol.js';
import { WsHub, type HubOptions } from './ws/hub.js';
import { gameLookup } from './ws/route.js';
import { wsPathItem, WS_COMPONENTS } from './ws/protocol.js';
import { registerWsToken } from './ws/token-route.js';

/**
 * Building the process in three layers, shared by the service, tests and benches so that each
 * builds what runs, not a copy of it: the core (DATA_DIR, restored state, venue directory, keys,
 * quotas), the domain (matching, signals, wallets, alerts: rooms with methods and output streams,
 * wired by pipelines/), and the HTTP layer (access layer, routes, WebSocket hub).
 */

export const API_BASE = '/api/v2';

export interface Core {
  readonly config: Config;
  readonly log: Logger;
  readonly persistence: Persistence;
  readonly state: EngineState;
  readonly restored: { markets: number; quotes: number; books: number; trades: number };
  readonly venues: VenueDirectory;
  readonly plans: Readonly<Record<PlanName, Plan>>;
  readonly keys: KeyStore;
  readonly quota: QuotaLedger;
  /** The capture log's writer on DATA_DIR/capture (undefined: `capture.enabled` false). */
  readonly capture: Capture | undefined;
  /** The one clock of the engine (src/core/clock.ts): wall time in steps in the service, virtual in a replay. */
  readonly clock: Clock;
  /** The history index behind `as_of` reads, following the capture on its own thread (undefined with capture or capture.history off). */
  readonly bookHistory: HistoryClient | undefined;
  /** The normalized cache behind GET /replay, written on the history index's thread (undefined with capture, capture.history or capture.replayCache off). */
  readonly normCache: NormCache | undefined;
}

/**
 * Opens DATA_DIR (or takes an open one) and restores the state from it, so a restart serves what it
 * had before the venues reconnect; opens the key store and quota ledger on it.
 */
export function buildCore(config: Config, opts: { log?: Logger; persistence?: Persistence; clock?: Clock } = {}): Core {
  const log = opts.log ?? rootLog;
  const clock = opts.clock ?? realClock;
  const persistence = opts.persistence ?? openPersistence(config.dataDir, log, { check: config.persistence.checkOnStart, clock });
  const state = new EngineState(config.venues, { tradeCapacity: config.memory.recentTrades });
  const restored = restoring(persistence, 'the state', () => persistence.load(state));
  log.info({ dataDir: persistence.dir, ...restored }, 'state restored');
  // In core + edges mode the core captures; an edge has no feeds of its own.
  const capture = config.cluster?.role === 'edge' ? undefined : openCapture(config, persistence.dir, clock, log);
  const settings = captureSettings(config);
  // The normalized cache behind /replay is written on the history index's thread, from the events it maps.
  if (capture && settings.replayCache && !settings.history)
    log.warn('capture.replayCache needs capture.history (the cache is written on its thread): /replay maps every window from the frames');
  const bookHistory =
    capture && settings.history
      ? new HistoryClient(capture, config.venues, {
          sliceMs: settings.checkpointIntervalMs,
          log: log.child({ component: 'history' }),
          lines: settings.replayCache ? { version: normalizerVersion(config.venues), maxBytes: settings.retentionBytes / 4 } : undefined,
          // The thread indexes the feed runtimes' live events; only records written otherwise (tests) are mapped on it.
          handed: true,
        })
      : undefined;
  return {
    config,
    log,
    persistence,
    state,
    restored,
    venues: new VenueDirectory(config),
    plans: loadPlans(),
    keys: new KeyStore(persistence.db('keys')),
    quota: new QuotaLedger(persistence.db('quota')),
    capture,
    clock,
    bookHistory,
    normCache: bookHistory && settings.replayCache ? new NormCache(() => bookHistory.normSync(), capture!.store) : undefined,
  };
}

export interface Domain {
  readonly matching: MatchingService;
  readonly signals: SignalEngine;
  readonly ledger: WalletLedger;
  readonly alerts: AlertEngine;
  /** Opportunity lifecycle: ids, open → close, and the closed ones' history in LMDB. */
  readonly lifecycle: LifecycleTracker;
  readonly history: OpportunityLog;
  readonly webhooks: Webhooks;
}

/**
 * The rooms that derive signals from the state, each restored from LMDB and computed once.
 * `persist: false` (a pipeline replay, whose temporary store nobody reads back): the wallet ledger
 * and the closed opportunities stay in memory, unwritten.
 */
export function buildDomain(core: Core, opts: { readonly persist?: boolean } = {}): Domain {
  const { config, state, persistence, log, clock } = core;
  const keep = opts.persist !== false;
  const ledger = new WalletLedger(state, keep ? persistence : undefined, {
    ...config.signals?.wallets,
    log: log.child({ component: 'wallets' }),
    now: () => clock.now(),
  });
  log.info(
    restoring(persistence, 'the wallet ledger', () => ledger.load()),
    'wallet ledger restored',
  );
  const alerts = new AlertEngine(ledger, persistence, { ...config.signals?.alerts, log: log.child({ component: 'alerts' }) });
  restoring(persistence, 'the alerts', () => alerts.load());
  const matching = restoring(
    persistence,
    'the match groups',
    () =>
      new MatchingService(
        state,
        core.venues,
        persistence.db('groups'),
        log.child({ component: 'matching' }),
        persistence.db('matching'),
        persistence.db('audit'),
        clock,
      ),
  );
  const lc = config.lifecycle;
  const history = new OpportunityLog(persistence.db('opportunities'), {
    retentionMs: (lc?.retentionHours ?? 168) * 3_600_000,
    pruneEveryMs: lc?.pruneIntervalMs,
    onWriteError: (e) => persistence.noteWriteError(e),
  });
  const lifecycle = new LifecycleTracker(keep ? history : undefined, { maxOpen: lc?.maxOpen, categoryOf: (id) => matching.servedGroup(id)?.category ?? null });
  const signals = new SignalEngine(state, core.venues, matching, lifecycle, clock);
  signals.recomputeAll();
  const wh = config.webhooks;
  const webhooks = new Webhooks(
    new WebhookStore(persistence.db('webhooks')),
    new WebhookDispatcher({ ...wh, log: log.child({ component: 'webhooks' }) }),
    { slugOf: (label) => core.venues.byLabel.get(label)?.slug, titleOf: (venue, id) => state.catalog.get(venue, id)?.title ?? null },
    wh?.pollMs ?? 500,
  );
  return { matching, signals, ledger, alerts, lifecycle, history, webhooks };
}

export interface HttpLayer {
  readonly http: HttpServer;
  readonly api: Api;
  readonly ctx: ApiContext;
  /** Present when a domain was given (the WebSocket serves its signals and games). */
  readonly ws: WsHub | undefined;
  /** The /metrics registry, present with a domain (a cluster role adds its own metrics to it). */
  readonly metrics: Registry | undefined;
}

export interface HttpOptions {
  /** Process start (ms), for /status uptime. */
  readonly startedAt?: number;
  /** Feeds whose counters /metrics exports. */
  readonly feeds?: readonly VenueFeed[];
  readonly hub?: HubOptions;
  /** A cluster edge's link to the core, shown on /status. */
  readonly cluster?: () => ClusterStatus;
  /** Where the built web dashboard is (default: dist/web of this checkout). */
  readonly dashboardDir?: string;
}

/**
 * The HTTP layer on one uWS app: /status, the data routes, and with a domain the matching, signal,
 * alert and venue_b wallet routes, the WebSocket hub and /metrics. Not listening yet.
 */
export function buildHttp(core: Core, domain?: Domain, opts: HttpOptions = {}): HttpLayer {
  const { config, state, persistence, log } = core;
  const http = new HttpServer(log, { trustProxy: config.server.trustProxy });
  const api = new Api(http, API_BASE, core.keys, core.quota, core.plans);
  registerStatus(api, {
    config,
    state,
    startedAt: opts.startedAt ?? Date.now(),
    persistence: () => persistence.health(),
    matchedPriceAt: domain ? () => domain.matching.lastMatchedPriceAt : undefined,
    cluster: opts.cluster,
    capture: core.capture && captureStatus(core.capture),
    history: core.bookHistory && (() => core.bookHistory!.status()),
  });
  const ctx = new ApiContext(config, state, persistence, core.venues, core.clock);
  const captureCfg = captureSettings(config);
  ctx.history = core.bookHistory && { index: core.bookHistory, settings: captureCfg, store: core.capture!.store };
  registerDataRoutes(api, ctx);
  const replaySource = { capture: core.capture, settings: captureCfg, now: realClock.now, log, norm: core.normCache };
  registerReplay(api, ctx, replaySource);
  let ws: WsHub | undefined;
  let metrics: Registry | undefined;
  if (domain) {
    registerMatching(api, ctx, domain.matching);
    registerSignals(api, ctx, domain.signals);
    registerSignalHistory(api, ctx, domain.history);
    registerFills(api, ctx, { ...replaySource, history: domain.history });
    registerAlerts(api, ctx, domain.ledger, domain.alerts);
    registerVenueB(api, ctx, domain.ledger);
    ws = buildHub(core, domain, http, api, opts.hub);
    const registry = registerMetrics(api, {
      state,
      feeds: opts.feeds ?? [],
      ws,
      persistence,
      ledger: domain.ledger,
      audit: domain.matching.audit,
      matching: domain.matching,
    });
    registerLifecycleMetrics(registry, domain.webhooks.dispatcher, domain.lifecycle);
    if (core.capture) registerCaptureMetrics(registry, core.capture);
    metrics = registry;
  }
  if (config.server.corsOrigins.length) http.cors = new Cors(config.server.corsOrigins);
  registerDashboard(http, opts.dashboardDir ?? dashboardDir(), API_BASE);
  return { http, api, ctx, ws, metrics };
}

/** The WebSocket hub at /api/v2/ws, its OpenAPI entry, and the 426 a plain GET of it gets. */
function buildHub(core: Core, domain: Domain, http: HttpServer, api: Api, opts: HubOptions | undefined): WsHub {
  const { matching } = domain;
  const ws = new WsHub(
    {
      http,
      path: `${API_BASE}/ws`,
      state: core.state,
      venues: core.venues,
      keys: core.keys,
      plans: core.plans,
      log: core.log,
      clock: core.clock,
      signals: domain.signals,
      alerts: true,
      games: gameLookup(matching, core.clock),
      replay: {
        config: core.config,
        source: { capture: core.capture, settings: captureSettings(core.config), now: () => core.clock.now() },
        maxConcurrent: core.config.websocket.replayMaxConcurrent,
        alerts: domain.alerts,
      },
    },
    {
      authTimeoutMs: core.config.websocket.authTimeoutMs,
      tokenTtlMs: core.config.websocket.tokenTtlSec * 1000,
      keyIds: { perSecond: core.config.websocket.keyIdsPerSecond, burst: core.config.websocket.keyIdsBurst },
      ...opts,
    },
  );
  registerWsToken(api, ws);
  // A plain GET of the WebSocket path (no Upgrade header falls through uWS's ws route to the router):
  // the access layer answers it like any route (401 without a good key), a keyed one learns to upgrade.
  api.route({
    path: '/ws',
    summary: 'WebSocket stream (a plain GET answers 426)',
    handler: () =>
      errorReply(426, 'upgrade_required', `${API_BASE}/ws is a WebSocket endpoint: connect with a WebSocket client (Connection: Upgrade, Upgrade: websocket)`),
  });
  const catalogVenue = core.venues.withCapability('catalog');
  api.component(WS_COMPONENTS);
  api.document(
    '/ws',
    wsPathItem(
      `${catalogVenue?.slug ?? 'venue_a'}_prices`,
      Object.values(core.plans).map((p) => `${p.name}: ${p.ws.connections} connections per key, ${p.ws.subscriptions} subscriptions per connection`),
    ),
  );
  return ws;
}

/**
 * Stops what buildCore and buildDomain made, once the input stopped (a service's feeds, an edge's
 * follow), the state first: its snapshot is what a restart restores, so it is written before the
 * capture's backlog and the history index's catch-up, which can take minutes at 108k markets on a
 * loaded host (and a supervisor's stop timeout may end the process before them). `outside` closes
 * what the caller opened beside them (links, simulators). Logs how long each part took.
 */
export async function stopBuilt(core: Core, domain: Domain, clock: Clock, more: { outside(): Promise<void> }): Promise<void> {
  const took: Record<string, number> = {};
  let t = clock.now();
  const part = async (name: string, run: () => Promise<unknown>): Promise<void> => {
    await run();
    const now = clock.now();
    took[name] = now - t;
    t = now;
  };
  await part('state', async () => {
    core.state.candles.flush(clock.now(), true);
    await core.persistence.snapshot(core.state);
  });
  await part('domain', async () => {
    domain.matching.close();
    await domain.alerts.close();
    await domain.ledger.close();
    core.keys.stop();
    await core.quota.stop();
  });
  // The feeds are stopped: what they captured is written (and indexed, its /replay lines too) and the segments closed.
  await part('history', async () => core.bookHistory?.close({ withinMs: captureSettings(core.config).historyCloseMs, clock }));
  await part('capture', async () => {
    await core.normCache?.close();
    await core.capture?.close();
  });
  await part('outside', () => more.outside());
  await part('store', () => core.persistence.close());
  core.log.info({ ms: took }, 'stopped');
}
