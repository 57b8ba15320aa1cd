import { optionless, type ProtocolModule } from '../protocol.js';
import { createPolymarketUsFeed } from './feed.js';
import { PolymarketUsMapper } from './mappers.js';

export { createPolymarketUsFeed } from './feed.js';
export { PolymarketUsMapper, statusOfState, usMarketToUpsert } from './mappers.js';
export * from './raw.js';

/**
 * Polymarket US (venue_g by default): REST catalog on the public gateway, full-book snapshots on
 * the markets WebSocket, YES-only books keyed by market slug, ids served as `venue_g_<slug>`.
 */
export const protocol: ProtocolModule = {
  protocol: 'polymarket_us',
  traits: { lastPriceInBand: false },
  createMapper: optionless('polymarket_us', (venue, log) => new PolymarketUsMapper(venue, log)),
  createFeed: createPolymarketUsFeed,
};
