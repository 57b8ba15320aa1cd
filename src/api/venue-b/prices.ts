import { z } from 'zod';
import { typedReply, type Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { PAYOUT, toCents } from '../../core/price.js';
import { errorReply } from '../../server/http.js';
import { MINUTE } from '../../state/candles.js';
import { bad, HOUR, isReply, NOT_FOUND, PATH, type VenueB } from './shared.js';
import { cents } from '../../views/schemas.js';

/** The 200 body of /<venue_b>/market-price/{token_id}. */
export const MarketPrice = z.object({
  token_id: z.string(),
  timestamp: z.number().int().describe('time of the price, unix seconds'),
  price: cents('price of the token'),
  _meta: z.object({
    source: z.enum(['settlement', 'book_mid', 'last_trade', 'candles_1m']).describe('where the price comes from'),
    market_id: z.string(),
    outcome: z.enum(['yes', 'no']),
    requested_timestamp: z.number().int().optional().describe('the timestamp asked for, unix seconds'),
  }),
});

/** 4.17: /<slug>/market-price/{token_id}, the price of an outcome token now or at a time. */
export function registerMarketPrice(api: Api, b: VenueB): void {
  api.route({
    path: `/${b.slug}/market-price/:token_id`,
    summary: `Price of a ${b.slug} outcome token (cents), now or at a time`,
    description:
      'Without timestamp: the current price (settlement once settled, else the mid of the book when the spread is at most 20¢, else the last trade); _meta.source says which. With timestamp (unix seconds): the closest price within ±1 hour from the one-minute candles (a minute opens at its start and closes at its end); 404 when none is that close. NO tokens are priced 100 − YES.',
    tags: b.tags,
    pathParams: { token_id: PATH.token_id },
    query: z.object({ timestamp: p.unixSeconds({ description: 'unix seconds, at most an hour in the future; omitted = current price' }) }),
    response: MarketPrice,
    errors: { 404: `${NOT_FOUND}, or no price now / within an hour of timestamp` },
    handler: (c) => {
      const r = b.resolveToken(c.path_['token_id']!);
      if (isReply(r)) return r;
      const now = b.ctx.clock.now();
      const side = (yes: number): number => toCents(r.outcome === 'yes' ? yes : PAYOUT - yes);
      const ts = c.query.timestamp;
      if (ts === undefined) {
        const y = b.yesNow(r.marketId);
        if (!y) return errorReply(404, 'not_found', `no current price for token ${r.token}`);
        return typedReply(MarketPrice, {
          token_id: r.token,
          timestamp: Math.floor(now / 1000),
          price: side(y.price),
          _meta: { source: y.source, market_id: r.marketId, outcome: r.outcome },
        });
      }
      if (ts > now + HOUR) return bad('timestamp', 'is more than an hour in the future');
      const best = closestPrice(b, r.marketId, ts);
      if (!best) return errorReply(404, 'not_found', `no price for token ${r.token} within an hour of ${new Date(ts).toISOString()}`);
      return typedReply(MarketPrice, {
        token_id: r.token,
        timestamp: Math.floor(best.at / 1000),
        price: side(best.price),
        _meta: { source: 'candles_1m', market_id: r.marketId, outcome: r.outcome, requested_timestamp: Math.floor(ts / 1000) },
      });
    },
  });
}

/**
 * The YES price closest to `ts` within an hour, from the one-minute candles: a minute's open is
 * its price at its start, its close at its end; on a tie the earlier wins.
 */
function closestPrice(b: VenueB, marketId: string, ts: number): { at: number; price: number } | undefined {
  let best: { at: number; price: number } | undefined;
  const consider = (at: number, price: number): void => {
    if (Math.abs(at - ts) > HOUR) return;
    if (!best || Math.abs(at - ts) < Math.abs(best.at - ts) || (Math.abs(at - ts) === Math.abs(best.at - ts) && at < best.at)) best = { at, price };
  };
  for (const k of b.minutes(marketId, ts - HOUR - MINUTE, ts + HOUR + 1)) {
    consider(k.t, k.o);
    consider(k.t + MINUTE, k.c);
  }
  return best;
}
