import { realClock, type Clock } from '../src/core/clock.js';
import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { connectable, interval, Observable, Subject, Subscription } from 'rxjs';
import { STALL_MS, type LinkHealth } from '../src/cluster/health.js';
import { getSnapshot, type ClusterLink } from '../src/cluster/link.js';
import { Reorder } from '../src/cluster/order.js';
import { EPOCH_HEADER, SEQ_HEADER } from '../src/cluster/publisher.js';
import { restoreSnapshot, type StateSnapshot } from '../src/cluster/snapshot.js';
import { decodeMessage } from '../src/cluster/subjects.js';
import type { Logger } from '../src/core/log.js';
import type { FeedEvent, NormalizedEvent } from '../src/core/types.js';
import { applyToState } from '../src/pipeline/operators.js';
import type { EngineState } from '../src/state/engine.js';
import type { WsHub } from '../src/ws/hub.js';
import type { Ingest } from './ingest.js';

/** A consumer that ends or fails (NATS gone, the stream recreated) is opened again after this long. */
const REOPEN_MS = 1_000;
/** How often the edge looks for a stalled stream. */
const CHECK_MS = 500;

/** Where an edge is in the core's stream: the last message applied, by stream sequence and by the core's numbering. */
interface Cursor {
  readonly streamSeq: number;
  readonly pubSeq: number;
  readonly epoch: number;
}

/** What a follower needs besides the link. */
export interface FollowDeps {
  readonly state: EngineState;
  readonly hub: WsHub;
  readonly health: LinkHealth;
  readonly log: Logger;
  /** Venue labels whose subscribers hear of the link's interruptions. */
  readonly venues: readonly string[];
  readonly bootstrapTimeoutMs: number;
  /** The engine's clock (default: wall time). */
  readonly clock?: Clock | undefined;
}

/**
 * The ingest of a cluster edge: the core's stream from the message after its snapshot, in the
 * core's numbering (`Cb-Seq`). Normalized events are applied to the state, so REST answers like
 * the core; the core's publications go to the hub as they are (`accept`: the core's seq and
 * epoch), so every edge sends the same numbers for the same update. Feed-status notices are the
 * edge's own: the core's feed events and this edge's link (NATS unreachable, or the stream silent
 * past STALL_MS) reach subscribers as FEED_INTERRUPTED / FEED_READY. Messages the core sent again
 * are put back in its order (src/cluster/order.ts); a hole that stays (the core dropped messages
 * while NATS was away, the window moved past the edge) or a new core's epoch makes the edge start
 * again from a snapshot that covers it, and send its clients a snapshot of each topic they hold.
 * Nothing flows before start().
 */
export function followFlow(link: ClusterLink, snap: StateSnapshot, deps: FollowDeps): Ingest {
  const events$ = connectable(followStream(link, snap, deps).pipe(applyToState(deps.state, deps.clock)), {
    connector: () => new Subject<NormalizedEvent>(),
    resetOnDisconnect: false,
  });
  return { feeds: [], events$, start: () => events$.connect() };
}

/** The link's interruptions and recoveries, told to every venue's subscribers. */
function tellLink(deps: FollowDeps, up: boolean, detail: string): void {
  for (const venue of deps.venues) {
    const now = (deps.clock ?? realClock).now();
    const ev: FeedEvent = { type: 'feed', venue, state: up ? 'recovered' : 'stalled', detail, timestamp: now, localTimestamp: now };
    deps.hub.onFeedEvent(ev);
  }
}

