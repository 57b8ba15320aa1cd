import type * as UWS from 'uWebSockets.js';
import type { KeyRecord, KeyStore } from '../access/keys.js';
import type { Plan, PlanName } from '../access/plans.js';
import type { VenueDirectory } from '../venues/directory.js';
import { realClock, type Clock } from '../core/clock.js';
import type { OrderBook } from '../core/book.js';
import type { Logger } from '../core/log.js';
import type { FeedEvent, FrameTimes } from '../core/types.js';
import type { HttpServer } from '../server/http.js';
import type { GroupSignals } from '../signals/engine.js';
import type { OpportunityRecord } from '../signals/lifecycle/record.js';
import type { EngineState } from '../state/engine.js';
import type { QuoteRecord } from '../state/quotes.js';
import type { StoredTrade } from '../state/trades.js';
import type { Alert } from '../signals/alerts.js';
import { WsAuth, WsTokens, type Admission, type IssuedToken } from './auth.js';
import { Backpressure, Retained } from './backpressure.js';
import { ClientProtocol, type GameLookup, type SignalReader } from './client-protocol.js';
import { isAuthed, newConn, type Conn, type Socket, type UwsSocket } from './conn.js';
import { AUTH_TIMEOUT_MS, CLOSE, CODES, MESSAGE_BUDGET, MessageBudget, type ClientMessage } from './protocol.js';
import { Publisher, type Publication } from './publish.js';
import type { StoredAlerts } from './replay-alerts.js';
import { ReplaySessions, type ReplayServerDeps } from './replay-session.js';
import { HubRouter } from './route.js';
import type { Replay } from './resume.js';
import { KeyBudget } from './key-budget.js';
import { Subscriptions } from './subscriptions.js';
import { Topics } from './topics.js';

export { priceBody } from './bodies.js';
export type { GameLookup, SignalReader } from './client-protocol.js';
export type { Publication } from './publish.js';
export type { Replay } from './resume.js';

/** What the hub reads from and serves on. */
export interface HubDeps {
  readonly http: HttpServer;
  /** The WebSocket path, e.g. /api/v2/ws. */
  readonly path: string;
  readonly state: EngineState;
  readonly venues: VenueDirectory;
  readonly keys: KeyStore;
  readonly plans: Readonly<Record<PlanName, Plan>>;
  readonly log: Logger;
  readonly games?: GameLookup | undefined;
  readonly signals?: SignalReader | undefined;
  /** smart_money and fade_finder are served when true (their alerts arrive through `onAlert`). */
  readonly alerts?: boolean | undefined;
  /** Where the hub reads time (default: wall time). */
  readonly clock?: Clock | undefined;
  /** WebSocket replays of the capture log (replay-session.ts); absent: a replay message is refused. */
  readonly replay?: (Pick<ReplayServerDeps, 'config' | 'source' | 'maxConcurrent'> & { readonly alerts?: StoredAlerts | undefined }) | undefined;
}

export interface HubOptions {
  /** Above this many buffered bytes a client gets coalesced updates (latest per topic) instead of every one. */
  readonly coalesceBytes?: number;
  /** Above this many buffered bytes a client is disconnected with a reason. */
  readonly dropBytes?: number;
  /** A client coalescing this long without catching up is disconnected with a reason (the second bound in time). */
  readonly stallMs?: number;
  /** Subscribe/unsubscribe messages allowed per connection per second. */
  readonly subscribeRate?: number;
  readonly idleTimeoutSec?: number;
  /** Largest client message (bytes); a larger one closes with 1009 (default 64 KB). */
  readonly maxPayload?: number;
  /** Client messages of any kind per connection: a burst, then so many a second (protocol.ts MessageBudget). */
  readonly messageBudget?: { readonly perSecond: number; readonly burst: number };
  readonly bookDepth?: number;
  /** The epoch to announce (an edge takes the core's); default: this process's start. */
  readonly epoch?: number;
  /** Publish every update whether or not a client here listens, so `published$` carries them all (a cluster core). */
  readonly exportAll?: boolean;
  /** The published messages of a topic after `seq`, in order (a cluster edge reads them off the stream), for `resume`. */
  readonly replay?: Replay;
  /** How long a connection opened without a key has to log in (`{"action":"auth",…}`) before it is closed with 4002. */
  readonly authTimeoutMs?: number;
  /** How long a token of POST /ws-token opens a connection (default 5 minutes). */
  readonly tokenTtlMs?: number;
  /** Market ids a key's connections may subscribe or unsubscribe together: so many a second, and a burst (key-budget.ts). */
  readonly keyIds?: { readonly perSecond: number; readonly burst: number };
}

