import type { Plan } from '../access/plans.js';
import { msOrIsoTime } from '../access/params.js';
import { windowRefusal, type ReplaySource } from '../api/replay.js';
import { iso } from '../core/clock.js';
import { readBatches, replayItems, type ReplayItem } from '../capture/index.js';
import type { Config, VenueConfig } from '../config/schema.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { EngineState } from '../state/engine.js';
import { itemTime } from '../replay/input.js';
import { replay, type ReplayRooms } from '../replay/run.js';
import type { VenueDirectory } from '../venues/directory.js';
import { Retained } from './backpressure.js';
import { snapshotBody } from './bodies.js';
import { wire, type Authed, type Socket } from './conn.js';
import { ALERT_CHANNELS, CODES, type AlertChannel, type ReplayMessage } from './protocol.js';
import { Publisher } from './publish.js';
import { AlertReplay, type StoredAlerts } from './replay-alerts.js';
import { gameLookup, HubRouter } from './route.js';
import { Topics } from './topics.js';

/** What the WebSocket replays read and answer through. */
export interface ReplayServerDeps {
  readonly config: Config;
  /** The capture log and its retention (the window check of GET /replay). */
  readonly source: Pick<ReplaySource, 'capture' | 'settings' | 'now'>;
  readonly venues: VenueDirectory;
  /**
   * The alerts the alert engine stored, which a replay of smart_money / fade_finder sends, and the
   * service's state, whose catalog names their markets as live did (absent: those channels are not replayed).
   */
  readonly alerts?: { readonly store: StoredAlerts; readonly state: EngineState } | undefined;
  readonly log: Logger;
  /** Wall time of the server: the pace of a replay at `speed` (the replay's own engine runs on a virtual clock). */
  readonly clock: Clock;
  /** Replays at once, all keys together (websocket.replayMaxConcurrent; 0: replays off). */
  readonly maxConcurrent: number;
  readonly bookDepth: number;
  /** Above this many bytes unread by the client, a replay waits for it to read (uWS's drain) instead of going on. */
  readonly highWater: number;
  /** Sends one message with the send time (the client protocol's `send`). */
  send(ws: Socket, body: Record<string, unknown>): void;
  /** A market id as the client gives it → venue and native id (the client protocol's `resolve`). */
  resolve(raw: string, ch: string): { id: string; v: VenueConfig } | undefined;
  /** The channels a plan includes. */
  channelsOf(plan: Plan): string[];
}

/** A topic a replay sends: a market's (with its venue and id), a channel's (arb, ev), a game's (live_games) or a venue's status. */
interface ReplayTopic {
  readonly topic: string;
  readonly ch: string;
  readonly v?: VenueConfig | undefined;
  readonly id?: string | undefined;
}

/** One pass of the pipeline replay (a seek back starts another): its router's topics and publisher. */
interface Run {
  readonly gen: number;
  /** Where the pass sends from, and the epoch it sends under (a seek forward moves both). */
  from: number;
  readonly held: Set<string>;
  readonly topics: Topics;
  readonly pub: Publisher;
  readonly rooms: ReplayRooms;
  begun: boolean;
  /** Every item of the pass has been read: a seek can no longer ride on it. */
  done: boolean;
}

/** One replay of one connection. */
interface Session {
  readonly id: string;
  readonly ws: Socket;
  readonly c: Authed;
  readonly from: number;
  readonly to: number;
  readonly speed: number | 'max';
  readonly topics: readonly ReplayTopic[];
  /** The stored alerts it sends (smart_money / fade_finder asked for), interleaved with the pipeline's items by time. */
  alerts: AlertReplay | undefined;
  /** Bumped by a seek and a stop: a run of an older generation sends nothing more and ends. */
  gen: number;
  run: Run | undefined;
  paused: boolean;
  stopped: boolean;
  /** Its slot (per key, per server) was given back. */
  released: boolean;
  restartAt: number | undefined;
  /** Receive time of the last item sent on (the replay's position). */
  position: number;
  /** Pace: the item of time t0 went out at wall0. */
  t0: number;
  wall0: number;
  /** Wakes a replay waiting (paused, pacing, or for the client to read). */
  wake: (() => void) | undefined;
  messages: number;
  readonly counts: Record<string, number>;
  events: number;
}

