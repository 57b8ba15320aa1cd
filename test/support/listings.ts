import type { VenueConfig } from '../../src/config/schema.js';
import type { MatcherInput } from '../../src/matching/matcher.js';
import type { SimListing } from '../../src/sim/types.js';

/** The matcher's input for one of the simulator's listings, keyed `<venue label>:<id>`. */
export function matcherInput(v: VenueConfig, l: SimListing): MatcherInput {
  return {
    key: `${v.label}:${l.id}`,
    platform: v.label,
    protocol: v.protocol,
    market_id: l.id,
    title: l.title,
    event_title: l.eventTitle,
    outcome: l.outcome,
    close_time: new Date(l.closeTime).toISOString(),
  };
}