/** Default of `HubOptions.keyIds`: a pro key subscribes its 5,000 ids per connection on 2 connections at once, then 2,000 a second. */
export const KEY_IDS = { perSecond: 2_000, burst: 10_000 } as const;

/**
 * The WebSocket front: /api/v2/ws on the same uWS app, composed of rooms that each hold one
 * concern: `auth.ts` (who may connect: the access layer's key check and the per-key cap),
 * `topics.ts` (seq per topic, which topics are held), `bodies.ts` (message bodies),
 * `publish.ts` (serialize once, publish text or bytes), `subscriptions.ts`, `client-protocol.ts`
 * (client messages), `resume.ts` (a cluster edge's replay) and `backpressure.ts` (coalesce, then
 * close with 4008). This class installs the route and routes state changes to topics: fan-out is
 * uWS pub/sub on topics `<channel>:<venue slug>:<market id>`, each update serialized once and
 * published once, whatever the number of subscribers. Venue disconnects and gaps reach subscribers
 * of that venue as FEED_INTERRUPTED warnings, a resync as FEED_READY.
 */
export class WsHub {
  private readonly conns = new Set<UwsSocket>();
  private readonly topics: Topics;
  private readonly retained = new Retained();
  private readonly pub: Publisher;
  private readonly subscriptions: Subscriptions;
  private readonly backpressure: Backpressure;
  private readonly protocol: ClientProtocol;
  private readonly auth: WsAuth;
  private readonly keyBudget: KeyBudget;
  private readonly router: HubRouter;
  private readonly replays: ReplaySessions | undefined;
  private sweep: NodeJS.Timeout | undefined;
  private readonly app: UWS.TemplatedApp;
  private readonly clock: Clock;
  private readonly state: EngineState;
  private readonly venues: VenueDirectory;
  private readonly log: Logger;

  /**
   * Installs the /ws route on the server's uWS app. The hub reads state, games and signals through
   * `deps`; what it publishes arrives through the `on*` methods, which pipelines/fanout.ts calls.
   */
  constructor(
    deps: HubDeps,
    private readonly opts: HubOptions = {},
  ) {
    ({ state: this.state, venues: this.venues, log: this.log } = deps);
    this.clock = deps.clock ?? realClock;
    this.app = deps.http.app;
    const catalogVenue = this.venues.withCapability('catalog');
    this.topics = new Topics(
      (t) => this.app.numSubscribers(t),
      catalogVenue ? `${catalogVenue.slug}_prices` : undefined,
      opts.exportAll === true,
      (t) => this.retained.keeps(t),
    );
    this.pub = new Publisher((t, m) => this.app.publish(t, m), this.topics, this.retained, this.clock, opts.epoch ?? this.clock.now());
    this.subscriptions = new Subscriptions(this.topics, this.retained);
    this.router = new HubRouter({
      state: this.state,
      venues: this.venues,
      games: deps.games,
      topics: this.topics,
      pub: this.pub,
      bookDepth: opts.bookDepth ?? 20,
    });
    const coalesceBytes = opts.coalesceBytes ?? 256 * 1024;
    const dropBytes = opts.dropBytes ?? 8 * 1024 * 1024;
    this.backpressure = new Backpressure({ coalesceBytes, dropBytes, stallMs: opts.stallMs ?? 10_000 }, this.topics, this.retained, this.log, this.clock);
    this.auth = new WsAuth(deps.keys, deps.plans, new WsTokens(this.clock, opts.tokenTtlMs ?? 5 * 60_000));
    this.keyBudget = new KeyBudget((opts.keyIds ?? KEY_IDS).perSecond, (opts.keyIds ?? KEY_IDS).burst);
    this.replays =
      deps.replay &&
      new ReplaySessions({
        ...deps.replay,
        alerts: deps.replay.alerts && { store: deps.replay.alerts, state: this.state },
        venues: this.venues,
        log: this.log,
        clock: this.clock,
        bookDepth: opts.bookDepth ?? 20,
        highWater: coalesceBytes / 2,
        send: (ws, body) => this.protocol.send(ws, body),
        resolve: (raw, ch) => this.protocol.resolve(raw, ch),
        channelsOf: (plan) => this.protocol.channelsOf(plan),
      });
    this.protocol = new ClientProtocol({
      state: this.state,
      venues: this.venues,
      games: deps.games,
      signals: deps.signals,
      alerts: deps.alerts === true,
      topics: this.topics,
      subscriptions: this.subscriptions,
      backpressure: this.backpressure,
      clock: this.clock,
      epoch: () => this.pub.epoch,
      isOpen: (ws) => this.conns.has(ws as UwsSocket),
      subscribeRate: opts.subscribeRate ?? 20,
      maxPayload: this.maxPayload(),
      bookDepth: opts.bookDepth ?? 20,
      replay: opts.replay,
      login: (ws, c, m) => this.login(ws, c, m),
      keyBudget: this.keyBudget,
      snapshotBytes: coalesceBytes,
      replays: this.replays,
      pricesShown: (venue, id) => {
        const q = this.state.quotes.get(venue, id);
        if (q) this.router.snapshotted(q);
      },
    });
    this.install(deps.path);
    this.sweep = setInterval(() => this.backpressure.sweep(this.conns), 100);
    this.sweep.unref();
  }

