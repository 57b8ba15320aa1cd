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
