import { merge, share, type Observable, type Subscription } from 'rxjs';
import type { Config, VenueConfig } from '../src/config/schema.js';
import type { Logger } from '../src/core/log.js';
import type { NormalizedEvent } from '../src/core/types.js';
import { applyToState } from '../src/pipeline/operators.js';
import type { EngineState } from '../src/state/engine.js';
import { PROTOCOL_MODULES } from '../src/venues/index.js';
import type { FeedEndpoints, VenueFeed } from '../src/venues/protocol.js';

export interface Ingest {
  readonly feeds: readonly VenueFeed[];
  /** Every normalized event after it has been applied to state (hot, shared). */
  readonly events$: Observable<NormalizedEvent>;
  start(): Subscription;
}

/**
 * The ingest pipeline: one feed per enabled venue (its protocol module, at the endpoints given),
 * merged, applied to state by a single operator. Later stages (signals, WebSocket fan-out)
 * subscribe to the state's change streams or to `events$`.
 */
export function createIngest(config: Config, state: EngineState, endpointsOf: (v: VenueConfig) => FeedEndpoints, log: Logger): Ingest {
  const feeds = config.venues
    .filter((v) => v.enabled)
    .map((venue) =>
      PROTOCOL_MODULES[venue.protocol].createFeed({ venue, endpoints: endpointsOf(venue), ingest: config.ingest, log: log.child({ venue: venue.label }) }),
    );
  const events$ = merge(...feeds.map((f) => f.events$)).pipe(applyToState(state), share());
  return { feeds, events$, start: () => events$.subscribe({ error: (e: unknown) => log.error({ err: String(e) }, 'ingest pipeline failed') }) };
}

/** Endpoints of a venue in live mode, from its registry entry. */
export function liveEndpoints(v: VenueConfig): FeedEndpoints {
  if (v.connection.mode !== 'live') throw new Error(`venue ${v.label} is not in live mode`);
  return { rest: v.connection.rest, ws: v.connection.ws, extra: v.connection.extra };
}
