import type { Config } from '../../config/schema.js';
import { isLive } from '../../state/catalog.js';
import type { EngineState } from '../../state/engine.js';
import type { Api } from '../../access/api.js';
import type { Reply } from '../http.js';
import type { ClusterStatus } from '../../cluster/health.js';
import { z } from 'zod';

const iso = (description: string) => z.string().meta({ format: 'date-time' }).nullable().describe(description);

/** The /status body (spec 4.1, 2.13): the schema of the OpenAPI document. */
export const StatusBody = z.object({
  status: z.enum(['ok', 'degraded', 'unknown']).describe('ok: a strict majority of venues live; degraded; unknown (HTTP 503): nothing known yet'),
  platforms: z.record(
    z.string().describe('venue slug'),
    z.object({
      active_markets: z.number().int().describe('all markets ever ingested'),
      live_markets: z.number().int().describe('active markets not past their close time'),
      feed_healthy: z.boolean().describe('the feed is connected (or polling successfully) and recent'),
      catalog_refreshed_at: iso('last successful catalog refresh; null before the first'),
      catalog_healthy: z.boolean(),
      feed_status: z.enum(['ok', 'degraded', 'down']),
      feed_issue: z.string().nullable().describe('why the feed is not ok; null when it is'),
      disconnects: z.number().int().describe('disconnects and stalls since start'),
      gaps: z.number().int().describe('sequence gaps since start'),
      malformed_frames: z.number().int().describe('malformed frames dropped since start'),
      last_interruption: z
        .object({ kind: z.string(), at: z.string().meta({ format: 'date-time' }) })
        .nullable()
        .describe('the last disconnect, stall, gap or burst of malformed frames; null when none'),
      status: z
        .enum(['ok', 'stale'])
        .describe(
          'the venue at a glance, in the vocabulary clients of the hosted API read: ok when the feed is ok and the catalog refresh is on time, else stale (feed_status and catalog_healthy say why)',
        ),
      last_updated: iso('newer of the last venue frame and the last catalog refresh; null before either (spec 2.13)'),
    }),
  ),
  last_updated: iso('newer of the latest matched-market price update and the last catalog refresh'),
  persistence: z
    .object({
      status: z.enum(['ok', 'degraded']),
      writable: z.boolean().describe('false when serving from a temporary copy because DATA_DIR is read-only'),
      write_errors: z.number().int(),
      last_error: z.string().nullable(),
    })
    .optional(),
  capture: z
    .object({
      status: z.enum(['ok', 'paused']).describe('paused: the disk is nearly full and new frames are not kept (the service keeps serving)'),
      bytes: z.number().int().describe('bytes of capture segments on disk, after retention'),
      lag: z.number().int().describe('captured records waiting to be written'),
      drops: z.number().int().describe('records not kept since start (capture paused, its buffer full, a failed write)'),
      reason: z.string().nullable().describe('why capture is paused; null when it is not'),
    })
    .optional()
    .describe('the capture log (DATA_DIR/capture); absent when capture.enabled is false'),
  history: z
    .object({
      status: z
        .enum(['ok', 'stopped'])
        .describe('stopped: the index behind as_of reads stopped following the capture (as_of reads answer 503 as_of.index_stopped)'),
      reason: z.string().nullable().describe('why it stopped (a memory bound passed, or its thread died); null while it runs'),
      indexed_to: z.number().int().describe('receive time (ms) up to which every captured record is indexed'),
      slices: z.number().int().describe('history slice files on disk'),
    })
    .optional()
    .describe('the history index behind as_of reads, on its own thread; absent when capture or capture.history is off'),
  cluster: z
    .object({
      role: z.literal('edge'),
      link: z
        .enum(['following', 'interrupted', 'resyncing'])
        .describe(
          'following: the core stream arrives; interrupted: NATS unreachable or the stream silent for 3 s (the last state is served); resyncing: starting again from a core snapshot',
        ),
      nats_connected: z.boolean(),
      epoch: z.number().int().describe("the core's epoch this edge follows"),
      stream_seq: z.number().int().describe('stream sequence of the last message applied'),
      last_message_at: iso('when the last stream message arrived'),
      interruptions: z.number().int().describe('link interruptions since start'),
      rebootstraps: z.number().int().describe('times the edge started again from a snapshot (a gap in the stream, or a new core) since start'),
    })
    .optional()
    .describe('a cluster edge only: its link to the core'),
});

