import type { Api } from '../access/api.js';
import type { MatchingService } from '../matching/service.js';
import type { ApiContext } from './context.js';
import { EventIndex } from './matching/event-index.js';
import { registerEvents } from './matching/events.js';
import { registerMatchingMarkets } from './matching/markets.js';
import { registerMatchingQuality } from './matching/quality.js';
import { registerSearch } from './matching/search.js';
import type { MatchingRoutes } from './matching/shared.js';
import { registerMatchingSports } from './matching/sports.js';
import { registerUnifiedOrderbook } from './matching/unified-book.js';
import { registerMatchingUrl } from './matching/url.js';
import { GroupViews } from './matching/views.js';

/**
 * Matching endpoints (spec 4.2–4.4, 4.6, 4.7, 4.11, and the settlement audit at
 * /matching-markets/quality): groups come from the MatchingService; events
 * gather the groups of one game/election/meeting; full-text search is MiniSearch over events and
 * their markets, rebuilt when the groups change. Each route group is a file under `matching/`.
 */
export function registerMatching(api: Api, ctx: ApiContext, matching: MatchingService): void {
  const r: MatchingRoutes = { ctx, matching, events: new EventIndex(ctx.state, matching, ctx.clock), views: new GroupViews(ctx.state, ctx.venues) };
  // Registration order is the order of the OpenAPI document.
  registerMatchingMarkets(api, r);
  registerMatchingUrl(api, r);
  registerMatchingSports(api, r);
  registerMatchingQuality(api, r);
  registerEvents(api, r);
  registerSearch(api, r);
  registerUnifiedOrderbook(api, r);
}