const REPLAYABLE = ['prices', 'orderbook', 'arb', 'ev', 'live_games'] as const;
const isAlertChannel = (ch: string): ch is AlertChannel => (ALERT_CHANNELS as readonly string[]).includes(ch);
/** Items a replay at `max` runs between two yields to the event loop, so live clients are served meanwhile. */
const SLICE = 64;

/**
 * WebSocket replays: `{"type":"replay",…}` runs the capture log through the same pipelines as
 * `crossbook replay` (src/replay/run.ts, a VirtualClock, its own temporary rooms) with a fan-out
 * router of its own (route.ts: the live hub's routing and body builders) on the replay's state, so
 * the client gets the messages the live channels sent, with their venue_ts and recv_ts. The books
 * are built from the start of the capture (a warm-up whose messages are built but not sent); at `from` the client gets each market's snapshot, then the updates at
 * `speed`× the recorded pace. Pause, resume, seek (sent from the new position under a new epoch: a
 * seek forward rides on the running pass, which applies the items up to there without sending them;
 * a seek back starts a new pass from the start of the capture) and stop are acknowledged. A client that does not read
 * pauses its replay (uWS's buffered amount past `highWater`; a drain resumes it): nothing is
 * buffered for it. Replays run in the server's process a slice of items at a time, bounded in
 * number per key (the plan's ws.replays) and per server (websocket.replayMaxConcurrent).
 * smart_money and fade_finder send the alerts live sent, read back from the alert engine's store
 * (replay-alerts.ts), each before the first item after its creation time and paced like them; a
 * replay of only those channels runs no pipeline and reads no capture.
 */
export class ReplaySessions {
  private readonly byConn = new Map<Socket, Map<string, Session>>();
  private readonly perKey = new Map<string, number>();
  private running = 0;
  private nextId = 1;
  private readonly tickerChannel: string | undefined;

  constructor(private readonly d: ReplayServerDeps) {
    const catalog = d.venues.withCapability('catalog');
    this.tickerChannel = catalog ? `${catalog.slug}_prices` : undefined;
  }

  /** Replays running now. */
  get active(): number {
    return this.running;
  }

  /** A replay message of an authenticated connection. */
  handle(ws: Socket, c: Authed, m: ReplayMessage): void {
    if (m.type === 'replay') return this.start(ws, c, m);
    const mine = this.byConn.get(ws);
    const s = m.replay_id !== undefined ? mine?.get(m.replay_id) : mine?.size === 1 ? [...mine.values()][0] : undefined;
    if (!s) return this.error(ws, CODES.REPLAY_UNKNOWN, `${m.type}: no replay ${m.replay_id ?? '(give replay_id)'} running on this connection`, m.replay_id);
    if (m.type === 'replay_pause') {
      s.paused = true;
      return this.ack(s, 'replay_paused', s.position);
    }
    if (m.type === 'replay_resume') {
      s.paused = false;
      this.repace(s, s.position);
      this.wake(s);
      return this.ack(s, 'replay_resumed', s.position);
    }
    if (m.type === 'replay_stop') {
      this.stop(s);
      return this.ack(s, 'replay_stopped', s.position);
    }
    if (!('at' in m)) return;
    const at = this.time(ws, 'at', m.at);
    if (at === undefined) return;
    if (at < s.from || at > s.to)
      return this.error(ws, CODES.BAD_REQUEST, `replay_seek: at ${iso(at)} is outside the replay's window ${iso(s.from)} .. ${iso(s.to)}`, s.id);
    if (!this.ahead(s, at)) {
      s.gen++;
      s.restartAt = at;
    }
    s.alerts?.seek(at);
    this.wake(s);
    this.ack(s, 'replay_seeked', at, at);
  }

