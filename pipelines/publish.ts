import type { PubAck } from '@nats-io/jetstream';
import { concatMap, from, interval, startWith, Subscription, type Observable } from 'rxjs';
import { lastSequence, putSnapshot, type ClusterLink } from '../src/cluster/link.js';
import { takeSnapshot } from '../src/cluster/snapshot.js';
import { encodeBody, evSubject, wsSubject } from '../src/cluster/subjects.js';
import type { Logger } from '../src/core/log.js';
import type { NormalizedEvent } from '../src/core/types.js';
import type { EngineState } from '../src/state/engine.js';
import type { WsHub } from '../src/ws/hub.js';

/**
 * The publisher of a cluster core: every normalized event (which an edge applies to its state)
 * and every publication of the hub (topic, body, and the seq and epoch assigned here once) go to
 * the JetStream stream in the order they happen; every `snapshotIntervalMs` (and at once) the
 * state is cut and stored with the stream sequence of the last message sent before the cut, so an
 * edge that starts from it follows the stream from the next one.
 */
export function publishFlow(
  link: ClusterLink,
  events$: Observable<NormalizedEvent>,
  hub: WsHub,
  state: EngineState,
  opts: { snapshotIntervalMs: number; log: Logger },
): Subscription {
  let last: Promise<PubAck> | undefined;
  let failed = 0;
  const send = (subject: string, body: Uint8Array): void => {
    const ack = link.js.publish(subject, body);
    ack.catch((e: unknown) => {
      if (failed++ % 1000 === 0) opts.log.warn({ err: String(e), failed }, 'cluster: stream publish failed');
    });
    last = ack;
  };
  const sub = new Subscription();
  sub.add(events$.subscribe((ev) => send(evSubject(ev), encodeBody(ev))));
  sub.add(hub.published$.subscribe((p) => send(wsSubject(p.topic), encodeBody(p))));
  const snapshot = async (): Promise<void> => {
    const cut = takeSnapshot(state, hub, Date.now());
    const pending = last;
    const streamSeq = pending ? (await pending).seq : await lastSequence(link);
    await putSnapshot(link, { ...cut, streamSeq });
  };
  sub.add(
    interval(opts.snapshotIntervalMs)
      .pipe(
        startWith(0),
        concatMap(() => from(snapshot().catch((e: unknown) => opts.log.warn({ err: String(e) }, 'cluster: snapshot not stored')))),
      )
      .subscribe(),
  );
  return sub;
}
