import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFeeds, ingestFlow, liveEndpoints, type Ingest } from '../pipelines/ingest.js';
import { startPipelines } from '../pipelines/index.js';
import { persistenceOptions } from '../pipelines/persistence.js';
import { publishFlow } from '../pipelines/publish.js';
import { replicateAccess } from '../pipelines/replicate.js';
import { captureSettings } from './capture/index.js';
import { openAccessBuckets } from './cluster/access.js';
import { registerPublisherMetrics } from './cluster/metrics.js';
import type { Api } from './access/api.js';
import { startEdge } from './cluster/edge.js';
import { clusterSettings, openLink } from './cluster/link.js';
import type { KeyStore } from './access/keys.js';
import { API_BASE, buildCore, buildDomain, buildHttp, stopBuilt, type Core, type Domain } from './compose.js';
import type { Config } from './config/schema.js';
import { wallClock, type Clock } from './core/clock.js';
import { log as rootLog, type Logger } from './core/log.js';
import type { ReplayTap } from './replay/input.js';
import type { HttpServer } from './server/http.js';
import { startSimChild, type SimChild } from './sim/child.js';
import { startSim, type RunningSim } from './sim/runner.js';
import type { FeedEndpoints } from './venues/protocol.js';
import type { WsHub } from './ws/hub.js';

export { API_BASE };

/** A running crossbook: state, ingest, persistence and the HTTP server. */
export interface Service extends Core, Domain {
  readonly http: HttpServer;
  readonly api: Api;
  readonly ws: WsHub;
  readonly ingest: Ingest;
  /** The simulator with its world object, when it runs inside the service (`sim.process` inline). */
  readonly sim: RunningSim | undefined;
  /** The simulator's child process (`sim.process` child, the default). */
  readonly simChild?: SimChild | undefined;
  readonly port: number;
  /** http://host:port */
  readonly url: string;
  /** The demo key (embedded default only), created once and kept in DATA_DIR/demo-key. */
  readonly demoKey: string | undefined;
  close(): Promise<void>;
}

export interface ServiceOptions {
  readonly log?: Logger;
  readonly listen?: boolean;
  /** The engine's clock (default: wall time, in steps: src/core/clock.ts `wallClock`). */
  readonly clock?: Clock;
  /** Told every event as it is applied and every time the turn flushes: what a replay needs to run the same (src/replay/). */
  readonly tap?: ReplayTap;
}

/**
 * The process: builds the core, the domain and the HTTP layer (src/compose.ts), starts the embedded
 * simulator when a venue is in sim mode, wires the pipelines (pipelines/index.ts) and listens.
 * close() stops in the reverse order and snapshots everything. Config `cluster.role` core adds the
 * publisher to NATS JetStream (pipelines/publish.ts); edge starts a follower instead (src/cluster/edge.ts).
 */
export async function startService(config: Config, opts: ServiceOptions = {}): Promise<Service> {
  if (config.cluster?.role === 'edge') return startEdge(config, opts);
  const startedAt = Date.now();
  const clock = opts.clock ?? wallClock();
  const cluster = config.cluster?.role === 'core' ? clusterSettings(config) : undefined;
  const link = cluster ? await openLink(cluster) : undefined;
  const needsSim = config.venues.some((v) => v.enabled && v.connection.mode === 'sim');
  if (needsSim && !config.sim.embedded)
    throw new Error('venues in sim mode need sim.embedded=true (or run `crossbook sim` and set them to live mode with its URLs)');
  // The child builds its world while this process restores its state.
  const childStarting = needsSim && config.sim.process === 'child' ? startSimChild(config, { log: opts.log ?? rootLog }) : undefined;
  childStarting?.catch(() => undefined);
  let core: Core, domain: Domain;
  try {
    core = buildCore(config, { log: opts.log, clock });
    domain = buildDomain(core);
  } catch (e) {
    void childStarting?.then(
      (c) => c.close(),
      () => undefined,
    );
    throw e;
  }
  let sim: RunningSim | undefined;
  let simChild: SimChild | undefined;
  try {
    simChild = await childStarting;
    sim = needsSim && !simChild ? await startSim(config) : undefined;
  } catch (e) {
    await closeBuilt(core, domain);
    throw e;
  }
  const simEndpoints = (label: string): FeedEndpoints => (simChild ?? sim)!.endpoints(label)!;
  const feeds = createFeeds(config, (v) => (v.connection.mode === 'sim' ? simEndpoints(v.label) : liveEndpoints(v)), core.log, clock, core.capture);
  const ingest = ingestFlow(feeds, core.state, core.log, clock);
  // A recorder sees every event as it is applied (before the flows), and where the turn flushes.
  const tapped = opts.tap && ingest.events$.subscribe((ev) => opts.tap!.event(ev));
  const { http, api, ws, metrics } = buildHttp(core, domain, { startedAt, feeds, hub: { exportAll: link !== undefined } });
  // The publisher subscribes before ingest starts, so the stream misses nothing.
  const published =
    link &&
    publishFlow(link, ingest.events$, ws!, core.state, {
      snapshotIntervalMs: cluster!.snapshotIntervalMs,
      log: core.log,
      buffer: cluster!.publishBuffer,
      clock,
    });
  if (published && metrics) registerPublisherMetrics(metrics, published.publisher.stats);
  const flows = startPipelines({
    state: core.state,
    ingest,
    persistence: core.persistence,
    persistenceOptions: persistenceOptions(config),
    rooms: domain,
    hub: ws,
    keys: core.keys,
    log: core.log,
    capture: core.capture && { capture: core.capture, settings: captureSettings(config), history: core.bookHistory },
    clock,
    flushed: opts.tap && ((at) => opts.tap!.flush(at)),
    wired: opts.tap?.start && ((at) => opts.tap!.start!(at)),
  });
  core.keys.watch();
  core.quota.start();
  const access = link && replicateAccess(await openAccessBuckets(link), core.keys, core.quota, { log: core.log });
  const demoKey = needsSim ? ensureDemoKey(core.persistence.dir, core.keys) : undefined;
  const port = opts.listen === false ? 0 : await http.listen(config.server.host, config.server.port, config.server.front);
  const url = config.server.baseUrl ?? `http://${config.server.host}:${port}`;
  api.serveOpenapi(`${url}${API_BASE}`);

  let closed = false;
  return {
    ...core,
    ...domain,
    http,
    api,
    ws: ws!,
    ingest,
    sim,
    simChild,
    port,
    url,
    demoKey,
    async close() {
      if (closed) return;
      closed = true;
      ws?.close();
      http.close();
      flows.unsubscribe();
      tapped?.unsubscribe();
      published?.subscription.unsubscribe();
      await stopBuilt(core, domain, clock, {
        async outside() {
          await access?.close();
          await link?.close().catch(() => undefined);
          await sim?.close();
          await simChild?.close();
        },
      });
    },
  };
}

/** Releases what buildCore and buildDomain opened, when startup fails before anything else started. */
async function closeBuilt(core: Core, domain: Domain): Promise<void> {
  await core.capture?.close();
  domain.matching.close();
  await domain.alerts.close();
  await domain.ledger.close();
  await core.persistence.close();
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
