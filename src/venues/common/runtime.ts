import { realClock, type Clock } from '../../core/clock.js';
import { laterTurn } from '../../core/later.js';
import { Observable, type Subscriber, type Subscription } from 'rxjs';
import type { MappingCapture } from '../../capture/sink.js';
import type { Protocol } from '../../config/schema.js';
import type { Logger } from '../../core/log.js';
import type { FeedEvent, NormalizedEvent } from '../../core/types.js';
import type { FeedContext, VenueFeed } from '../protocol.js';
import { feedEvent, FramePath, UpsertChanges, type EventSink, type FrameHooks } from './frames.js';
import { VenueHttpError } from './http.js';
import { PollStarts } from './polls.js';
import type { Mapper } from './mapper.js';
import { reconnectingSocket, type SocketEvent, type SocketOptions } from './socket.js';
import { FeedStats } from './stats.js';

/**
 * What a protocol's feed.ts supplies for one subscription of its feed: the mapper every frame and
 * REST document goes through, optional hooks on that frame path, and `start`, which sets the
 * protocol's work going on the runtime (catalog loop, streams, polls).
 */
export interface FeedSession extends FrameHooks {
  readonly mapper: Mapper;
  start(): void;
}

/** One reconnecting WebSocket of a feed: where, and the wire specifics of its (re)connects. */
export interface StreamSpec {
  readonly url: string;
  /** Handshake headers (signed API-key headers for venues that ask for them). */
  readonly headers?: Record<string, string> | undefined;
  /** Every open, after `feed` connected: send the subscribe commands. */
  readonly onOpen: (send: (data: string) => void) => void;
  /** When an open connection closes, before its books are reset and `disconnected` is emitted. */
  readonly onClose?: (() => void) | undefined;
  /** A text sent every `everyMs` while open (Polymarket drops a connection that stays silent). */
  readonly keepalive?: { readonly text: string; readonly everyMs: number } | undefined;
  /** Named in `connected` when a feed has several connections ("shard 2"). */
  readonly label?: (() => string | undefined) | undefined;
  /**
   * What an outage of this connection costs, when not every book: the instruments it carries
   * (one `disconnected` each) and how to reset only them. Undefined: the mapper resets, one
   * venue-wide `disconnected`.
   */
  readonly scope?: (() => { readonly instruments: readonly string[]; reset(): void } | undefined) | undefined;
}

/** A stream as the protocol sees it: whether it is open, and a send that drops while it is not. */
export interface Stream {
  readonly open: boolean;
  send(data: string): void;
}

/** How the runtime reaches the network; the default is the `ws` client. */
export interface RuntimeOptions {
  readonly createWebSocket?: SocketOptions['createWebSocket'];
}

/**
 * The runtime of one subscription to a feed: owns the frame path (parse, map, upsert
 * de-duplication), the `feed` events, timers, the catalog loop with its retry backoff, sockets
 * with reconnects, and the stats. Protocols call it; it calls back only through FeedSession and
 * StreamSpec.
 */
export class FeedRuntime {
  readonly venue: FeedContext['venue'];
  readonly endpoints: FeedContext['endpoints'];
  readonly ingest: FeedContext['ingest'];
  /** Receive stamps come from it, and the polls' starts; the runtime's other timers (retries, keepalives) are network-side and run on the OS's. */
  readonly clock: Clock;
  private readonly timeouts = new Set<NodeJS.Timeout>();
  private readonly intervals = new Set<NodeJS.Timeout>();
  /** Cancels of the polls' next starts, set on the engine clock. */
  private readonly cancels = new Set<() => void>();
  /** Releases of the polls' claims on the service's poll starts. */
  private readonly releases: (() => void)[] = [];
  /** Where each poll of the service claims its start (one per runtime when the service gives none). */
  private readonly polls: PollStarts;
  private readonly sockets: Subscription[] = [];
  private session: FeedSession | undefined;
  private path: FramePath | undefined;
  private closed = false;
  /** Polled venues: whether the last request reached the venue (undefined before the first). */
  private healthy: boolean | undefined;
  /** The capture log of this venue (absent: capture off, one check per frame). */
  private readonly capture: MappingCapture | undefined;
  /** Connections opened so far: each open gets the next id, which its frames and its reset carry. */
  private connections = 0;
  /** The capture record whose events are going out now (0: none, or not kept): each is handed to the capture with it (`mapped`). */
  private current = 0;
  /** Where the frame path delivers: `out`, or, with a capture, `out` after handing each event to the capture with its record (`mapped`). */
  private readonly sink: EventSink;

