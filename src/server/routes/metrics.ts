import { z } from 'zod';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Api } from '../../access/api.js';
import { precisionOf, type SettlementAudit } from '../../matching/audit.js';
import type { MatchingService } from '../../matching/service.js';
import type { Persistence } from '../../persist/store.js';
import type { WalletLedger } from '../../signals/wallets.js';
import type { EngineState } from '../../state/engine.js';
import type { VenueFeed } from '../../venues/protocol.js';
import type { WsHub } from '../../ws/hub.js';

export interface MetricsSources {
  readonly state: EngineState;
  readonly feeds: readonly VenueFeed[];
  readonly ws: WsHub;
  readonly persistence: Persistence;
  readonly ledger?: WalletLedger;
  /** The matching service's settlement audit. */
  readonly audit?: SettlementAudit;
  /** The matching service: its backlog of catalog changes and its groups. */
  readonly matching?: Pick<MatchingService, 'pending' | 'drained' | 'slices' | 'groupCount'>;
}

/**
 * Sampling interval of the event-loop delay histogram, ms. Node's histogram records the whole
 * interval between samples, so the `nodejs_eventloop_lag_*` values include it: an idle loop
 * reads about 10 ms; the lag proper is the value minus this.
 */
export const EVENT_LOOP_RESOLUTION_MS = 10;

/**
 * GET /api/v2/metrics (key required): Prometheus text format, through prom-client. The process
 * metrics every Node exporter has (CPU seconds, resident memory, heap, GC, event-loop lag
 * percentiles as `nodejs_eventloop_lag_p99_seconds`…) plus crossbook's own: markets, WebSocket
 * connections and messages, per-venue frames, malformed frames, gaps and reconnects, persistence
 * write errors. Values are read at scrape time, so the hot paths pay nothing for them.
 * `crossbook bench` and `npm run soak` read CPU, RSS and event-loop lag from here.
 */
export function registerMetrics(api: Api, src: MetricsSources): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_RESOLUTION_MS });
  const registers = [registry];
  const gauge = (name: string, help: string, read: () => number): void => readGauge(registers, name, help, read);
  gauge('crossbook_markets', 'Markets in the catalog', () => src.state.catalog.size);
  gauge('crossbook_ws_connections', 'Open WebSocket connections', () => src.ws.connections());
  const ledger = src.ledger;
  if (ledger) {
    gauge('crossbook_wallets', 'Wallets the wallet ledger tracks', () => ledger.walletCount);
    gauge('crossbook_wallet_positions', 'Wallet positions held in memory (bounded by signals.wallets.maxPositions)', () => ledger.positionCount);
  }
  const counter = (name: string, help: string, read: () => number): void => totalCounter(registers, name, help, read);
  if (src.audit) auditGauges(registers, src.audit);
  const matching = src.matching;
  if (matching) {
    gauge(
      'crossbook_matching_pending_upserts',
      'Catalog changes queued for the matcher, indexed a slice per event-loop turn (a large catalog document catches up over many turns)',
      () => matching.pending,
    );
    gauge('crossbook_matching_groups', 'Cross-venue match groups served', () => matching.groupCount);
    counter('crossbook_matching_indexed_total', 'Catalog changes the matcher indexed from its queue', () => matching.drained);
    counter('crossbook_matching_slices_total', 'Slices (turns) in which the matcher indexed queued catalog changes', () => matching.slices);
  }
  counter('crossbook_ws_published_total', 'WebSocket messages published (once per topic, before fan-out)', () => src.ws.published);
  counter('crossbook_ws_dropped_clients_total', 'WebSocket clients disconnected for backpressure', () => src.ws.dropped);
  if (ledger) counter('crossbook_wallet_positions_evicted_total', 'Wallet positions evicted past signals.wallets.maxPositions', () => ledger.evictedPositions);
  counter('crossbook_persistence_write_errors_total', 'Failed LMDB writes (full disk, read-only DATA_DIR)', () => src.persistence.writeErrors);
  const perVenue = (name: string, help: string, read: (f: VenueFeed) => number): void => {
    const last = new Map<string, number>();
    new Counter({
      name,
      help,
      labelNames: ['venue'],
      registers,
      collect() {
        for (const f of src.feeds) {
          const v = read(f);
          const prev = last.get(f.venue.slug) ?? 0;
          if (v > prev) this.inc({ venue: f.venue.slug }, v - prev);
          last.set(f.venue.slug, v);
        }
      },
    });
  };
  perVenue('crossbook_feed_frames_total', 'Frames received from a venue', (f) => f.stats.frames);
  perVenue('crossbook_feed_malformed_frames_total', 'Malformed venue frames dropped', (f) => f.stats.malformedTotal);
  perVenue('crossbook_feed_gaps_total', 'Sequence gaps and book integrity failures (each triggers a resync)', (f) => f.stats.gaps);
  perVenue('crossbook_feed_reconnects_total', 'Venue reconnects', (f) => f.stats.reconnects);

  api.route({
    path: '/metrics',
    summary: 'Prometheus metrics: process (CPU, memory, event-loop lag, GC) and crossbook (markets, WebSocket, feeds, persistence)',
    description: 'Text exposition format 0.0.4. Needs a key like every route but /status and /openapi.json; scrape with an X-API-Key header.',
    tags: ['status'],
    responseDescription: 'Prometheus text exposition format 0.0.4',
    contentType: 'text/plain',
    response: z.string().describe('text/plain; version=0.0.4; charset=utf-8'),
    handler: async () => ({ status: 200, body: await registry.metrics(), contentType: registry.contentType }),
  });
  return registry;
}

