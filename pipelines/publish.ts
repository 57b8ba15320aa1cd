import { realClock, type Clock } from '../src/core/clock.js';
import { concatMap, from, interval, startWith, Subscription, type Observable } from 'rxjs';
import { lastSequence, putSnapshot, type ClusterLink } from '../src/cluster/link.js';
import { StreamPublisher } from '../src/cluster/publisher.js';
import { takeSnapshot } from '../src/cluster/snapshot.js';
import { encodeBody, evSubject, HB_SUBJECT, wsSubject } from '../src/cluster/subjects.js';
import type { Logger } from '../src/core/log.js';
import type { NormalizedEvent } from '../src/core/types.js';
import type { EngineState } from '../src/state/engine.js';
import type { WsHub } from '../src/ws/hub.js';

/** The core's heartbeat period: edges call the stream stalled after a few missed beats. */
export const HEARTBEAT_MS = 1_000;

/**
 * The publisher of a cluster core: every normalized event (which an edge applies to its state),
 * every publication of the hub (topic, body, and the seq and epoch assigned here once) and a
 * heartbeat every HEARTBEAT_MS go to the JetStream stream in the order they happen, numbered
 * (src/cluster/publisher.ts: bounded while NATS is away). Every `snapshotIntervalMs` (and at
 * once) the state is cut and stored with the stream sequence and number of the last message sent
 * before the cut, so an edge that starts from it follows the stream from the next one; no cut is
 * taken while messages wait in the buffer (their stream sequence is not known yet).
 */
export function publishFlow(
  link: ClusterLink,
  events$: Observable<NormalizedEvent>,
  hub: WsHub,
  state: EngineState,
  opts: { snapshotIntervalMs: number; log: Logger; buffer?: number | undefined; clock?: Clock | undefined },
): { readonly subscription: Subscription; readonly publisher: StreamPublisher } {
  const publisher = new StreamPublisher(
    link,
    hub.epoch,
    (e, stats) => {
      if (stats.failed % 1000 === 1) opts.log.warn({ err: String(e), ...stats }, 'cluster: stream publish failed');
    },
    { capacity: opts.buffer },
  );
  const clock = opts.clock ?? realClock;
  const sub = new Subscription();
  sub.add(events$.subscribe((ev) => publisher.send(evSubject(ev), encodeBody(ev))));
  sub.add(hub.published$.subscribe((p) => publisher.send(wsSubject(p.topic), encodeBody(p))));
  sub.add(interval(HEARTBEAT_MS, clock.scheduler).subscribe(() => publisher.send(HB_SUBJECT, new Uint8Array(0))));
  void (async () => {
    for await (const s of link.nc.status()) {
      if (s.type === 'disconnect') opts.log.warn({ buffered: publisher.stats.buffered }, 'cluster: NATS unreachable, buffering');
      if (s.type === 'disconnect' || s.type === 'reconnect') publisher.setConnected(s.type === 'reconnect');
    }
  })();
  const snapshot = async (): Promise<void> => {
    if (!publisher.drained) return;
    const cut = takeSnapshot(state, hub, clock.now());
    const pubSeq = publisher.sent;
    const ack = publisher.lastAck;
    // Nothing sent yet: the stream's end (another epoch's messages) is where an edge starts.
    const streamSeq = ack ? (await ack).seq : await lastSequence(link);
    if (!ack && publisher.sent !== 0) return;
    await putSnapshot(link, { ...cut, streamSeq, pubSeq });
  };
  sub.add(
    interval(opts.snapshotIntervalMs, clock.scheduler)
      .pipe(
        startWith(0),
        concatMap(() => from(snapshot().catch((e: unknown) => opts.log.warn({ err: String(e) }, 'cluster: snapshot not stored')))),
      )
      .subscribe(),
  );
  return { subscription: sub, publisher };
}
