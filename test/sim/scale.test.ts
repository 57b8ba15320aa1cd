import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { scaleForMarkets } from '../../src/sim/size.js';
import { createWorld, type SimWorld } from '../../src/sim/world.js';

const config = loadConfig({ env: {} });
const NOW = Date.UTC(2026, 10, 22, 9);

function count(w: SimWorld): number {
  let n = 0;
  for (const v of config.venues) n += w.listings(v.label).length;
  return n;
}

/** Every listing (ids, texts, book levels) and a walk of 2,000 ticks, hashed. */
function fingerprint(w: SimWorld): string {
  const h = createHash('sha256');
  for (const v of config.venues)
    for (const l of w.listings(v.label))
      h.update(JSON.stringify([l.id, l.prop.id, l.title, l.eventTitle, l.outcome, l.ids, l.closeTime, l.book.bids.prices, l.book.asks.sizes]));
  w.onChange((c) => h.update(JSON.stringify([c.type, c.type === 'trade' ? c.trade.id : c.listing.id, c.type === 'book' ? c.changes : null])));
  w.tick(2_000);
  return h.digest('hex');
}

describe('simulated world: sim.scale', () => {
  it('scale 1 is the default world, and the same seed gives the same world', () => {
    const a = fingerprint(createWorld({ seed: 7, venues: config.venues, now: () => NOW }));
    const b = fingerprint(createWorld({ seed: 7, venues: config.venues, now: () => NOW, scale: 1 }));
    const c = fingerprint(createWorld({ seed: 8, venues: config.venues, now: () => NOW }));
    expect(b).toBe(a);
    expect(c).not.toBe(a);
  });

  it('a larger world is deterministic per seed', () => {
    const a = fingerprint(createWorld({ seed: 7, venues: config.venues, now: () => NOW, scale: 12 }));
    const b = fingerprint(createWorld({ seed: 7, venues: config.venues, now: () => NOW, scale: 12 }));
    expect(b).toBe(a);
  });

  it('grows about linearly, with games, futures and listings on every venue that lists them', () => {
    const small = createWorld({ seed: 7, venues: config.venues, now: () => NOW, scale: 11 });
    const big = createWorld({ seed: 7, venues: config.venues, now: () => NOW, scale: 21 });
    const perUnit = (count(big) - count(small)) / 10;
    const perUnitLow = (count(small) - count(createWorld({ seed: 7, venues: config.venues, now: () => NOW, scale: 1 }))) / 10;
    expect(perUnit / perUnitLow).toBeGreaterThan(0.9);
    expect(perUnit / perUnitLow).toBeLessThan(1.1);
    expect(big.events.filter((e) => e.futures).length).toBeGreaterThan(small.events.filter((e) => e.futures).length);
    for (const v of config.venues) if (v.label !== 'venue_c') expect(big.listings(v.label).length, v.label).toBeGreaterThan(small.listings(v.label).length);
  });

  it('scaleForMarkets(n) gives a world of at least n markets, within 20% over', () => {
    for (const n of [12_000, 20_000]) {
      const got = count(createWorld({ seed: 20261122, venues: config.venues, scale: scaleForMarkets(n) }));
      expect(got).toBeGreaterThanOrEqual(n);
      expect(got).toBeLessThan(n * 1.2);
    }
  });

  it('the config reads sim.scale from CROSSBOOK__sim__scale, 1 by default, and rejects 0', () => {
    expect(loadConfig({ env: {} }).sim.scale).toBe(1);
    expect(loadConfig({ env: { CROSSBOOK__sim__scale: '150' } }).sim.scale).toBe(150);
    expect(() => loadConfig({ env: { CROSSBOOK__sim__scale: '0' } })).toThrow(/scale/);
  });
});