export interface PlatformStatus {
  /** All markets ever ingested (spec 2.13). */
  readonly active_markets: number;
  /** Active markets not past their close time. */
  readonly live_markets: number;
  /** The feed is connected (or polling successfully) and recent. */
  readonly feed_healthy: boolean;
  /** Last successful catalog refresh, ISO 8601, null before the first. */
  readonly catalog_refreshed_at: string | null;
  readonly catalog_healthy: boolean;
  /** ok; degraded: books resyncing after a sequence gap, or malformed frames arriving; down: not connected or silent. */
  readonly feed_status: 'ok' | 'degraded' | 'down';
  /** Why the feed is not ok, null when it is. */
  readonly feed_issue: string | null;
  /** Since start: disconnects (and stalls), sequence gaps, malformed frames dropped. */
  readonly disconnects: number;
  readonly gaps: number;
  readonly malformed_frames: number;
  /** The last disconnect, stall, sequence gap or burst of malformed frames, null when none since start. */
  readonly last_interruption: { readonly kind: string; readonly at: string } | null;
  /** ok when the feed is ok and the catalog refresh on time, else stale (the hosted API's vocabulary). */
  readonly status: 'ok' | 'stale';
  /** Newer of the last venue frame and the last catalog refresh, ISO 8601; null before either. */
  readonly last_updated: string | null;
}

export interface PersistenceStatus {
  /** degraded: writes are failing (full disk) or DATA_DIR could not be written at start. */
  readonly status: 'ok' | 'degraded';
  /** false when serving from a temporary copy because DATA_DIR is read-only. */
  readonly writable: boolean;
  readonly write_errors: number;
  readonly last_error: string | null;
}

export interface StatusRecord {
  readonly status: 'ok' | 'degraded' | 'unknown';
  readonly platforms: Record<string, PlatformStatus>;
  readonly last_updated: string | null;
  readonly persistence?: PersistenceStatus;
  readonly cluster?: ClusterStatus;
  readonly capture?: CaptureStatus;
  readonly history?: HistoryStatus;
}

/** The history index on /status. */
export interface HistoryStatus {
  readonly status: 'ok' | 'stopped';
  readonly reason: string | null;
  readonly indexed_to: number;
  readonly slices: number;
}

/** The capture log on /status. */
export interface CaptureStatus {
  readonly status: 'ok' | 'paused';
  readonly bytes: number;
  readonly lag: number;
  readonly drops: number;
  readonly reason: string | null;
}

/**
 * Spec 4.1: ok when a strict majority of venues have live markets (counted only while the venue's
 * feed is healthy: markets restored from disk do not make a disconnected venue "live");
 * degraded when that majority is lost or any catalog refresh is older than the venue's
 * `freshness.catalogMaxAgeSec` (after a start-up grace of the same length); unknown (HTTP 503) when
 * nothing is known yet: no market in the catalog and no feed has reported.
 */
export function computeStatus(config: Config, state: EngineState, now: number, startedAt: number, matchedPriceAt = 0): StatusRecord {
  const platforms: Record<string, PlatformStatus> = {};
  let withLive = 0;
  let catalogUnhealthy = false;
  let anyReport = false;
  let lastCatalog = 0;
  const venues = config.venues.filter((v) => v.enabled);
  for (const v of venues) {
    const h = state.health.get(v.label);
    let total = 0;
    let live = 0;
    for (const m of state.catalog.venue(v.label).values()) {
      total++;
      if (isLive(m, now)) live++;
    }
    const lastCatalogAt = h?.lastCatalogAt ?? 0;
    const lastEventAt = h?.lastEventAt ?? 0;
    if (lastCatalogAt > 0 || lastEventAt > 0) anyReport = true;
    if (lastCatalogAt > lastCatalog) lastCatalog = lastCatalogAt;
    const maxAge = v.freshness.catalogMaxAgeSec * 1000;
    const catalogHealthy = lastCatalogAt > 0 ? now - lastCatalogAt <= maxAge : now - startedAt <= maxAge;
    if (!catalogHealthy) catalogUnhealthy = true;
    const recent = Math.max(lastEventAt, lastCatalogAt) > 0 && now - Math.max(lastEventAt, lastCatalogAt) <= v.freshness.quoteMaxAgeSec * 1000;
    const feedHealthy = (h?.connected ?? false) && recent;
    if (feedHealthy && live > 0) withLive++;
    const feed = h ? state.health.feedStatus(h, feedHealthy, now) : { status: 'down' as const, issue: 'no feed' };
    platforms[v.slug] = {
      active_markets: total,
      live_markets: live,
      feed_healthy: feedHealthy,
      catalog_refreshed_at: lastCatalogAt > 0 ? new Date(lastCatalogAt).toISOString() : null,
      catalog_healthy: catalogHealthy,
      feed_status: feed.status,
      feed_issue: feed.issue,
      disconnects: h?.disconnects ?? 0,
      gaps: h?.gaps ?? 0,
      malformed_frames: h?.malformed ?? 0,
      last_interruption: h?.lastInterruption ? { kind: h.lastInterruption.kind, at: new Date(h.lastInterruption.at).toISOString() } : null,
      status: feed.status === 'ok' && catalogHealthy ? 'ok' : 'stale',
      last_updated: Math.max(lastEventAt, lastCatalogAt) > 0 ? new Date(Math.max(lastEventAt, lastCatalogAt)).toISOString() : null,
    };
  }
  // The newer of the latest matched-market price update and the last catalog refresh (spec 4.1).
  const lastUpdated = Math.max(matchedPriceAt, lastCatalog);
  if (!anyReport && state.catalog.size === 0) return { status: 'unknown', platforms, last_updated: null };
  const majority = withLive * 2 > venues.length;
  return {
    status: majority && !catalogUnhealthy ? 'ok' : 'degraded',
    platforms,
    last_updated: lastUpdated > 0 ? new Date(lastUpdated).toISOString() : null,
  };
}