  /**
   * A seek forward, past what the running pass has applied: the pass goes on to `at` sending
   * nothing, then sends from there under the epoch `at`, as a new pass from the start of the
   * capture would (the same items applied, the same router, the same seqs), without replaying what
   * this one already did. False when the pass cannot (a seek back, or none running yet).
   */
  private ahead(s: Session, at: number): boolean {
    const run = s.run;
    if (run === undefined || run.done || run.gen !== s.gen || s.restartAt !== undefined || at < s.position) return false;
    run.begun = false;
    run.from = at;
    run.pub.epoch = at;
    return true;
  }

  /** uWS's drain of a connection: its replays waiting for the client to read go on. */
  drain(ws: Socket): void {
    for (const s of this.byConn.get(ws)?.values() ?? []) this.wake(s);
  }

  /** A connection closed: its replays stop. */
  closed(ws: Socket): void {
    for (const s of this.byConn.get(ws)?.values() ?? []) this.stop(s);
  }

  private start(ws: Socket, c: Authed, m: Extract<ReplayMessage, { type: 'replay' }>): void {
    if (c.plan.blocked.includes('replay'))
      return this.error(ws, CODES.NOT_ENTITLED, `the ${c.plan.name} plan does not include replay (dev, pro and enterprise do)`);
    const from = this.time(ws, 'from', m.from);
    const to = from === undefined ? undefined : this.time(ws, 'to', m.to);
    if (from === undefined || to === undefined) return;
    if (from > to) return this.error(ws, CODES.BAD_REQUEST, `replay: from (${iso(from)}) is after to (${iso(to)})`);
    // The alert channels read the alert store alone: only a pipeline replay needs the capture to hold the window.
    const pipeline = m.channels.some((ch) => !isAlertChannel(ch));
    const refused = pipeline ? windowRefusal(this.d.source, from, to) : undefined;
    if (refused) return this.d.send(ws, { type: 'error', code: CODES.REPLAY_OUTSIDE_RETENTION, message: refused.message, ...refused.retained });
    const topics = this.topicsOf(ws, c, m);
    if (!topics) return;
    const keyCap = c.plan.ws.replays;
    const ofKey = this.perKey.get(c.key.id) ?? 0;
    if (this.d.maxConcurrent === 0)
      return this.error(ws, CODES.REPLAY_LIMIT, 'WebSocket replays are turned off on this server (websocket.replayMaxConcurrent 0)');
    if (keyCap !== 0 && ofKey >= keyCap)
      return this.error(
        ws,
        CODES.REPLAY_LIMIT,
        `the ${c.plan.name} plan runs ${keyCap} replay(s) at once per key (${ofKey} running): stop one or wait for replay_completed`,
      );
    if (this.running >= this.d.maxConcurrent)
      return this.error(ws, CODES.REPLAY_LIMIT, `this server runs ${this.d.maxConcurrent} replays at once and all are busy: try again shortly`);
    const alertChannels = topics.map((t) => t.ch).filter(isAlertChannel);
    const s: Session = {
      ...{ id: `r${this.nextId++}`, ws, c, from, to, speed: m.speed ?? 1, topics, alerts: undefined, gen: 0, run: undefined, paused: false },
      ...{ stopped: false, released: false, restartAt: undefined, position: from, t0: from, wall0: this.d.clock.now(), wake: undefined, messages: 0 },
      ...{ counts: {}, events: 0 },
    };
    if (alertChannels.length > 0) s.alerts = this.alertReplay(s, alertChannels);
    let mine = this.byConn.get(ws);
    if (!mine) this.byConn.set(ws, (mine = new Map()));
    mine.set(s.id, s);
    this.perKey.set(c.key.id, ofKey + 1);
    this.running++;
    const ids = topics.filter((t) => t.id !== undefined && t.ch !== 'status').map((t) => `${t.v!.slug}:${t.id!}`);
    const games = topics.filter((t) => t.ch === 'live_games').map((t) => t.topic.slice('live_games:'.length));
    this.d.send(ws, {
      ...{ type: 'replay_started', replay_id: s.id, from, to, speed: s.speed, channels: m.channels, market_ids: [...new Set(ids)] },
      ...(games.length > 0 ? { event_ids: games } : {}),
      epoch: from,
    });
    if (s.alerts) this.prunedWarning(s, alertChannels);
    (pipeline ? this.run(s) : this.runAlerts(s)).then(
      () => this.finish(s),
      (e: unknown) => {
        this.d.log.error({ err: String(e), replay: s.id }, 'websocket replay failed');
        if (!s.c.closed) this.error(ws, CODES.BAD_REQUEST, `the replay could not go on: ${(e as Error).message}`, s.id);
        this.finish(s, false);
      },
    );
  }