  constructor(
    ctx: FeedContext,
    readonly log: Logger,
    readonly stats: FeedStats,
    private readonly out: Subscriber<NormalizedEvent>,
    private readonly options: RuntimeOptions = {},
  ) {
    this.venue = ctx.venue;
    this.endpoints = ctx.endpoints;
    this.ingest = ctx.ingest;
    // A mapping writer: this runtime maps each record it appends and hands the events (`mapped`), so nothing maps it again.
    this.capture = ctx.capture?.mapping(ctx.venue.label);
    this.clock = ctx.clock ?? realClock;
    this.polls = ctx.polls ?? new PollStarts();
    const capture = this.capture;
    // Each event goes out with the record it was made of: the history index takes these instead of mapping the capture again.
    this.sink =
      capture === undefined
        ? out
        : {
            next: (e) => {
              capture.mapped(this.current, e);
              out.next(e);
            },
          };
  }

  /** Runs `f` (the frame path on what `seq` recorded) with `seq` as the record its events are made of. */
  private from(seq: number, f: () => void): void {
    const before = this.current;
    this.current = seq;
    try {
      f();
    } finally {
      this.current = before;
    }
  }

  /** The receive time of what arrives now (read right before the frame or event it stamps is emitted). */
  now(): number {
    return this.clock.now();
  }

  /** Whether the subscription has ended; long walks check it between requests. */
  get stopped(): boolean {
    return this.closed;
  }

  /** Attaches the protocol's session and starts it. */
  run(session: FeedSession): void {
    this.session = session;
    this.path = new FramePath(session.mapper, this.sink, new UpsertChanges(), session);
    // A fresh mapper from here on, made as its options say: a replay of the capture makes its own so.
    if (this.capture !== undefined) this.capture.session(session.mapper.replayOptions ?? {});
    session.start();
  }

  /** One frame or REST document through the frame path (parse, mapper, hooks, de-duplication). */
  frame(data: unknown, localTimestamp: number): void {
    const path = this.framePath();
    if (this.capture === undefined) path.push(data, localTimestamp);
    else this.from(this.capture.doc(data, localTimestamp), () => path.push(data, localTimestamp));
  }

  /** An event the protocol built itself; market upserts are de-duplicated like mapped ones. */
  emit(e: NormalizedEvent): void {
    const path = this.framePath();
    if (this.capture === undefined) path.emit(e);
    else this.from(this.capture.event(e), () => path.emit(e));
  }

  /** Emits a `feed` event of this venue, stamped now. */
  feed(state: FeedEvent['state'], detail?: string, instrument?: string): void {
    const e = feedEvent(this.venue.label, state, this.clock.now(), detail, instrument);
    // Replayed through the frame path's emit, which hands a `feed` event on as this does.
    if (this.capture !== undefined) this.capture.mapped(this.capture.event(e), e);
    this.out.next(e);
  }

