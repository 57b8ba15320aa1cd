import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { groupsOf } from '../../src/sim/protocols/groups.js';
import type { SimListing } from '../../src/sim/types.js';
import { createWorld } from '../../src/sim/world.js';

const config = loadConfig({ env: {} });
const NOW = Date.UTC(2026, 10, 22, 9);

/** Listings grouped from scratch, as the catalog routes grouped them per request. */
function regroup(ls: readonly SimListing[], key: (l: SimListing) => string): [string, string[]][] {
  const by = new Map<string, string[]>();
  for (const l of ls) by.set(key(l), [...(by.get(key(l)) ?? []), l.id]);
  return [...by];
}
const ids = (m: ReadonlyMap<string, readonly SimListing[]>): [string, string[]][] => [...m].map(([k, g]) => [k, g.map((l) => l.id)]);

describe('groupsOf: a venue catalog grouped by event, kept between requests', () => {
  const all = createWorld({ seed: 7, venues: config.venues, now: () => NOW, scale: 2 }).listings('venue_a');
  const key = (l: SimListing): string => l.ids['event_ticker'] ?? l.id;

  it('extends its groups with listings appended since, as grouping the whole list again would', () => {
    const listings: SimListing[] = all.slice(0, 40);
    const groups = groupsOf(() => listings, key);
    expect(ids(groups())).toEqual(regroup(listings, key));
    listings.push(...all.slice(40));
    expect(ids(groups())).toEqual(regroup(all, key));
    expect(groups().size).toBeLessThan(all.length);
  });

  it('starts over when handed another list', () => {
    let listings: readonly SimListing[] = all;
    const groups = groupsOf(() => listings, key);
    groups();
    listings = all.slice(5, 30);
    expect(ids(groups())).toEqual(regroup(listings, key));
  });
});