  /** The topics of a replay request, or undefined with the client answered (channel, plan, ids). */
  private topicsOf(ws: Socket, c: Authed, m: Extract<ReplayMessage, { type: 'replay' }>): ReplayTopic[] | undefined {
    const plan = this.d.channelsOf(c.plan);
    const ids = m.market_ids ?? [];
    const out = new Map<string, ReplayTopic>();
    const unknown = new Set<string>();
    const can = [...REPLAYABLE, ...(this.d.alerts ? ALERT_CHANNELS : []), ...(this.tickerChannel ? [this.tickerChannel] : [])];
    const alertCh = m.channels.find(isAlertChannel);
    // As live: an alert channel streams every alert of its feed. With a market channel beside it, market_ids are that channel's.
    if (alertCh !== undefined && ids.length > 0 && !(ids.length === 1 && ids[0] === '*') && !m.channels.some((ch) => this.marketChannel(ch)))
      return void this.error(ws, CODES.BAD_REQUEST, `replay: ${alertCh} streams every alert of its feed: send no market_ids (or ["*"])`);
    for (const ch of m.channels) {
      if (!can.includes(ch)) return void this.error(ws, CODES.BAD_REQUEST, `replay: channel "${ch}" cannot be replayed (channels: ${can.join(', ')})`);
      if (!plan.includes(ch)) return void this.error(ws, CODES.NOT_ENTITLED, `the ${c.plan.name} plan does not include the ${ch} channel`);
      // Channels of every group, or of every alert: one topic each, as a live subscription to all of it.
      if (ch === 'arb' || ch === 'ev' || isAlertChannel(ch)) {
        out.set(`${ch}:*`, { topic: `${ch}:*`, ch });
        continue;
      }
      if (ch === 'live_games') {
        // A game's event id as the window knew it: a past game need not be one the service knows now.
        if (!m.event_ids?.length) return void this.error(ws, CODES.BAD_REQUEST, 'replay: event_ids is required for the live_games channel (a non-empty list)');
        for (const id of m.event_ids) out.set(`live_games:${id}`, { topic: `live_games:${id}`, ch });
        continue;
      }
      if (ids.length === 0) return void this.error(ws, CODES.BAD_REQUEST, `replay: market_ids is required for the ${ch} channel (a non-empty list)`);
      for (const raw of ids) {
        const r = this.d.resolve(raw, ch);
        if (!r) {
          unknown.add(raw);
          continue;
        }
        out.set(`${ch}:${r.v.slug}:${r.id}`, { topic: `${ch}:${r.v.slug}:${r.id}`, ch, v: r.v, id: r.id });
        out.set(`status:${r.v.slug}`, { topic: `status:${r.v.slug}`, ch: 'status' });
      }
    }
    const cap = c.plan.ws.subscriptions;
    const n = [...out.values()].filter((t) => t.ch !== 'status').length;
    if (cap !== 0 && n > cap)
      return void this.error(ws, CODES.SUBSCRIPTION_LIMIT, `the ${c.plan.name} plan allows ${cap} subscriptions per connection (the replay asks ${n})`);
    if (unknown.size > 0)
      this.d.send(ws, {
        type: 'warning',
        code: CODES.UNKNOWN_ID,
        market_ids: [...unknown],
        message: 'unknown market id (a market id, not an event id, as the venue names it or as platform:market_id)',
      });
    if (n === 0) return void this.error(ws, CODES.BAD_REQUEST, 'replay: none of market_ids is a known market');
    return [...out.values()];
  }

