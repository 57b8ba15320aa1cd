import type { SimListing } from '../types.js';

/**
 * A venue's listings grouped by a key that never changes for a listing (its event), in listing
 * order, kept between requests: a catalog walk asks for it once per page, and grouping every
 * listing per page made the walk quadratic in the listings. The world only ever appends listings,
 * so the groups are extended with the new ones (the same groups, in the same order, as grouping
 * the whole list again).
 */
export function groupsOf(listings: () => readonly SimListing[], key: (l: SimListing) => string): () => ReadonlyMap<string, readonly SimListing[]> {
  let source: readonly SimListing[] | undefined;
  let done = 0;
  let groups = new Map<string, SimListing[]>();
  return () => {
    const ls = listings();
    if (ls !== source || ls.length < done) {
      source = ls;
      done = 0;
      groups = new Map();
    }
    for (; done < ls.length; done++) {
      const l = ls[done]!;
      const k = key(l);
      const g = groups.get(k);
      if (g) g.push(l);
      else groups.set(k, [l]);
    }
    return groups;
  };
}
