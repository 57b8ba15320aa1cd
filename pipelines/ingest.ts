import { connectable, interval, merge, mergeMap, Subject, tap, type Observable, type Subscription } from 'rxjs';
import type { CaptureSink } from '../src/capture/sink.js';
import { realClock, type Clock } from '../src/core/clock.js';
import type { Config, VenueConfig } from '../src/config/schema.js';
import type { Logger } from '../src/core/log.js';
import type { FeedEvent, NormalizedEvent } from '../src/core/types.js';
import { applyToState } from '../src/pipeline/operators.js';
import type { EngineState } from '../src/state/engine.js';
import { PollStarts } from '../src/venues/common/polls.js';
import { PROTOCOL_MODULES } from '../src/venues/index.js';
import type { FeedEndpoints, VenueFeed } from '../src/venues/protocol.js';

export interface Ingest {
  readonly feeds: readonly VenueFeed[];
  /** Every normalized event after it has been applied to state (hot: one run shared by all subscribers). */
  readonly events$: Observable<NormalizedEvent>;
  /**
   * Connects the feeds. Nothing flows before: pipelines/index.ts starts ingest last, once every
   * consumer of the state's change streams is in place. Unsubscribing disconnects every feed.
   */
  start(): Subscription;
}

/** How often the malformed-frame rule looks at the feeds' counters. */
export const MALFORMED_CHECK_MS = 1000;

/** One feed per enabled venue, from its protocol module, at the endpoints given; each appends what it receives to `capture` when given. */
export function createFeeds(
  config: Config,
  endpointsOf: (v: VenueConfig) => FeedEndpoints,
  log: Logger,
  clock: Clock = realClock,
  capture?: CaptureSink,
): VenueFeed[] {
  // One for the service: no two venues' polls start in the same turn.
  const polls = new PollStarts();
  return config.venues
    .filter((v) => v.enabled)
    .map((venue) =>
      PROTOCOL_MODULES[venue.protocol].createFeed({
        venue,
        endpoints: endpointsOf(venue),
        ingest: config.ingest,
        log: log.child({ venue: venue.label }),
        capture,
        clock,
        polls,
      }),
    );
}

/**
 * The ingest flow: venue feeds (frames → normalized events, in each feed's runtime) merged with the
 * feed-health events of the malformed-frame rule, applied to state by one operator, shared.
 * Feed health reaches everything downstream (state, WebSocket warnings) through this one stream.
 */
export function ingestFlow(feeds: readonly VenueFeed[], state: EngineState, log: Logger, clock: Clock = realClock): Ingest {
  const events$ = connectable(merge(...feeds.map((f) => f.events$), malformedFeedEvents(feeds, state, log, clock)).pipe(applyToState(state, clock)), {
    connector: () => new Subject<NormalizedEvent>(),
    resetOnDisconnect: false,
  });
  return { feeds, events$, start: () => events$.connect() };
}

/**
 * Feeds sending malformed frames: `degraded` on /status and a warning to subscribers while they
 * arrive, `recovered` once quiet (the rule is HealthStore.malformedEvent).
 */
function malformedFeedEvents(feeds: readonly VenueFeed[], state: EngineState, log: Logger, clock: Clock): Observable<FeedEvent> {
  return interval(MALFORMED_CHECK_MS, clock.scheduler).pipe(
    mergeMap(() => {
      const now = clock.now();
      const out: FeedEvent[] = [];
      for (const f of feeds) {
        const ev = state.health.malformedEvent(f.venue.label, f.stats.malformedTotal, now);
        if (ev) out.push(ev);
      }
      return out;
    }),
    tap((ev) =>
      log.warn(
        { venue: ev.venue, malformed: state.health.get(ev.venue)?.malformed },
        ev.state === 'degraded' ? 'venue sending malformed frames' : 'venue frames clean again',
      ),
    ),
  );
}

/** Endpoints of a venue in live mode, from its registry entry. */
export function liveEndpoints(v: VenueConfig): FeedEndpoints {
  if (v.connection.mode !== 'live') throw new Error(`venue ${v.label} is not in live mode`);
  return { rest: v.connection.rest, ws: v.connection.ws, extra: v.connection.extra };
}