  /** A channel whose topics are markets' (its market_ids name them). */
  private marketChannel(ch: string): boolean {
    return ch === 'prices' || ch === 'orderbook' || ch === this.tickerChannel;
  }

  /** Passes of the pipeline replay until the window's end, a stop, or the connection's close (a seek starts another pass). */
  private async run(s: Session): Promise<void> {
    let emitFrom = s.from;
    for (;;) {
      const gen = s.gen;
      const r = await replay({
        config: this.d.config,
        items: this.items(s, gen),
        log: this.d.log,
        fanout: (rooms) => this.router(s, gen, emitFrom, rooms),
        // What live sent in the window: changes after its last flush went out at a flush past `to`.
        flushAtEnd: false,
        // The client gets each arb_expired as it happens; the replay keeps none for its result.
        keepClosed: false,
      });
      s.events += r.events;
      if (s.stopped || s.c.closed || s.restartAt === undefined) return;
      emitFrom = s.restartAt;
      s.restartAt = undefined;
    }
  }

  /** The fan-out of one pass: the live hub's router on the replay's state, publishing to this client only. */
  private router(s: Session, gen: number, epoch: number, rooms: ReplayRooms): HubRouter {
    const held = new Set<string>();
    const topics = new Topics((t) => (held.has(t) ? 1 : 0), this.tickerChannel, false);
    if (s.c.hosted) topics.hostedConns = 1;
    const pub = new Publisher((topic, msg) => run.begun && this.deliver(s, gen, topic, msg), topics, new Retained(), rooms.clock, epoch);
    const run: Run = { gen, from: epoch, held, topics, pub, rooms, begun: false, done: false };
    // Held from the start of the capture and sent from `from` on: what the router remembers per
    // topic (the fields a price_update last showed) is then what it was for a live subscriber.
    // The alert channels are not the pipeline's: their stored alerts go out through the session's AlertReplay.
    for (const t of s.topics) {
      if (isAlertChannel(t.ch)) continue;
      topics.hold(t.topic);
      held.add(wire(s.c, t.topic));
    }
    topics.changed();
    s.run = run;
    return new HubRouter({
      state: rooms.core.state,
      venues: this.d.venues,
      games: gameLookup(rooms.domain.matching, rooms.clock),
      topics,
      pub,
      bookDepth: this.d.bookDepth,
    });
  }

  /**
   * The capture log up to `to`, as the pipeline replay's items; from the pass's `from` on, each waits for
   * its turn (pause, pace, the client reading). A synthetic flush marker first, at the first
   * record's time, lets the router be wired before any event is applied (a flush with nothing
   * dirty does nothing).
   */
  private async *items(s: Session, gen: number): AsyncGenerator<ReplayItem> {
    const store = this.d.source.capture!.store;
    let n = 0;
    let first = true;
    for await (const item of replayItems(readBatches(store, { from: 0, to: s.to, flushes: true }), this.d.config.venues, this.d.log)) {
      if (this.stale(s, gen)) return;
      const t = itemTime(item);
      if (t > s.to) break;
      if (first) {
        first = false;
        yield { type: 'flush', seq: -1, at: t };
      }
      const run = s.run;
      // A seek forward to this item's time or before it, landing while it waited, begins the new epoch
      // before it is applied, as a replay started there does (hence the loop).
      while (run && t >= run.from && !this.stale(s, gen)) {
        if (!run.begun) this.begin(s, run, run.from);
        // The alerts live raised before this item's time go first.
        if (!(await this.alertsUpTo(s, gen, t))) return;
        await this.gate(s, gen, t);
        if (this.stale(s, gen)) return;
        if (!run.begun && t >= run.from) continue;
        // The position is the last item let through: a pause acknowledged while this one waits,
        // or while the next is read, says the same position as the resume after it.
        if (t >= run.from) s.position = t;
        break;
      }
      if (++n % SLICE === 0) await yieldToLoop();
      yield item;
    }
    const run = s.run;
    if (run) run.done = true;
    if (run && !run.begun && s.gen === gen) this.begin(s, run, run.from);
    if (run && s.gen === gen) await this.alertsUpTo(s, gen, s.to);
  }