function followStream(link: ClusterLink, snap: StateSnapshot, deps: FollowDeps): Observable<NormalizedEvent> {
  const { hub, health, log } = deps;
  const clock = deps.clock ?? realClock;
  return new Observable<NormalizedEvent>((sub) => {
    const teardown = new Subscription();
    let stopped = false;
    let close: (() => void) | undefined;
    let cursor: Cursor = { streamSeq: snap.streamSeq, pubSeq: snap.pubSeq, epoch: snap.epoch };
    const order = new Reorder<JsMsg>(snap.pubSeq + 1);
    const changed = (up: boolean, detail: string): void => {
      log.warn({ ...health.status() }, up ? 'edge: following the core stream again' : `edge: ${detail}`);
      tellLink(deps, up, detail);
    };
    let reopened = clock.now();
    teardown.add(
      interval(CHECK_MS, clock.scheduler).subscribe(() => {
        const now = clock.now();
        if (health.update(now)) changed(!health.interrupted, 'the core stream is silent (NATS or the core is away)');
        // Silent with NATS reachable: the consumer may not have survived a server restart; open a new one.
        if (health.interrupted && health.natsConnected && now - reopened > STALL_MS) {
          reopened = now;
          close?.();
        }
      }),
    );
    void (async () => {
      for await (const s of link.nc.status()) {
        if ((s.type === 'disconnect' || s.type === 'reconnect') && health.nats(s.type === 'reconnect', clock.now()))
          changed(!health.interrupted, 'NATS is unreachable');
      }
    })();
    /** Puts each message in the core's order and applies it: false when the edge must re-bootstrap (a hole that stays, a new core). */
    const apply = (m: JsMsg): boolean => {
      const epoch = Number(m.headers?.get(EPOCH_HEADER));
      const n = Number(m.headers?.get(SEQ_HEADER));
      if (!Number.isFinite(epoch) || !Number.isFinite(n) || epoch < cursor.epoch) return true;
      if (epoch !== cursor.epoch) return false;
      if (health.message(m.seq, clock.now())) changed(true, '');
      const ready = order.offer(n, m, clock.now());
      if (ready === 'gap') return false;
      for (const r of ready) deliver(r);
      return true;
    };
    const deliver = (m: JsMsg): void => {
      cursor = { streamSeq: Math.max(cursor.streamSeq, m.seq), pubSeq: Number(m.headers?.get(SEQ_HEADER)), epoch: cursor.epoch };
      const d = decodeMessage(m.subject, m.data);
      if (d.kind === 'ws' && !d.p.topic.startsWith('status:')) hub.accept(d.p);
      else if (d.kind === 'ev') {
        sub.next(d.ev);
        if (d.ev.type === 'feed') hub.onFeedEvent(d.ev);
      }
    };
    /** Where a (re)opened consumer starts: the first message held past a hole, else the one after the last applied. */
    const startSeq = (): number => {
      let from = cursor.streamSeq + 1;
      for (const m of order.pending()) from = Math.min(from, m.seq);
      order.clear();
      return from;
    };
    const rebootstrap = async (epoch: number, n: number): Promise<void> => {
      health.rebootstrap(true);
      tellLink(deps, false, 'the edge missed messages of the core stream; starting again from a snapshot');
      log.warn({ cursor, epoch, n }, 'edge: out of the core numbering, re-bootstrapping from a snapshot');
      const s = await covering(link, epoch, n, deps.bootstrapTimeoutMs, () => stopped);
      if (!s) return;
      restoreSnapshot(deps.state, s);
      hub.adoptSeqs(s.seqs, s.epoch);
      hub.resnapshot();
      cursor = { streamSeq: s.streamSeq, pubSeq: s.pubSeq, epoch: s.epoch };
      order.clear(s.pubSeq + 1);
      health.epoch = s.epoch;
      health.rebootstrap(false);
      tellLink(deps, true, 'started again from the core snapshot');
    };
    void (async () => {
      while (!stopped) {
        let out: { epoch: number; n: number } | undefined;
        try {
          const consumer = await link.js.consumers.get(link.settings.stream, {
            deliver_policy: DeliverPolicy.StartSequence,
            opt_start_seq: startSeq(),
          });
          const messages = await consumer.consume();
          close = () => void messages.close();
          if (stopped) return close();
          for await (const m of messages) {
            if (apply(m)) continue;
            out = { epoch: Number(m.headers?.get(EPOCH_HEADER)), n: Number(m.headers?.get(SEQ_HEADER)) };
            close();
            break;
          }
        } catch (e) {
          if (!stopped) log.warn({ err: String(e) }, 'edge: the core stream consumer failed; reopening');
        }
        if (out) await rebootstrap(out.epoch, out.n).catch((e: unknown) => log.warn({ err: String(e) }, 'edge: re-bootstrap failed'));
        else if (!stopped) await new Promise((r) => setTimeout(r, REOPEN_MS));
      }
    })();
    return () => {
      stopped = true;
      close?.();
      teardown.unsubscribe();
    };
  });
}

/** The newest snapshot of core `epoch` that holds message `n`'s predecessors (taken after the gap), waiting for one. */
async function covering(link: ClusterLink, epoch: number, n: number, timeoutMs: number, stopped: () => boolean): Promise<StateSnapshot | undefined> {
  while (!stopped()) {
    const s = await getSnapshot(link, timeoutMs).catch(() => undefined);
    if (s && s.epoch === epoch && s.pubSeq >= n - 1) return s;
    await new Promise((r) => setTimeout(r, 250));
  }
  return undefined;
}
