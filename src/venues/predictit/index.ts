import { optionless, type ProtocolModule } from '../protocol.js';
import { createPredictItFeed } from './feed.js';
import { createPredictItMapper } from './mappers.js';
import { parsePredictItUrl } from './url.js';

export { createPredictItFeed } from './feed.js';
export { PredictItMapper, createPredictItMapper, contractQuote, contractUpsert, mapMarket } from './mappers.js';
export * from './raw.js';

/** PredictIt marketdata (venue_c by default): polled REST, one market per contract. */
export const protocol: ProtocolModule = {
  protocol: 'predictit',
  traits: { lastPriceInBand: false },
  createMapper: optionless('predictit', createPredictItMapper),
  createFeed: createPredictItFeed,
  parseMarketUrl: parsePredictItUrl,
};