/**
 * The settlement audit's figures: judged pairs by verdict, category and venue pair (gauges: they
 * survive restarts and a corrected settlement can move a pair between verdicts), pairs and groups
 * waiting for a partner to settle, suspect groups, and the precision they measure.
 */
function auditGauges(registers: Registry[], audit: SettlementAudit): void {
  new Gauge({
    name: 'crossbook_matching_settlement_pairs',
    help: 'Pairs of grouped markets judged by their settlements (verdict agree, contradict or void), or pending a partner',
    labelNames: ['verdict', 'category', 'venues'],
    registers,
    collect() {
      this.reset();
      for (const r of audit.rows()) {
        const labels = { category: r.category ?? '', venues: r.venues.map(audit.slugOf).sort().join(',') };
        for (const verdict of ['agree', 'contradict', 'void', 'pending'] as const) this.set({ ...labels, verdict }, r.tally[verdict]);
      }
    },
  });
  readGauge(
    registers,
    'crossbook_matching_suspect_groups',
    'Match groups whose members settled inconsistently (no arb/EV is computed from them)',
    () => audit.totals().suspectGroups,
  );
  readGauge(
    registers,
    'crossbook_matching_settlement_pending_groups',
    'Match groups with a settled member waiting for another to settle',
    () => audit.totals().pendingGroups,
  );
  new Gauge({
    name: 'crossbook_matching_settlement_precision',
    help: 'Settled pairs that agreed over those that agreed or contradicted (absent before any)',
    registers,
    collect() {
      this.reset();
      const p = precisionOf(audit.totals());
      if (p !== null) this.set(p);
    },
  });
}

/** A Prometheus gauge that reads its value with `read` at scrape time. */
export function readGauge(registers: Registry[], name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers,
    collect() {
      this.set(read());
    },
  });
}

/** A Prometheus counter that follows a running total `read` at scrape time (it only ever grows). */
export function totalCounter(registers: Registry[], name: string, help: string, read: () => number): void {
  let last = 0;
  new Counter({
    name,
    help,
    registers,
    collect() {
      const v = read();
      if (v > last) this.inc(v - last);
      last = v;
    },
  });
}
