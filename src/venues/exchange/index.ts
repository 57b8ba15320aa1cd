import { optionless, type ProtocolModule } from '../protocol.js';
import { createExchangeFeed } from './feed.js';
import { createExchangeMapper } from './mappers.js';

export { createExchangeFeed } from './feed.js';
export { ExchangeMapper, createExchangeMapper, marketUpsert, parseChanges, parseLevels } from './mappers.js';
export * from './raw.js';

/**
 * crossbook exchange protocol v1 (venue_e two-sided; venue_f and venue_h yes-only): REST catalog
 * plus a sequenced WebSocket book stream. See raw.ts for the protocol.
 */
export const protocol: ProtocolModule = {
  protocol: 'exchange',
  traits: { lastPriceInBand: false },
  createMapper: optionless('exchange', createExchangeMapper),
  createFeed: createExchangeFeed,
};
