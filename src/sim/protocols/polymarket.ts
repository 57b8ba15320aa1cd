import type { VenueConfig } from '../../config/schema.js';
import { createSimHttp } from '../server-kit.js';
import type { SimListing, SimServer, SimServerFactory, SimWorldApi } from '../types.js';
import { TokenIndex } from './polymarket/docs.js';
import { registerRest } from './polymarket/rest.js';
import { PolymarketStream } from './polymarket/stream.js';

export { dataTrade, polyPrice, polySize, profile } from './polymarket/docs.js';

/**
 * Simulated Polymarket (SYNTHETIC DATA), speaking the real wire formats:
 * - Gamma: `GET /gamma/markets` and `GET /gamma/events` (`active`, `closed`, `limit`, `offset`,
 *   `condition_ids`, `slug`, `id` filters), markets with JSON-encoded `outcomes` / `outcomePrices` /
 *   `clobTokenIds` and string `volume` / `liquidity` beside `*Num` numbers.
 * - CLOB REST: `GET /clob/book?token_id=`, `GET /clob/markets/:condition_id`.
 * - data-api: `GET /data/trades?market=&user=&limit=&offset=` (newest first, seconds timestamps).
 * - Market channel `ws://…/ws/market`: subscribe with `{"assets_ids":[…],"type":"market"}` (plus
 *   `{"operation":"subscribe"|"unsubscribe"}` updates); the answer is a JSON array of `book` frames.
 *   Each book change of a listing becomes one `price_change` with entries for BOTH tokens (the NO
 *   token's entry mirrors the YES one: a YES bid at p is a NO ask at 1 − p), with `best_bid` /
 *   `best_ask` after the change; each trade a `last_trade_price` followed by fresh `book` frames of
 *   both tokens (as the venue does after trades); a finalized listing a `market_resolved`; a new
 *   listing a `new_market` (the last two only with `custom_feature_enabled`). Text `PING` → `PONG`.
 *
 * The YES token's book is the listing's book; the NO token's is its mirror: bids at 10_000 − YES
 * asks, asks at 10_000 − YES bids. `book` levels are listed as the venue lists them: bids ascending,
 * asks descending (best last).
 *
 * A trade is reported on the token the taker bought (YES at p, or NO at 1 − p), side BUY.
 *
 * Faults: `disconnect` drops every socket; `gap` makes every connection silently skip its next
 * `price_change` (Polymarket has no sequence numbers: only a client that checks `best_bid` /
 * `best_ask` can notice, and only when the lost change moved the top); `malformed` sends `count`
 * invalid frames to every connection (truncated JSON, wrong types, an unknown event_type, a price
 * of 1.5, a negative size); `stall` holds every frame (and PONG, and REST answers) for `ms`, then
 * delivers them; `duplicate_snapshot` sends every subscribed book again.
 */

/** Serves the Polymarket protocol for `venue` from `world`: REST in polymarket/rest.ts, the market channel in polymarket/stream.ts. */
export const serve: SimServerFactory = async (world: SimWorldApi, venue: VenueConfig, opts): Promise<SimServer> => {
  const http = createSimHttp();
  const label = venue.label;
  const listings = (): readonly SimListing[] => world.listings(label);
  const tokens = new TokenIndex(listings);
  registerRest(http, { world, label, tokens, listings });
  const stream = new PolymarketStream(world, label, http, tokens);
  http.ws('/ws/market', (ws) => stream.connect(ws));
  const unsubscribe = world.onChange((ch) => stream.onChange(ch));

  const { host, port } = await http.listen(opts.host, opts.port);
  const base = `http://${host}:${port}`;
  return {
    venue,
    endpoints: {
      rest: `${base}/clob`,
      ws: `ws://${host}:${port}/ws/market`,
      extra: { gamma: `${base}/gamma`, data: `${base}/data` },
    },
    fault: (f) => stream.fault(f),
    close: async () => {
      unsubscribe();
      stream.close();
      await http.close();
    },
  };
};