  /** Runs `fn` after `ms` unless the subscription ended first. */
  later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timeouts.delete(t);
      if (!this.closed) fn();
    }, ms);
    this.timeouts.add(t);
  }

  /**
   * Resolves at a later turn of the event loop, after the socket reads and the turn's flush that
   * wait: a long piece of work (a polled page of hundreds of rows) goes in slices between them, so
   * the frames that arrive meanwhile are not held behind it. Resolves also once the subscription
   * ended; the caller checks `stopped`.
   */
  nextTurn(): Promise<void> {
    // Not a bare timer: on Node 20 two timers set a slice apart could run in one timers phase (see
    // laterTurn), and two slices went out with nothing read between them.
    return new Promise((resolve) => laterTurn(resolve));
  }

  /** Runs `fn` every `ms` until the subscription ends (the timer does not keep the process alive). */
  every(ms: number, fn: () => void): () => void {
    const t = setInterval(() => {
      if (!this.closed) fn();
    }, ms);
    t.unref?.();
    this.intervals.add(t);
    return () => {
      clearInterval(t);
      this.intervals.delete(t);
    };
  }

  /**
   * A poll: runs `run` now and again `ms` after each run ends, one at a time; a failed run is logged.
   * Each start is claimed from the service's `PollStarts` (moved later while another poll starts
   * within its gap) and set on the engine clock, so two polls never start in the same turn.
   */
  repeat(ms: number, run: () => Promise<void>, what: string): void {
    const poll = {};
    const start = (want: number): void => {
      if (this.closed) return;
      const cancel = this.clock.after(Math.max(0, this.polls.claim(poll, want) - this.clock.now()), () => {
        this.cancels.delete(cancel);
        if (!this.closed) tick();
      });
      this.cancels.add(cancel);
    };
    const tick = (): void => {
      run().then(
        () => start(this.clock.now() + ms),
        (e: unknown) => {
          this.log.warn({ err: errorMessage(e) }, `${what} failed`);
          start(this.clock.now() + ms);
        },
      );
    };
    this.releases.push(() => this.polls.release(poll));
    start(this.clock.now());
  }

  /**
   * The catalog loop: `walk` now, then `catalogRefreshMs` after each success (emitting `feed`
   * catalog with the detail `walk` returns). After a failed walk (`feed` error) it retries after
   * reconnectMinMs, doubling per failure, never longer than reconnectMaxMs or catalogRefreshMs.
   * `announceRecovery`: the first success after failures also emits `connected`.
   */
  catalog(walk: () => Promise<string | undefined>, opts: { readonly announceRecovery?: boolean } = {}): void {
    let failures = 0;
    const run = (): void => {
      walk().then(
        (detail) => {
          if (this.closed) return;
          if (failures > 0 && opts.announceRecovery === true) this.feed('connected', 'catalog reachable again');
          failures = 0;
          this.feed('catalog', detail);
          this.later(this.ingest.catalogRefreshMs, run);
        },
        (e: unknown) => {
          if (this.closed) return;
          this.httpFailed(e);
          this.log.warn({ err: errorMessage(e) }, 'catalog refresh failed');
          this.feed('error', `catalog: ${errorMessage(e)}`);
          const { reconnectMinMs, reconnectMaxMs, catalogRefreshMs } = this.ingest;
          this.later(Math.min(catalogRefreshMs, reconnectMaxMs, reconnectMinMs * 2 ** Math.min(failures++, 16)), run);
        },
      );
    };
    run();
  }

  /** A polled venue answered: `connected` on the first answer and after an outage (counted as a reconnect). */
  reachable(): void {
    if (this.healthy === true) return;
    if (this.healthy === false) this.stats.reconnects++;
    this.healthy = true;
    this.feed('connected');
  }

  /** A polled venue did not answer: `feed` error once per outage. */
  unreachable(e: unknown): void {
    this.httpFailed(e);
    if (this.healthy === false) return;
    this.healthy = false;
    this.feed('error', errorMessage(e));
  }

  /** Counts a REST body that was not JSON or failed its schema as a malformed frame. */
  httpFailed(e: unknown): void {
    const kind = e instanceof VenueHttpError ? e.kind : 'network';
    if (kind === 'json' || kind === 'schema') this.stats.malformedFrame(`http_${kind}`, errorMessage(e));
  }

  /** Opens a reconnecting WebSocket whose frames go through the frame path (see StreamSpec). */
  stream(spec: StreamSpec): Stream {
    const path = this.framePath();
    const mapper = this.session!.mapper;
    let send: ((data: string) => void) | undefined;
    let wasOpen = false;
    let stopKeepalive: (() => void) | undefined;
    const capture = this.capture;
    let conn = 0;
    const onSocket = (ev: SocketEvent): void => {
      if (ev.kind === 'message') {
        if (capture === undefined) path.push(ev.data, ev.localTimestamp);
        else {
          // Inline rather than `from` (no closure per frame): the hot path.
          const before = this.current;
          this.current = capture.frame(ev.data, conn, ev.localTimestamp, ev.bytes);
          try {
            path.push(ev.data, ev.localTimestamp);
          } finally {
            this.current = before;
          }
        }
        return;
      }
      stopKeepalive?.();
      stopKeepalive = undefined;
      if (ev.kind === 'open') {
        conn = ++this.connections;
        send = ev.send;
        if (wasOpen) this.stats.reconnects++;
        wasOpen = true;
        if (spec.keepalive) stopKeepalive = this.every(spec.keepalive.everyMs, () => send?.(spec.keepalive!.text));
        const attempts = ev.attempt > 1 ? `after ${ev.attempt} attempts` : undefined;
        const label = spec.label?.();
        this.feed('connected', label && attempts ? `${label}, ${attempts}` : (label ?? attempts));
        spec.onOpen(ev.send);
        return;
      }
      if (send === undefined) return; // a failed connect attempt: nothing was lost
      send = undefined;
      spec.onClose?.();
      const state = ev.stalled ? 'stalled' : 'disconnected';
      const detail = `${ev.code} ${ev.reason}; retry in ${ev.retryInMs} ms`;
      const scope = spec.scope?.();
      capture?.reset(conn, scope?.instruments);
      if (scope === undefined) {
        mapper.reset();
        this.feed(state, detail);
      } else {
        scope.reset();
        for (const i of scope.instruments) this.feed(state, detail, i);
      }
    };
    const { reconnectMinMs, reconnectMaxMs, heartbeatMs } = this.ingest;
    this.sockets.push(
      reconnectingSocket({
        url: spec.url,
        headers: spec.headers,
        log: this.log,
        minBackoffMs: reconnectMinMs,
        maxBackoffMs: reconnectMaxMs,
        heartbeatMs,
        createWebSocket: this.options.createWebSocket,
        now: () => this.clock.now(),
      }).subscribe({
        next: onSocket,
        error: (e: unknown) => this.feed('error', errorMessage(e)),
      }),
    );
    return {
      get open() {
        return send !== undefined;
      },
      send: (data) => send?.(data),
    };
  }

  /** Ends the subscription: timers, sockets. */
  stop(): void {
    this.closed = true;
    for (const t of this.timeouts) clearTimeout(t);
    for (const t of this.intervals) clearInterval(t);
    this.timeouts.clear();
    this.intervals.clear();
    for (const c of this.cancels) c();
    this.cancels.clear();
    for (const r of this.releases.splice(0)) r();
    for (const s of this.sockets) s.unsubscribe();
  }

  private framePath(): FramePath {
    if (!this.path) throw new Error('feed runtime: no session attached');
    return this.path;
  }
}

/**
 * A VenueFeed on the runtime: `events$` is cold; each subscription gets its own runtime and the
 * session `open` builds for it; unsubscribing stops both. Stats are the feed's, across subscriptions.
 */
export function createVenueFeed(ctx: FeedContext, protocol: Protocol, open: (rt: FeedRuntime) => FeedSession, options: RuntimeOptions = {}): VenueFeed {
  const log = ctx.log.child({ venue: ctx.venue.label, protocol });
  const stats = new FeedStats(log);
  const events$ = new Observable<NormalizedEvent>((sub) => {
    const rt = new FeedRuntime(ctx, log, stats, sub, options);
    rt.run(open(rt));
    return () => rt.stop();
  });
  return { venue: ctx.venue, stats, events$ };
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
