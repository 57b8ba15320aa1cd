import type { Api } from '../access/api.js';
import type { ApiContext } from './context.js';
import { registerMarkets } from './markets.js';
import { registerHistory } from './history.js';
import { registerPrices } from './prices.js';
import { registerTrades } from './trades.js';
import { registerVenueA } from './venue-a.js';

/** Every data endpoint of the API, registered on the access layer. */
export function registerDataRoutes(api: Api, ctx: ApiContext): void {
  registerMarkets(api, ctx);
  registerPrices(api, ctx);
  registerHistory(api, ctx);
  registerTrades(api, ctx);
  registerVenueA(api, ctx);
}
