import type { Api } from '../access/api.js';
import type { WalletLedger } from '../signals/wallets.js';
import type { ApiContext } from './context.js';
import { registerCandlesticks } from './venue-b/candles.js';
import { registerHolders } from './venue-b/holders.js';
import { registerLeaderboard } from './venue-b/leaderboard.js';
import { registerMarketPrice } from './venue-b/prices.js';
import { VenueB } from './venue-b/shared.js';
import { registerSmartActivity } from './venue-b/smart-activity.js';
import { registerVolume } from './venue-b/volume.js';
import { registerWallets } from './venue-b/wallets.js';

/**
 * venue_b endpoints (spec 4.17–4.19, 2.10) at `/<slug>/…`, where slug is the registry venue with
 * the `walletData` capability (a renamed slug renames every path). Paths of 4.19, which the spec
 * leaves to us, are documented in each route's summary:
 *
 *   /<slug>/market-price/{token_id}            4.17 price of a token now or at a time
 *   /<slug>/candlesticks/{condition_id}        4.18 YES-normalized OHLC, v null
 *   /<slug>/volume/{token_id}                  token volume over a window (default last 24 h)
 *   /<slug>/volume-chart/{token_id}            token volume per interval (default last 24 h)
 *   /<slug>/condition-volume/{condition_id}    market volume, per outcome token
 *   /<slug>/open-interest/{condition_id}       venue open interest + what tracked wallets hold
 *   /<slug>/leaderboard                        wallets ranked by PnL, volume or hit rate
 *   /<slug>/top-holders/{condition_id}         top 20 holders per outcome, offset pagination
 *   /<slug>/smart-activity                     markets smart wallets are entering (warming first)
 *   /<slug>/wallets/{address}                  identity and record of a wallet
 *   /<slug>/wallets/{address}/positions        its positions
 *   /<slug>/wallets/{address}/activity         its latest trades
 *
 * Volume, volume chart, condition volume and open interest responses are cached for up to 20 s
 * and carry `_meta` {watermark (newest trade materialized), refreshed_at (when this response was
 * computed), lag_seconds (refreshed_at − watermark: grows when the feed is behind or the market is
 * quiet), cached}. Top holders and the leaderboard are cached for 20 s too (refreshed_at, cached).
 * Wallet data is what the wallet ledger saw on trades since it started (`_meta.tracked_since`).
 * Each route group is a file under `venue-b/`; what they share (resolvers, cache) is `venue-b/shared.ts`.
 */
export function registerVenueB(api: Api, ctx: ApiContext, ledger: WalletLedger): void {
  const found = ctx.venues.withCapability('walletData');
  if (!found) return;
  const b = new VenueB(ctx, ledger, found);
  // Registration order is the order of the OpenAPI document.
  registerMarketPrice(api, b);
  registerCandlesticks(api, b);
  registerVolume(api, b);
  registerHolders(api, b);
  registerLeaderboard(api, b);
  registerSmartActivity(api, b);
  registerWallets(api, b);
}
