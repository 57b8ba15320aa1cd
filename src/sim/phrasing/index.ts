import type { VenueConfig } from '../../config/schema.js';
import type { Rng } from '../rng.js';
import type { SimProposition } from '../types.js';
import { exchange } from './exchange.js';
import { kalshi } from './kalshi.js';
import { manifold } from './manifold.js';
import { polymarket } from './polymarket.js';
import { polymarketUs } from './polymarket_us.js';
import { predictit } from './predictit.js';
import type { ListingSpec, PropMeta } from './spec.js';

export type { ListingSpec, PropMeta } from './spec.js';

/** Phrases `prop` for a venue, by the protocol it speaks; undefined when the venue does not list it. */
export function phrase(venue: VenueConfig, prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  switch (venue.protocol) {
    case 'kalshi':
      return kalshi(prop, meta, rng);
    case 'polymarket':
      return polymarket(prop, meta, rng);
    case 'polymarket_us':
      return polymarketUs(prop, meta);
    case 'predictit':
      return predictit(prop, meta, rng);
    case 'manifold':
      return manifold(prop, meta, rng);
    case 'exchange':
      return exchange(venue, prop, meta, rng);
  }
}