  /** A replay of only the alert channels: the stored alerts of the window, paced, and again from each seek's position. */
  private async runAlerts(s: Session): Promise<void> {
    for (;;) {
      const gen = s.gen;
      if (await this.alertsUpTo(s, gen, s.to)) return;
      if (s.stopped || s.c.closed || s.restartAt === undefined) return;
      s.position = s.restartAt;
      this.repace(s, s.restartAt);
      s.restartAt = undefined;
    }
  }

  /**
   * Sends the stored alerts created up to `t`, each when its time comes at the replay's pace (as an
   * item waits: pause, speed, the client reading). False when the pass went stale meanwhile (a seek
   * back, a stop, the client gone).
   */
  private async alertsUpTo(s: Session, gen: number, t: number): Promise<boolean> {
    const alerts = s.alerts;
    if (alerts === undefined) return true;
    for (let n = 1; ; n++) {
      const seeks = alerts.seeks;
      const at = await alerts.next();
      if (this.stale(s, gen)) return false;
      // A seek forward (the pass rides on) while it waited: the alerts from there go out after its snapshots, at the next item.
      if (alerts.seeks !== seeks) return true;
      if (at === undefined || at > t) return true;
      await this.gate(s, gen, at);
      if (this.stale(s, gen)) return false;
      if (alerts.seeks !== seeks) return true;
      s.position = at;
      alerts.send();
      if (n % SLICE === 0) await yieldToLoop();
    }
  }

  /** Whether pass `gen` of `s` may send no more: a seek back started another, the replay stopped, or the client is gone. */
  private stale(s: Session, gen: number): boolean {
    return s.gen !== gen || s.stopped || s.c.closed;
  }

  /** The alert part of a replay: the stored alerts of its window on the channels asked for, sent to its client. */
  private alertReplay(s: Session, channels: readonly AlertChannel[]): AlertReplay {
    return new AlertReplay(
      {
        ...{ ...this.d.alerts!, venues: this.d.venues, channels, conn: s.c, to: s.to, yieldToLoop },
        send: (topic, msg) => this.deliver(s, s.gen, topic, msg),
      },
      s.from,
    );
  }

  /**
   * A window that starts before the oldest alert the store still holds, when older ones were pruned
   * (the store keeps the newest `persistLimit`): a warning after replay_started that the alert
   * channels are replayed from that alert's time on (`retained_from`).
   */
  private prunedWarning(s: Session, channels: readonly AlertChannel[]): void {
    const store = this.d.alerts!.store;
    const oldest = store.oldestStored();
    if (oldest === undefined || oldest.seq <= 1 || s.from >= oldest.createdAt) return;
    this.d.send(s.ws, {
      type: 'warning',
      code: CODES.REPLAY_ALERTS_PRUNED,
      replay_id: s.id,
      channels,
      retained_from: oldest.createdAt,
      message: `alerts raised before ${iso(oldest.createdAt)} are no longer stored (the service keeps the newest ${store.options.persistLimit}): ${channels.join(' and ')} are replayed from then on`,
    });
  }

  /** The replay reaches its window (or a seek's position): each market's snapshot, then what its topics publish, goes to the client. */
  private begin(s: Session, run: Run, at: number): void {
    run.begun = true;
    this.repace(s, at);
    const state = run.rooms.core.state;
    for (const t of s.topics) {
      if (t.v === undefined || t.id === undefined) continue;
      const body = snapshotBody(state, { ch: t.ch, v: t.v, id: t.id }, this.tickerChannel, this.d.bookDepth);
      if (!body) continue;
      const msg = {
        ...body,
        ...(s.c.hosted ? { data: body } : {}),
        snapshot: true,
        seq: run.topics.seqOf(t.topic),
        epoch: run.from,
        ts: run.rooms.clock.now(),
      };
      this.deliver(s, run.gen, t.topic, JSON.stringify(msg));
    }
  }

