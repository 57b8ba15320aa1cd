import { DeliverPolicy } from '@nats-io/jetstream';
import { connectable, filter, map, Observable, Subject, tap } from 'rxjs';
import type { ClusterLink } from '../src/cluster/link.js';
import { decodeMessage, type StreamMessage } from '../src/cluster/subjects.js';
import type { NormalizedEvent } from '../src/core/types.js';
import { applyToState } from '../src/pipeline/operators.js';
import type { EngineState } from '../src/state/engine.js';
import type { WsHub } from '../src/ws/hub.js';
import type { Ingest } from './ingest.js';

/** The stream from sequence `from` on, decoded, in order (an ordered consumer: it recreates itself on a gap). */
export function streamFrom(link: ClusterLink, from: number): Observable<StreamMessage> {
  return new Observable<StreamMessage>((sub) => {
    let stop: (() => void) | undefined;
    let stopped = false;
    void (async () => {
      const consumer = await link.js.consumers.get(link.settings.stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from });
      const messages = await consumer.consume();
      stop = () => void messages.close();
      if (stopped) return stop();
      for await (const m of messages) sub.next(decodeMessage(m.subject, m.data));
    })().catch((e: unknown) => sub.error(e));
    return () => {
      stopped = true;
      stop?.();
    };
  });
}

/**
 * The ingest of a cluster edge: the core's stream from `from` (the message after its snapshot) in
 * order. Normalized events are applied to the state, so REST answers like the core; the core's
 * publications go to the hub as they are (`accept`: the core's seq and epoch), so every edge sends
 * the same numbers for the same update. Nothing flows before start().
 */
export function followFlow(link: ClusterLink, from: number, state: EngineState, hub: WsHub): Ingest {
  const events$ = connectable(
    streamFrom(link, from).pipe(
      tap((m) => {
        if (m.kind === 'ws') hub.accept(m.p);
      }),
      filter((m): m is Extract<StreamMessage, { kind: 'ev' }> => m.kind === 'ev'),
      map((m) => m.ev),
      applyToState(state),
    ),
    { connector: () => new Subject<NormalizedEvent>(), resetOnDisconnect: false },
  );
  return { feeds: [], events$, start: () => events$.connect() };
}
