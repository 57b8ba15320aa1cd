import type { MarketUrlLookup } from '../protocol.js';

/**
 * Kalshi market pages: kalshi.com/markets/<series>/<slug>/<event or market ticker>. The last
 * segment is a market ticker, else an event ticker, else (on a two-segment series page) a series
 * ticker; tickers are matched case-insensitively.
 */
export function parseKalshiMarketUrl(segments: readonly string[]): readonly MarketUrlLookup[] {
  const last = (segments[segments.length - 1] ?? '').toUpperCase();
  return [{ marketId: last }, { where: (m) => m.eventId?.toUpperCase() === last || (segments.length <= 2 && m.seriesId?.toUpperCase() === last) }];
}
