import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createWorld } from '../../src/sim/world.js';

const config = loadConfig({ env: {} });

describe('simulated world: bounded trade log', () => {
  it('keeps at most tradeLog trades per venue, dropping the oldest half, newest last', () => {
    const world = createWorld({ seed: 11, venues: config.venues, ticksPerSecond: 0, tradeLog: 200 });
    let seen = 0;
    world.onChange((c) => {
      if (c.type === 'trade' && c.trade.listing.venue === 'venue_b') seen++;
    });
    for (let i = 0; i < 60 && seen < 1_000; i++) world.tick(2_000);
    expect(seen).toBeGreaterThan(400);
    const log = world.trades('venue_b');
    expect(log.length).toBeGreaterThanOrEqual(100);
    expect(log.length).toBeLessThanOrEqual(200);
    const ids = log.map((t) => Number(t.id.split('-').pop()));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });
});

describe('simulated world: settlement', () => {
  it('settles complementary propositions opposite (home and away cannot both lose)', () => {
    let now = Date.UTC(2026, 10, 20, 12);
    const world = createWorld({ seed: 7, venues: config.venues, ticksPerSecond: 0, now: () => now });
    // A year on, every event has closed; the world's lifecycle step (run once a second when started) settles them.
    now += 365 * 86_400_000;
    const inner = world as unknown as { complementOf: Map<object, { resolved?: string }>; lifecycle(emit: boolean): void };
    inner.lifecycle(false);
    const complementOf = inner.complementOf;
    let pairs = 0;
    for (const ev of world.events)
      for (const p of ev.props) {
        const c = complementOf.get(p);
        if (!c) continue;
        pairs++;
        expect(p.resolved).toBeDefined();
        expect(c.resolved).toBe(p.resolved === 'yes' ? 'no' : 'yes');
      }
    expect(pairs).toBeGreaterThan(10);
  });
});