/** Adds an edge's link to the body; a link that is not following makes an ok status degraded. */
function withLink(s: StatusRecord, link: ClusterStatus): void {
  const w = s as { status: StatusRecord['status']; cluster?: ClusterStatus };
  w.cluster = link;
  if (link.link !== 'following' && w.status === 'ok') w.status = 'degraded';
}

/** What /status reads. */
export interface StatusSources {
  readonly config: Config;
  readonly state: EngineState;
  /** Process start (ms), for uptime. */
  readonly startedAt: number;
  /** Rebuild the body at most this often (default 100 ms). */
  readonly cacheMs?: number;
  readonly persistence?: (() => PersistenceStatus) | undefined;
  /** Newest price update of a matched market (ms): the matching service's lastMatchedPriceAt. */
  readonly matchedPriceAt?: (() => number) | undefined;
  /** A cluster edge's link to the core: an interrupted or resyncing link makes the status degraded. */
  readonly cluster?: (() => ClusterStatus) | undefined;
  /** The capture log's figures (absent: capture off). */
  readonly capture?: (() => CaptureStatus) | undefined;
  /** The history index's figures (absent: it is off). */
  readonly history?: (() => HistoryStatus) | undefined;
}

/**
 * GET /api/v2/status (no key). The body is rebuilt at most every `cacheMs`: it changes with every
 * quote (last_updated), and rebuilding it per request would cost more than serving it.
 */
export function registerStatus(api: Api, src: StatusSources): void {
  const { config, state, startedAt, cacheMs = 100, persistence, matchedPriceAt = () => 0, cluster, capture, history } = src;
  let cached: Reply | undefined;
  let cachedAt = 0;
  api.route({
    path: '/status',
    summary: 'Service health and per-venue market counts',
    description:
      'No key needed. ok when a strict majority of venues have live markets; degraded when that majority is lost or a catalog refresh is stale; HTTP 503 with status unknown when health cannot be determined. Per platform, feed_status is ok, degraded (books resyncing after a sequence gap, or malformed frames arriving; feed_issue says which) or down (disconnected, stalled or silent), with disconnects, gaps and malformed_frames since start. last_updated is the newer of the latest price update of a matched market (one in a cross-venue group) and the last successful catalog refresh; it does not mean every market has a current quote. persistence: ok, or degraded when writes fail (full disk) or DATA_DIR was not writable at start (writable=false: serving from a temporary copy). capture: the capture log, its bytes on disk, lag (records waiting to be written) and drops; paused while the disk is nearly full. history: the index behind as_of reads, stopped (with the reason) when a bound passed or its thread died. cluster (an edge only): its link to the core; an edge whose link is interrupted or resyncing serves its last state and says degraded.',
    tags: ['status'],
    auth: false,
    response: StatusBody,
    errors: { 503: { description: 'Health cannot be determined yet (status unknown)', schema: StatusBody } },
    handler: () => {
      const now = Date.now();
      if (!cached || now - cachedAt >= cacheMs) {
        const s = computeStatus(config, state, now, startedAt, matchedPriceAt());
        if (persistence) (s as { persistence?: PersistenceStatus }).persistence = persistence();
        if (cluster) withLink(s, cluster());
        if (capture) (s as { capture?: CaptureStatus }).capture = capture();
        if (history) (s as { history?: HistoryStatus }).history = history();
        cached = { status: s.status === 'unknown' ? 503 : 200, body: JSON.stringify(s) };
        cachedAt = now;
      }
      return cached;
    },
  });
}
