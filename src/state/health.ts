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
  lastError?: string | undefined;
}

/** Tracks every venue's health from the events its feed emits. */
export class HealthStore {
  readonly venues = new Map<VenueLabel, VenueHealth>();

  constructor(labels: readonly VenueLabel[]) {
    for (const venue of labels) this.venues.set(venue, { venue, connected: false, lastEventAt: 0, lastCatalogAt: 0, disconnects: 0, gaps: 0 });
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
    switch (ev.state) {
      case 'connected':
      case 'resynced':
        h.connected = true;
        break;
      case 'disconnected':
      case 'stalled':
        h.connected = false;
        h.disconnects++;
        break;
      case 'gap':
        h.gaps++;
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
}