  /** One message of the replay to its client (nothing once the pass is stale, stopped or the client gone). */
  private deliver(s: Session, gen: number, topic: string, msg: string | Uint8Array): void {
    if (this.stale(s, gen)) return;
    s.ws.send(msg);
    s.messages++;
    const ch = topic.slice(0, topic.indexOf(':'));
    s.counts[ch] = (s.counts[ch] ?? 0) + 1;
  }

  /** Waits until the item of time `t` may go: not paused, the client reading, and its time come at `speed`. */
  private async gate(s: Session, gen: number, t: number): Promise<void> {
    for (;;) {
      if (this.stale(s, gen)) return;
      // A seek forward past this item: it is applied without being sent, so it waits for nothing.
      if (s.run !== undefined && t < s.run.from) return;
      if (s.paused || s.ws.getBufferedAmount() > this.d.highWater) {
        // A drain, resume, seek or stop wakes it; the retry covers a drain uWS reported before we waited.
        await this.sleep(s, s.paused ? 60_000 : 50);
        continue;
      }
      if (s.speed === 'max') return;
      const wait = s.wall0 + (t - s.t0) / s.speed - this.d.clock.now();
      if (wait < 1) return;
      await this.sleep(s, wait);
    }
  }

  private sleep(s: Session, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.d.clock.after(ms, () => {
        s.wake = undefined;
        resolve();
      });
      s.wake = () => {
        cancel();
        s.wake = undefined;
        resolve();
      };
    });
  }

  private wake(s: Session): void {
    s.wake?.();
  }

  /** The pace starts again at `t`, now. */
  private repace(s: Session, t: number): void {
    s.t0 = t;
    s.wall0 = this.d.clock.now();
  }

  /** Stops a replay: it sends nothing more, and its slot is free at once (its pass winds down on its own). */
  private stop(s: Session): void {
    s.stopped = true;
    s.gen++;
    this.wake(s);
    this.release(s);
  }

  /** The replay is over: replay_completed unless it was stopped (or its client gone), and its slot given back. */
  private finish(s: Session, completed = true): void {
    if (completed && !s.stopped && !s.c.closed)
      this.d.send(s.ws, { type: 'replay_completed', replay_id: s.id, from: s.from, to: s.to, messages: s.messages, counts: s.counts, events: s.events });
    this.release(s);
  }

  private release(s: Session): void {
    if (s.released) return;
    s.released = true;
    this.byConn.get(s.ws)?.delete(s.id);
    if (this.byConn.get(s.ws)?.size === 0) this.byConn.delete(s.ws);
    const k = (this.perKey.get(s.c.key.id) ?? 1) - 1;
    if (k > 0) this.perKey.set(s.c.key.id, k);
    else this.perKey.delete(s.c.key.id);
    this.running--;
  }

  private ack(s: Session, type: string, position: number, epoch?: number): void {
    this.d.send(s.ws, { type, replay_id: s.id, position, ...(epoch !== undefined ? { epoch } : {}) });
  }

  private error(ws: Socket, code: string, message: string, replayId?: string): void {
    this.d.send(ws, { type: 'error', code, message, ...(replayId !== undefined ? { replay_id: replayId } : {}) });
  }

  /** A time field of a replay message (ms since the epoch or ISO 8601), or undefined with the client answered. */
  private time(ws: Socket, field: string, v: number | string): number | undefined {
    const t = typeof v === 'number' ? v : msOrIsoTime(v);
    if (t !== undefined && Number.isSafeInteger(t)) return t;
    this.error(ws, CODES.BAD_REQUEST, `replay: ${field} must be ms since the epoch or an ISO 8601 time such as 2026-11-22T10:00:00Z, got ${JSON.stringify(v)}`);
    return undefined;
  }
}

/** One turn of the event loop (a replay at max speed lets live clients and ingest run between its slices). */
function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
