import { keyFlow } from '../../pipelines/fanout.js';
import { followFlow } from '../../pipelines/follow.js';
import { startPipelines } from '../../pipelines/index.js';
import { persistenceOptions } from '../../pipelines/persistence.js';
import { replicateAccess } from '../../pipelines/replicate.js';
import { openAccessBuckets } from './access.js';
import { LinkHealth } from './health.js';
import { registerLinkMetrics } from './metrics.js';
import { buildCore, buildDomain, buildHttp, stopBuilt } from '../compose.js';
import type { Config } from '../config/schema.js';
import { wallClock, type Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { Service } from '../service.js';
import { clusterSettings, getSnapshot, openLink, streamReplay } from './link.js';
import { restoreSnapshot } from './snapshot.js';

/**
 * A cluster edge: no feeds. Bootstraps its state, the hub's epoch and the last seq of every topic
 * from the core's snapshot, then follows the stream from the message after it (pipelines/follow.ts):
 * REST answers from the followed state, the WebSocket sends the core's publications with the core's
 * numbers, and a client's `resume` is answered from the stream's window. Signals, wallets and
 * alerts are derived here from the followed state for REST; webhooks are the core's to deliver.
 */
export async function startEdge(config: Config, opts: { log?: Logger; listen?: boolean; clock?: Clock } = {}): Promise<Service> {
  const clock = opts.clock ?? wallClock();
  const startedAt = Date.now();
  const settings = clusterSettings(config);
  const link = await openLink(settings);
  const snap = await getSnapshot(link, settings.bootstrapTimeoutMs);
  const core = buildCore(config, { log: opts.log, clock });
  restoreSnapshot(core.state, snap);
  core.log.info({ streamSeq: snap.streamSeq, markets: snap.catalog.length, epoch: snap.epoch }, 'edge: bootstrapped from the core snapshot');
  const domain = buildDomain(core);
  const health = new LinkHealth(snap.epoch, snap.streamSeq, clock.now());
  const { http, api, ws, metrics } = buildHttp(core, domain, {
    startedAt,
    hub: { epoch: snap.epoch, replay: streamReplay(link) },
    cluster: () => health.status(),
  });
  const hub = ws!;
  hub.adoptSeqs(snap.seqs);
  if (metrics) registerLinkMetrics(metrics, health);
  const ingest = followFlow(link, snap, {
    state: core.state,
    hub,
    health,
    log: core.log,
    venues: config.venues.filter((v) => v.enabled).map((v) => v.label),
    bootstrapTimeoutMs: settings.bootstrapTimeoutMs,
    clock,
  });
  const flows = startPipelines({
    state: core.state,
    ingest,
    persistence: core.persistence,
    persistenceOptions: persistenceOptions(config),
    rooms: { ...domain, webhooks: undefined },
    log: core.log,
    clock,
  });
  // The edge's hub is fed by the follow flow, not the fan-out: the key flow is wired on its own.
  flows.add(keyFlow(core.keys, hub));
  core.keys.watch();
  core.quota.start();
  const access = replicateAccess(await openAccessBuckets(link), core.keys, core.quota, { log: core.log });
  const port = opts.listen === false ? 0 : await http.listen(config.server.host, config.server.port, config.server.front);
  const url = config.server.baseUrl ?? `http://${config.server.host}:${port}`;
  api.serveOpenapi(`${url}/api/v2`);
  let closed = false;
  return {
    ...core,
    ...domain,
    http,
    api,
    ws: hub,
    ingest,
    sim: undefined,
    port,
    url,
    demoKey: undefined,
    async close() {
      if (closed) return;
      closed = true;
      hub.close();
      http.close();
      flows.unsubscribe();
      await stopBuilt(core, domain, clock, {
        async outside() {
          await access.close();
          await link.close().catch(() => undefined);
        },
      });
    },
  };
}
