import type { ProtocolModule } from '../protocol.js';
import { createPolymarketFeed } from './feed.js';
import { PolymarketMapper, polymarketReplayOptions } from './mappers.js';
import { parsePolymarketUrl } from './url.js';

export { createPolymarketFeed } from './feed.js';
export {
  PolymarketMapper,
  clobBookToSnapshot,
  dataTradeId,
  dataTradeToTrade,
  gammaMarketToUpsert,
  gammaStatus,
  parseLevels,
  type PolymarketMapperOptions,
  type TokenInfo,
} from './mappers.js';
export * from './raw.js';

/**
 * Polymarket (venue_b by default): Gamma catalog, CLOB market-channel books, data-api trades.
 * `createMapper` gives the mapper `crossbook normalize` uses: it takes WebSocket frames and the
 * REST shapes (Gamma markets/events, CLOB books, data-api trades) and emits `last_trade_price` as
 * trades, those of tokens of no market it has seen in the token's own terms (side unknown); a
 * replay of the capture makes it with the live mapper's `replayOptions` instead.
 */
export const protocol: ProtocolModule = {
  protocol: 'polymarket',
  traits: {
    lastPriceInBand: true,
    matchId: (marketId, extra) => (typeof extra?.['slug'] === 'string' && extra['slug'] !== '' ? extra['slug'] : marketId),
  },
  createMapper: (venue, log, options) => new PolymarketMapper(venue, log, { untrackedTrades: 'token', ...polymarketReplayOptions.parse(options ?? {}) }),
  createFeed: createPolymarketFeed,
  parseMarketUrl: parsePolymarketUrl,
};
