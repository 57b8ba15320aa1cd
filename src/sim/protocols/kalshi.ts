import type { VenueConfig } from '../../config/schema.js';
import { createSimHttp } from '../server-kit.js';
import type { SimFault, SimServer, SimServerFactory, SimWorldApi } from '../types.js';
import { registerRest } from './kalshi/rest.js';
import { KalshiStream } from './kalshi/stream.js';
import { BASE, WS_PATH } from './kalshi/wire.js';

export { marketObject, snapshotMsg } from './kalshi/wire.js';

/**
 * Simulated Kalshi Trade API v2 (SYNTHETIC DATA) for one venue, built from the world's listings.
 *
 * REST under `/trade-api/v2`: `GET /markets` (cursor pages; filters status — unopened, open,
 * closed, settled —, event_ticker, series_ticker, tickers, min_close_ts, max_close_ts, mve_filter,
 * limit), `GET /markets/{ticker}`, `GET /markets/{ticker}/orderbook`, `GET /markets/orderbooks?tickers=`
 * (bids only, ascending, best last, as the venue serves them), `GET /events` (cursor pages; status, series_ticker, min_close_ts),
 * `GET /events/{ticker}?with_nested_markets=`, `GET /series`, `GET /series/{ticker}`,
 * `GET /exchange/status`.
 *
 * WebSocket at `/trade-api/ws/v2`: commands subscribe / unsubscribe / update_subscription
 * (add_markets, delete_markets, get_snapshot; `sid` or a one-element `sids`) / list_subscriptions,
 * answered with subscribed / ok / unsubscribed / error (AsyncAPI error codes). One sid per channel
 * per subscribe; every frame of a sid except `subscribed` and `ticker` carries the next `seq`,
 * acks included. `orderbook_delta` starts with an `orderbook_snapshot` per market and then sends
 * RELATIVE deltas: a YES-perspective change [side, price, size, prevSize] becomes `delta_fp` =
 * size − prevSize on `yes` at price (bids) or on `no` at 10_000 − price (asks are NO bids).
 * `ticker` frames follow any change of the top of book, last price, volume or open interest;
 * `trade` frames follow trades; `market_lifecycle_v2` (all markets) follows listings and status
 * changes (created, activated, close_date_updated when a market closes, determined, settled).
 *
 * Faults: disconnect drops every socket; gap skips one seq on every sid of every connection;
 * malformed sends `count` bad frames to every connection (not JSON, truncated JSON, wrong field
 * types — none of them carries a usable sid/seq, so the real stream stays intact); stall queues
 * everything (and withholds pongs, REST answers) for `ms`, then flushes; duplicate_snapshot sends
 * every subscribed market's snapshot again, in sequence; reorder swaps the next two frames of one
 * sid on every connection (the later seq arrives first).
 */

/** Serves the Kalshi protocol for `venue` from `world`: REST in kalshi/rest.ts, the stream in kalshi/stream.ts. */
export const serve: SimServerFactory = async (world: SimWorldApi, venue: VenueConfig, opts): Promise<SimServer> => {
  const http = createSimHttp();
  const stream = new KalshiStream(world, venue, http);
  registerRest(http, { world, all: () => world.listings(venue.label), one: (ticker) => world.listing(venue.label, ticker) });
  const unlisten = world.onChange((ch) => stream.onChange(ch));
  http.ws(WS_PATH, (ws) => stream.connect(ws));
  const { host, port } = await http.listen(opts.host, opts.port);
  return {
    venue,
    endpoints: { rest: `http://${host}:${port}${BASE}`, ws: `ws://${host}:${port}${WS_PATH}` },
    fault: (f: SimFault) => stream.fault(f),
    async close() {
      unlisten();
      stream.close();
      await http.close();
    },
  };
};
