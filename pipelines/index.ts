import { EMPTY, Subscription } from 'rxjs';
import type { KeyStore } from '../src/access/keys.js';
import type { Capture, CaptureSettings } from '../src/capture/index.js';
import { realClock, type Clock } from '../src/core/clock.js';
import type { Logger } from '../src/core/log.js';
import type { Persistence } from '../src/persist/store.js';
import type { EngineState } from '../src/state/engine.js';
import { clockSchedule, Turn } from '../src/pipeline/turn.js';
import type { WsHub } from '../src/ws/hub.js';
import type { FanoutTarget } from '../src/ws/route.js';
import { captureFlow, flushRecorder } from './capture.js';
import type { HistoryClient } from '../src/history/client.js';
import { fanoutFlow, feedEventsFlush, keyFlow, webhookFlow } from './fanout.js';
import type { Ingest } from './ingest.js';
import { persistenceFlow, type PersistenceOptions } from './persistence.js';
import { signalFlow, type SignalRooms } from './signals.js';

export interface Flows {
  readonly state: EngineState;
  readonly ingest: Ingest;
  readonly persistence: Persistence;
  readonly persistenceOptions: PersistenceOptions;
  readonly rooms: SignalRooms;
  /** Absent in a process that serves no WebSocket; a WebSocket replay session's router has no keys to follow. */
  readonly hub?: (FanoutTarget & Partial<Pick<WsHub, 'keyChanged'>>) | undefined;
  /** The key table whose changes reach the hub's open connections (`keyFlow`). */
  readonly keys?: Pick<KeyStore, 'changes$'> | undefined;
  readonly log: Logger;
  /** The per-turn flush of the conflated fan-out and arb/EV (default: one of its own, on setImmediate, as a unit of `clock`). */
  readonly turn?: Turn | undefined;
  /** The capture log the feeds append to: its flush markers, writes and retention (absent: capture off). */
  readonly capture?: { readonly capture: Capture; readonly settings: CaptureSettings; readonly history?: HistoryClient | undefined } | undefined;
  /** The one clock every timer and time read of the flows takes (default: wall time). */
  readonly clock?: Clock | undefined;
  /** Told where the default turn flushes (a recorder: the replay flushes at the same places and times). */
  readonly flushed?: ((at: number) => void) | undefined;
  /** Told the clock's time when the flows are wired (their timers count from it: a replay's clock starts there). */
  readonly wired?: ((at: number) => void) | undefined;
}

/**
 * Wires the process. The order of effects of one state change is the order below: each flow
 * subscribes to the state's change streams in turn, and a stream calls its subscribers in
 * subscription order. Each store announces its change as soon as it has applied it (a book change
 * before the top of book it moves, which is a quote change of its own). Fan-out and arb/EV are
 * conflated: per change they only mark what is dirty, and one flush per event-loop turn (a shared
 * `Turn`, src/pipeline/turn.ts, scheduled with setImmediate so a socket read's frames are all in)
 * publishes each dirty market and recomputes each dirty group once, the fan-out's flusher before
 * the signals'. For the book deltas of one turn:
 *   1. state (the ingest operator applies each delta: book, then top of book and candle)
 *   2. persistence (each book and quote is marked for the next snapshot as it changes; trades and
 *      closed candles are appended), so nothing a client saw can be missing from a snapshot;
 *   3. fan-out at the flush (one orderbook and at most one prices message per dirty market, with
 *      the latest frame's times), so a client sees the book before what follows from it;
 *   4. signals (matching at once; arb/EV of each dirty group at the flush, whose changes fan out as
 *      arb/ev messages; wallets and alerts at once);
 *   5. webhooks (opportunity lifecycle events, emitted by the recomputes of step 4, alerts and feed
 *      events are enqueued for delivery).
 * A feed-health event flushes the turn before its warning goes out. Ingest starts last, once every
 * consumer is in place. test/pipelines/order.test.ts holds the order to this.
 */
export function startPipelines(f: Flows): Subscription {
  const sub = wireFlows(f);
  sub.add(f.ingest.events$.subscribe({ error: (e: unknown) => f.log.error({ err: String(e) }, 'ingest pipeline failed') }));
  sub.add(f.ingest.start());
  return sub;
}

/**
 * Everything downstream of the state, in the order above, without starting ingest: for a process
 * (or a test) that applies events to the state itself.
 */
export function wireFlows(
  f: Omit<Flows, 'ingest' | 'log'> & {
    readonly ingest?: Pick<Ingest, 'events$'>;
    /**
     * false: the state is not written to the store (no snapshots, catalog flushes, trade and candle
     * appends). A pipeline replay: nothing reads its temporary store back, and none of those writes
     * changes the state, the timers' order or what the signals compute. Default true.
     */
    readonly persist?: boolean;
  },
): Subscription {
  const sub = new Subscription();
  const clock = f.clock ?? realClock;
  const turn = f.turn ?? new Turn(clockSchedule(clock, flushRecorder(f.capture?.capture, f.flushed)));
  // One unit of the clock: every timer of the flows counts from the same time.
  clock.run(clock.now(), () => {
    if (f.capture) sub.add(captureFlow(f.capture.capture, f.capture.settings, clock, f.state.books, f.capture.history));
    if (f.persist !== false) sub.add(persistenceFlow(f.state, f.persistence, f.persistenceOptions, clock));
    if (f.hub) sub.add(fanoutFlow(f.ingest?.events$ ?? EMPTY, f.state, f.hub, f.rooms.signals, f.rooms.alerts, turn));
    // Without a hub (a replay) a feed-health event still flushes the turn first, as the fan-out does before its warning.
    else sub.add(feedEventsFlush(f.ingest?.events$ ?? EMPTY, turn));
    const hub = f.hub;
    if (hub?.keyChanged && f.keys) sub.add(keyFlow(f.keys, { keyChanged: (r) => hub.keyChanged?.(r) }));
    sub.add(signalFlow(f.state, f.rooms, turn, clock));
    if (f.rooms.webhooks) sub.add(webhookFlow(f.ingest?.events$ ?? EMPTY, f.rooms.webhooks, f.rooms.signals, f.rooms.alerts, clock));
    f.wired?.(clock.now());
  });
  return sub;
}
