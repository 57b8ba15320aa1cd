import type { Api } from '../access/api.js';
import type { ApiContext } from './context.js';
import { registerMarket, registerMarketList } from './venue-a/markets.js';
import { registerSeries } from './venue-a/series.js';
import { VenueA } from './venue-a/shared.js';

/**
 * The venue_a catalog (spec 4.20–4.22, record 2.11), at paths named by the slug of the registry
 * venue with the `catalog` capability: /<slug>/markets, /<slug>/markets/{ticker}, /<slug>/series.
 * Each route group is a file under `venue-a/`; the market record and series index are `venue-a/shared.ts`.
 */
export function registerVenueA(api: Api, ctx: ApiContext): void {
  const found = ctx.venues.withCapability('catalog');
  if (!found) return;
  const a = new VenueA(ctx, found);
  // Registration order is the order of the OpenAPI document.
  registerMarketList(api, a);
  registerMarket(api, a);
  registerSeries(api, a);
}