  /** Announced in every message; a cluster edge takes a new core's with its seqs (adoptSeqs). */
  get epoch(): number {
    return this.pub.epoch;
  }

  set epoch(e: number) {
    this.pub.epoch = e;
  }

  /** Every publication, as published (observed by a cluster core's publisher). */
  get published$(): Publisher['published$'] {
    return this.pub.published$;
  }

  /** Messages published (each counted once, however many subscribers). */
  get published(): number {
    return this.pub.published;
  }

  /** Clients disconnected for not reading. */
  get dropped(): number {
    return this.backpressure.dropped;
  }

  /** A trade of a live game's market: its `trade` message (route.ts). */
  onTrade(t: StoredTrade): void {
    this.router.onTrade(t);
  }

  /** A change of a group's opportunities: `arb` and `ev` messages (route.ts). */
  onSignals(g: GroupSignals): void {
    this.router.onSignals(g);
  }

  /** An opportunity closed: `arb_expired` / `ev_expired` (route.ts). */
  onExpired(r: OpportunityRecord): void {
    this.router.onExpired(r);
  }

  /** An alert of the alert engine on its channel (route.ts). */
  onAlert(a: Alert): void {
    this.router.onAlert(a);
  }

  /** A message only connections in the hosted dialect read (route.ts). */
  publishHosted(topic: string, body: Readonly<Record<string, unknown>>, data: Readonly<Record<string, unknown>>): void {
    this.router.publishHosted(topic, body, data);
  }

  /** Feed health events (from the ingest stream) become warnings to that venue's subscribers. */
  onFeedEvent(ev: FeedEvent): void {
    this.router.onFeedEvent(ev);
  }

  /**
   * A publication whose seq and epoch a cluster core assigned: published here with those numbers,
   * so every edge sends the same seq for the same update.
   */
  accept(p: Publication): void {
    this.pub.accept(p);
  }

  /** The last seq of every topic (a cluster core's snapshot carries them). */
  seqs(): [string, number][] {
    return this.topics.seqs();
  }

  /** Takes the last seq of each topic from a cluster core's snapshot; another epoch's (a new core) replace all of them. */
  adoptSeqs(entries: Iterable<readonly [string, number]>, epoch = this.epoch): void {
    this.topics.adopt(entries, epoch !== this.epoch);
    this.epoch = epoch;
  }

  /**
   * Sends every client a snapshot of each streamed topic it holds, at the topic's current seq: a
   * cluster edge that started again from a core snapshot (a new epoch, or messages it missed) calls
   * it after adoptSeqs, so a client's sequence goes on from the snapshot instead of jumping.
   */
  resnapshot(): void {
    for (const ws of this.conns) {
      const c = ws.getUserData();
      ws.cork(() => {
        for (const [topic, ch] of c.topics) {
          const rest = topic.slice(ch.length + 1);
          const i = rest.indexOf(':');
          const v = i > 0 ? this.venues.bySlug.get(rest.slice(0, i)) : undefined;
          if (v) this.protocol.snapshot(ws, { topic, ch, v, id: rest.slice(i + 1) });
        }
      });
    }
  }

