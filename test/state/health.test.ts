import { describe, expect, it } from 'vitest';
import type { FeedEvent } from '../../src/core/types.js';
import { HealthStore, MALFORMED_QUIET_MS } from '../../src/state/health.js';

const T = 1_800_000_000_000;
const ev = (state: FeedEvent['state'], instrument?: string, at = T): FeedEvent => ({
  type: 'feed',
  venue: 'venue_a',
  state,
  instrument,
  timestamp: at,
  localTimestamp: at,
});

describe('HealthStore: what /status says of a feed', () => {
  it('down while disconnected or stalled, degraded while gapped books resync, ok after', () => {
    const h = new HealthStore(['venue_a']);
    const v = h.get('venue_a')!;
    expect(h.feedStatus(v, false, T)).toEqual({ status: 'down', issue: 'disconnected' });
    h.feed(ev('connected'));
    expect(h.feedStatus(v, true, T)).toEqual({ status: 'ok', issue: null });
    h.feed(ev('gap', 'KX-1'));
    h.feed(ev('gap', 'KX-2'));
    expect(h.feedStatus(v, true, T)).toMatchObject({ status: 'degraded', issue: 'sequence gap: 2 book(s) resyncing' });
    h.feed(ev('resynced', 'KX-1'));
    expect(h.feedStatus(v, true, T).status).toBe('degraded');
    h.feed(ev('resynced', 'KX-2'));
    expect(h.feedStatus(v, true, T).status).toBe('ok');
    // a subscription-wide gap that never reports its resync stops counting after a minute
    h.feed(ev('gap', 'sid:3'));
    expect(h.feedStatus(v, true, T + 1000).status).toBe('degraded');
    expect(h.feedStatus(v, true, T + 61_000).status).toBe('ok');
    h.feed(ev('stalled', undefined, T + 100));
    expect(h.feedStatus(v, false, T)).toEqual({ status: 'down', issue: 'stalled: no frames from the venue' });
    h.feed(ev('disconnected', undefined, T + 200)); // the stalled socket closing: the same outage
    expect(v.disconnects).toBe(1);
    expect(v.lastInterruption).toEqual({ kind: 'stalled', at: T + 100 });
    h.feed(ev('connected'));
    h.feed(ev('disconnected', undefined, T + 300));
    expect(v.disconnects).toBe(2);
    expect(v.lastInterruption).toEqual({ kind: 'disconnected', at: T + 300 });
    expect(v.gaps).toBe(3);
  });

  it('degraded from the first malformed frame until none came for the quiet period', () => {
    const h = new HealthStore(['venue_a']);
    const v = h.get('venue_a')!;
    expect(h.checkMalformed('venue_a', 0, T)).toBeUndefined();
    expect(h.checkMalformed('venue_a', 3, T)).toBe('degraded');
    expect(h.checkMalformed('venue_a', 50, T + 1000)).toBeUndefined(); // still degraded: no second warning
    expect(h.feedStatus(v, true, T + 1000)).toEqual({ status: 'degraded', issue: 'malformed frames arriving (50 dropped so far)' });
    expect(h.checkMalformed('venue_a', 50, T + 1000 + MALFORMED_QUIET_MS - 1)).toBeUndefined();
    expect(h.checkMalformed('venue_a', 50, T + 1000 + MALFORMED_QUIET_MS)).toBe('recovered');
    expect(h.feedStatus(v, true, T + 20_000).status).toBe('ok');
    expect(h.checkMalformed('venue_a', 50, T + 30_000)).toBeUndefined();
    expect(h.checkMalformed('venue_z', 5, T)).toBeUndefined();
  });
});
