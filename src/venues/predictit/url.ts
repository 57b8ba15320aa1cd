import type { MarketUrlLookup } from '../protocol.js';

/**
 * PredictIt market pages: predictit.org/markets/detail/<market id>[/<name>]. The PredictIt market
 * is our event (one of our markets per contract), so the id selects every contract of it, or a
 * contract of that id; without `detail` the first all-digit segment is the id.
 */
export function parsePredictItUrl(segments: readonly string[]): readonly MarketUrlLookup[] {
  const i = segments.indexOf('detail');
  const id = i >= 0 ? segments[i + 1] : segments.find((s) => /^\d+$/.test(s));
  return id ? [{ where: (m) => m.eventId === id || m.marketId === id }] : [];
}
