import type { FeedEvent, VenueLabel } from '../core/types.js';

/** What we know of a venue feed's health, for /status and WebSocket warnings. */
export interface VenueHealth {
  readonly venue: VenueLabel;
  connected: boolean;
  /** Last frame-derived event (ms), 0 = never. */
  lastEventAt: number;
  /** Last successful catalog refresh (ms), 0 = never. */
  lastCatalogAt: number;
  disconnects: number;
  gaps: number;
  /** Instruments (or '*') whose books a gap reset and no resync has restored yet → when. */
  readonly resyncing: Map<string, number>;
  /** Malformed frames dropped so far, and when the count last grew (ms, 0 = never). */
  malformed: number;
  malformedAt: number;
  /** Malformed frames arrived within the last MALFORMED_QUIET_MS. */
  garbage: boolean;
  /** The last disconnect, stall, gap or burst of malformed frames, and when (local ms). */
  lastInterruption?: { readonly kind: 'disconnected' | 'stalled' | 'gap' | 'malformed'; readonly at: number } | undefined;
  /** What the feed last reported (connected, disconnected, stalled, gap, resynced, …). */
  lastState?: FeedEvent['state'] | undefined;
  lastError?: string | undefined;
}

/** A venue stays degraded until it has sent no malformed frame for this long. */
export const MALFORMED_QUIET_MS = 10_000;
/** How long a gap without a matching resync keeps a venue degraded. */
const RESYNC_MAX_MS = 60_000;

/** Tracks every venue's health from the events its feed emits. */
export class HealthStore {
  readonly venues = new Map<VenueLabel, VenueHealth>();

  constructor(labels: readonly VenueLabel[]) {
    for (const venue of labels)
      this.venues.set(venue, {
        venue,
        connected: false,
        lastEventAt: 0,
        lastCatalogAt: 0,
        disconnects: 0,
        gaps: 0,
        resyncing: new Map(),
        malformed: 0,
        malformedAt: 0,
        garbage: false,
      });
  }

  get(venue: VenueLabel): VenueHealth | undefined {
    return this.venues.get(venue);
  }

  seen(venue: VenueLabel, ts: number): void {
    const h = this.venues.get(venue);
    if (h && ts > h.lastEventAt) h.lastEventAt = ts;
  }

  feed(ev: FeedEvent): void {
    const h = this.venues.get(ev.venue);
    if (!h) return;
    if (ev.state !== 'catalog' && ev.state !== 'error') h.lastState = ev.state;
    switch (ev.state) {
      case 'connected':
      case 'resynced':
        h.connected = true;
        if (ev.instrument && ev.state === 'resynced') h.resyncing.delete(ev.instrument);
        else h.resyncing.clear();
        break;
      case 'disconnected':
      case 'stalled': {
        // A stall is followed by the close of that socket: one outage, counted once, named by its cause.
        const sameOutage = !h.connected && (h.lastInterruption?.kind === 'stalled' || h.lastInterruption?.kind === 'disconnected');
        h.connected = false;
        if (sameOutage) break;
        h.disconnects++;
        h.lastInterruption = { kind: ev.state, at: ev.localTimestamp };
        break;
      }
      case 'gap':
        h.gaps++;
        h.lastInterruption = { kind: 'gap', at: ev.localTimestamp };
        h.resyncing.set(ev.instrument ?? '*', ev.localTimestamp);
        break;
      case 'error':
        h.lastError = ev.detail;
        break;
      case 'catalog':
        h.lastCatalogAt = ev.localTimestamp;
        h.connected = true;
        break;
    }
  }

  /**
   * Follows a feed's malformed-frame count (FeedStats.malformedTotal), called about once a second:
   * 'degraded' when malformed frames start arriving, 'recovered' once none came for
   * MALFORMED_QUIET_MS, undefined when nothing changed.
   */
  checkMalformed(venue: VenueLabel, total: number, now: number): 'degraded' | 'recovered' | undefined {
    const h = this.venues.get(venue);
    if (!h) return undefined;
    if (total > h.malformed) {
      h.malformed = total;
      h.malformedAt = now;
      if (!h.garbage) {
        h.garbage = true;
        h.lastInterruption = { kind: 'malformed', at: now };
        return 'degraded';
      }
    } else if (h.garbage && now - h.malformedAt >= MALFORMED_QUIET_MS) {
      h.garbage = false;
      return 'recovered';
    }
    return undefined;
  }

  /**
   * The malformed-frame rule as a feed event: `degraded` when a venue's malformed count grew,
   * `recovered` once it has been quiet for MALFORMED_QUIET_MS; undefined while nothing changes.
   */
  malformedEvent(venue: VenueLabel, total: number, now: number): FeedEvent | undefined {
    const change = this.checkMalformed(venue, total, now);
    if (!change) return undefined;
    const detail = change === 'degraded' ? `malformed frames (${total} dropped so far)` : `no malformed frames for ${MALFORMED_QUIET_MS / 1000} s`;
    return { type: 'feed', venue, state: change, detail, timestamp: now, localTimestamp: now };
  }

  /** ok, degraded (resyncing after a gap, or malformed frames arriving) or down (not connected). */
  feedStatus(h: VenueHealth, healthy: boolean, now: number): { status: 'ok' | 'degraded' | 'down'; issue: string | null } {
    if (!healthy) {
      const why = !h.connected ? (h.lastState === 'stalled' ? 'stalled: no frames from the venue' : 'disconnected') : 'no recent data from the venue';
      return { status: 'down', issue: why };
    }
    // A resync that never reports back (a subscription-wide gap) stops counting after RESYNC_MAX_MS.
    for (const [k, at] of h.resyncing) if (now - at > RESYNC_MAX_MS) h.resyncing.delete(k);
    if (h.resyncing.size > 0) return { status: 'degraded', issue: `sequence gap: ${h.resyncing.size} book(s) resyncing` };
    if (h.garbage) return { status: 'degraded', issue: `malformed frames arriving (${h.malformed} dropped so far)` };
    return { status: 'ok', issue: null };
  }
}
