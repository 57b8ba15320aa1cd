import { optionless, type ProtocolModule } from '../protocol.js';
import { createKalshiFeed } from './feed.js';
import { createKalshiMapper } from './mappers.js';
import { parseKalshiMarketUrl } from './url.js';

export { createKalshiFeed, kalshiAuthHeaders } from './feed.js';
export {
  KalshiMapper,
  createKalshiMapper,
  isoMs,
  kalshiStatus,
  mapRestMarket,
  mapRestOrderbooks,
  priceOf,
  seriesOfEvent,
  sizeOf,
  yesPerspective,
} from './mappers.js';
export * from './raw.js';

/** The Kalshi Trade API v2 (venue_a by default): REST catalog + WebSocket books, tickers, trades, lifecycle. */
export const protocol: ProtocolModule = {
  protocol: 'kalshi',
  traits: { lastPriceInBand: false },
  createMapper: optionless('kalshi', createKalshiMapper),
  createFeed: (ctx) => createKalshiFeed(ctx),
  parseMarketUrl: parseKalshiMarketUrl,
};
