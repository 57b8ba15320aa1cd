import type { Api } from '../access/api.js';
import type { ApiContext } from './context.js';
import { registerMarkets } from './markets.js';
import { registerPrices } from './prices.js';

/** Every data endpoint of the API, registered on the access layer. */
export function registerDataRoutes(api: Api, ctx: ApiContext): void {
  registerMarkets(api, ctx);
  registerPrices(api, ctx);
}