  /** A quote change: prices, the ticker channel and live games (route.ts); `at`: the venue frame behind it. */
  onQuote(q: QuoteRecord, at?: FrameTimes, book?: OrderBook): void {
    this.router.onQuote(q, at, book);
  }

  /** Whether no quote or book change can reach a subscriber now (route.ts). */
  quiet(): boolean {
    return this.router.quiet();
  }

  /** A book change: orderbook subscribers of the market (route.ts). */
  onBook(label: string, marketId: string, at?: FrameTimes, held?: OrderBook): void {
    this.router.onBook(label, marketId, at, held);
  }

  // ---- connections ---------------------------------------------------------------------

  private install(path: string): void {
    this.app.ws<Conn>(path, {
      // uWS drops a frame over its own limit without a close frame (1006): its limit is well above
      // ours, so that a message over ours gets 1009 and a reason from message().
      maxPayloadLength: this.maxPayload() * 16,
      idleTimeout: this.opts.idleTimeoutSec ?? 120,
      sendPingsAutomatically: true,
      // uWS skips a subscriber above this; the sweep acts earlier (coalesce) and at dropBytes.
      maxBackpressure: this.backpressure.maxBackpressure(),
      upgrade: (res, req, context) => this.upgrade(res, req, context),
      open: (ws) => this.open(ws),
      message: (ws, data, isBinary) => this.protocol.receive(ws, data, isBinary),
      drain: (ws) => {
        this.backpressure.drain(ws);
        this.replays?.drain(ws);
      },
      close: (ws) => this.onClose(ws),
    });
  }

  /**
   * The upgrade: a key (X-API-Key header or api_key query) or a token (token query) is checked
   * here, and a bad one refused with 401 and its reason (spec 6 rule 5: no login timeout for bad
   * credentials in the URL); with neither, the connection opens and must log in with its first
   * message (`login`) within `authTimeoutMs`.
   */
  private upgrade(res: UWS.HttpResponse, req: UWS.HttpRequest, context: UWS.us_socket_context_t): void {
    const query = new URLSearchParams(req.getQuery() ?? '');
    const key = req.getHeader('x-api-key') || query.get('api_key') || undefined;
    const token = query.get('token') || undefined;
    const secKey = req.getHeader('sec-websocket-key');
    const proto = req.getHeader('sec-websocket-protocol');
    const ext = req.getHeader('sec-websocket-extensions');
    let a: Admission | undefined;
    if (key !== undefined) a = this.auth.admit(key);
    else if (token !== undefined) a = this.auth.admitToken(token);
    if (a !== undefined && !a.ok) {
      const refused = a;
      res.cork(() => {
        res
          .writeStatus(refused.status)
          .writeHeader('content-type', 'application/json')
          .end(JSON.stringify({ error: refused.message, success: false, code: refused.code }));
      });
      return;
    }
    const budget = this.opts.messageBudget ?? MESSAGE_BUDGET;
    const c = newConn(a?.record, a?.plan, new MessageBudget(budget.perSecond, budget.burst, this.clock.now()));
    res.upgrade(c, secKey, proto, ext, context);
  }

  private open(ws: UwsSocket): void {
    const c = ws.getUserData();
    this.conns.add(ws);
    if (isAuthed(c)) return this.welcome(ws, c.key, c.plan);
    const ms = this.opts.authTimeoutMs ?? AUTH_TIMEOUT_MS;
    c.authTimer = this.clock.after(ms, () => {
      c.authTimer = undefined;
      if (!c.closed && !isAuthed(c))
        this.backpressure.closeWith(ws, c, CLOSE.AUTH_TIMEOUT, `no login within ${ms} ms: send {"action":"auth","api_key":"..."} first`);
    });
  }

