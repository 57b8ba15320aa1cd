import { optionless, type ProtocolModule } from '../protocol.js';
import { createManifoldFeed } from './feed.js';
import { createManifoldMapper } from './mappers.js';

export { createManifoldFeed, type ManifoldFeedOptions } from './feed.js';
export { ManifoldMapper, createManifoldMapper, mapAnswer, mapBinary, needsFullMarket } from './mappers.js';
export * from './raw.js';

/** Manifold API v0 (venue_d by default): polled REST, one market per binary question or per answer. */
export const protocol: ProtocolModule = {
  protocol: 'manifold',
  traits: { lastPriceInBand: false },
  createMapper: optionless('manifold', createManifoldMapper),
  createFeed: (ctx) => createManifoldFeed(ctx),
};
