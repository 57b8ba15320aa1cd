import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { computeStatus } from '../../src/server/routes/status.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';

const config = loadConfig({ env: {} });
const NOW = 1_800_000_000_000;

function stateWith(liveVenues: string[], opts: { catalogAt?: number; closeTime?: number } = {}): EngineState {
  const s = new EngineState(config.venues);
  for (const v of config.venues) {
    applyEvent(s, {
      type: 'market',
      venue: v.label,
      marketId: 'M1',
      title: 't',
      status: 'active',
      closeTime: opts.closeTime ?? NOW + 1e6,
      timestamp: NOW,
      localTimestamp: NOW,
    });
    applyEvent(s, { type: 'market', venue: v.label, marketId: 'M2', title: 't', status: 'finalized', timestamp: NOW, localTimestamp: NOW });
    if (liveVenues.includes(v.label)) applyEvent(s, { type: 'feed', venue: v.label, state: 'catalog', timestamp: NOW, localTimestamp: opts.catalogAt ?? NOW });
  }
  return s;
}

describe('computeStatus (spec 4.1)', () => {
  it('is unknown (503) when nothing is known yet', () => {
    expect(computeStatus(config, new EngineState(config.venues), NOW, NOW).status).toBe('unknown');
  });

  it('is ok with a strict majority of venues live, counting all and live markets per venue', () => {
    const s = stateWith(['venue_a', 'venue_b', 'venue_c', 'venue_d', 'venue_e']);
    const r = computeStatus(config, s, NOW + 1000, NOW);
    expect(r.status).toBe('ok');
    expect(r.platforms['venue_a']).toMatchObject({ active_markets: 2, live_markets: 1, feed_healthy: true });
    expect(r.platforms['venue_h']).toMatchObject({ active_markets: 2, live_markets: 1, feed_healthy: false });
    expect(r.last_updated).toBe(new Date(NOW).toISOString());
  });

  it('last_updated is the newer of the latest matched-market price and the last catalog refresh, not any quote', () => {
    const s = stateWith(['venue_a', 'venue_b', 'venue_c', 'venue_d', 'venue_e']);
    applyEvent(s, { type: 'quote', venue: 'venue_a', marketId: 'M1', yesBid: 4000, timestamp: NOW + 500, localTimestamp: NOW + 500 });
    expect(computeStatus(config, s, NOW + 1000, NOW).last_updated).toBe(new Date(NOW).toISOString());
    expect(computeStatus(config, s, NOW + 1000, NOW, NOW + 700).last_updated).toBe(new Date(NOW + 700).toISOString());
  });

  it('is degraded at exactly half (not a strict majority)', () => {
    expect(computeStatus(config, stateWith(['venue_a', 'venue_b', 'venue_c', 'venue_d']), NOW + 1000, NOW).status).toBe('degraded');
  });

  it('does not count markets past their close time as live', () => {
    const s = stateWith(['venue_a', 'venue_b', 'venue_c', 'venue_d', 'venue_e'], { closeTime: NOW - 1 });
    const r = computeStatus(config, s, NOW + 1000, NOW);
    expect(r.platforms['venue_a']!.live_markets).toBe(0);
    expect(r.status).toBe('degraded');
  });

  it('is degraded when any catalog refresh is older than its venue threshold', () => {
    const all = config.venues.map((v) => v.label);
    const s = stateWith(all);
    const stale = NOW + (config.venues[0]!.freshness.catalogMaxAgeSec + 1) * 1000;
    // feeds still report events, but the catalog has not refreshed in time
    for (const v of all) s.health.seen(v, stale);
    const r = computeStatus(config, s, stale, NOW);
    expect(r.platforms['venue_a']!.catalog_healthy).toBe(false);
    expect(r.status).toBe('degraded');
  });
});