  /** The connection is open as `key`: counted against the plan's cap, and told its plan and channels. */
  private welcome(ws: Socket, key: KeyRecord, plan: Plan): void {
    this.auth.opened(key.id);
    ws.send(JSON.stringify({ type: 'welcome', epoch: this.epoch, plan: plan.name, channels: this.protocol.channelsOf(plan), ts: this.clock.now() }));
  }

  /**
   * An `auth` message. Before login: the key (or token) goes through the same checks as at the
   * upgrade; accepted, the client gets `{"type":"auth","status":"authenticated",…}` then the
   * welcome; refused, an AUTH_FAILED (or CONNECTION_LIMIT) error naming the reason, and the
   * connection is closed with 4001 (4029). After login: the same key is acknowledged again (clients
   * that put the key in the URL and send auth too), anything else is a BAD_REQUEST.
   */
  private login(ws: Socket, c: Conn, m: Extract<ClientMessage, { type: 'auth' }>): void {
    if (isAuthed(c)) {
      const same = m.api_key !== undefined && this.auth.admitKeyOf(m.api_key, c.key);
      if (same) return this.protocol.send(ws, { type: 'auth', status: 'authenticated', key_id: c.key.id, plan: c.plan.name });
      return this.protocol.send(ws, {
        type: 'error',
        code: CODES.BAD_REQUEST,
        message: `this connection is already authenticated (${c.key.id}); open another connection for another key`,
      });
    }
    const a = m.token !== undefined ? this.auth.admitToken(m.token) : this.auth.admit(m.api_key);
    if (!a.ok) {
      const limit = a.status === '429 Too Many Requests';
      this.protocol.send(ws, { type: 'error', code: limit ? CODES.CONNECTION_LIMIT : CODES.AUTH_FAILED, reason: a.code, message: a.message });
      return this.backpressure.closeWith(ws, c, limit ? CLOSE.CONNECTION_LIMIT : CLOSE.UNAUTHORIZED, limit ? 'too many connections for this key' : a.code);
    }
    c.authTimer?.();
    c.authTimer = undefined;
    c.key = a.record;
    c.plan = a.plan;
    this.protocol.send(ws, { type: 'auth', status: 'authenticated', key_id: a.record.id, plan: a.plan.name });
    this.welcome(ws, a.record, a.plan);
  }

  /**
   * A key's record changed (pipelines/ wires KeyStore's changes here, on every process of a
   * cluster): a revoked key's connections are closed with 4003 and its unused tokens dropped; a
   * key now on another plan keeps its connections with what the new plan includes.
   */
  keyChanged(record: KeyRecord): void {
    if (record.revokedAt) this.auth.tokens.revoke(record.id);
    for (const ws of this.conns) {
      const c = ws.getUserData();
      if (c.closed || !isAuthed(c) || c.key.hash !== record.hash) continue;
      if (record.revokedAt) this.backpressure.closeWith(ws, c, CLOSE.KEY_REVOKED, 'API key has been revoked');
      else if (record.plan !== c.key.plan) {
        c.key = record;
        this.protocol.replan(ws, c, this.auth.planOf(record));
      }
    }
  }

  /** A token that opens one WebSocket connection for `key` within the token lifetime (POST /api/v2/ws-token). */
  issueToken(key: KeyRecord): IssuedToken {
    return this.auth.tokens.issue(key);
  }

  private onClose(ws: UwsSocket): void {
    const c = ws.getUserData();
    c.closed = true;
    c.authTimer?.();
    c.authTimer = undefined;
    this.conns.delete(ws);
    this.subscriptions.closed(c);
    this.replays?.closed(ws);
    if (isAuthed(c) && this.auth.closed(c.key.id) === 0) this.keyBudget.forget(c.key.id);
  }

  private maxPayload(): number {
    return this.opts.maxPayload ?? 64 * 1024;
  }

  /** Topics whose latest message is kept for coalescing clients (tests check it returns to 0). */
  get retainedTopics(): number {
    return this.retained.size;
  }

  connections(): number {
    return this.conns.size;
  }

  close(): void {
    if (this.sweep) clearInterval(this.sweep);
    for (const ws of this.conns) {
      const c = ws.getUserData();
      if (!c.closed) {
        c.closed = true;
        ws.end(CLOSE.SHUTDOWN, 'server shutting down');
      }
    }
  }
}
