import type { Plan } from '../access/plans.js';
import type { VenueConfig } from '../config/schema.js';
import type { Clock } from '../core/clock.js';
import type { GroupSignals } from '../signals/engine.js';
import type { EngineState } from '../state/engine.js';
import type { VenueDirectory } from '../venues/directory.js';
import type { Backpressure } from './backpressure.js';
import { byVenue, signalBody, snapshotBody } from './bodies.js';
import { isAuthed, type Authed, type Conn, type Socket } from './conn.js';
import { ALERT_CHANNELS, CLOSE, CODES, isReplayMessage, parseClientMessage, type AlertChannel, type ClientMessage, type ReplayMessage } from './protocol.js';
import { resume, type Replay, type ResumeHub, type ResumeTopic } from './resume.js';
import type { KeyBudget } from './key-budget.js';
import type { Subscriptions } from './subscriptions.js';
import type { Topics } from './topics.js';

/** What live_games needs to know about games (the matching service answers it). */
export interface GameLookup {
  /** The game event a market belongs to, if it is in a game's cross-venue group. */
  eventOf(venue: string, marketId: string): string | undefined;
  hasEvent(id: string): boolean;
  isLive(id: string): boolean;
}

/** The current signals of a group (the signal engine answers it), for the snapshot on subscribe. */
export interface SignalReader {
  get(groupId: number): GroupSignals | undefined;
}

/** What the client protocol reads and acts through. */
export interface ProtocolDeps {
  readonly state: EngineState;
  readonly venues: VenueDirectory;
  /** live_games is served when a game lookup is given; arb and ev when a signal reader is. */
  readonly games: GameLookup | undefined;
  readonly signals: SignalReader | undefined;
  /** smart_money and fade_finder are served. */
  readonly alerts: boolean;
  readonly topics: Topics;
  readonly subscriptions: Subscriptions;
  readonly backpressure: Backpressure;
  readonly clock: Clock;
  /** The epoch announced now (a cluster edge may take another). */
  epoch(): number;
  /** Whether a connection is still open. */
  isOpen(ws: Socket): boolean;
  readonly subscribeRate: number;
  readonly maxPayload: number;
  readonly bookDepth: number;
  readonly replay: Replay | undefined;
  /** Market ids a key's connections may subscribe or unsubscribe, together, per second. */
  readonly keyBudget: KeyBudget;
  /** Above this many bytes buffered for a client, it gets no new snapshots until it reads (its subscribe is refused). */
  readonly snapshotBytes: number;
  /** An `auth` message (in-band login, or again on a connection that has logged in). */
  login(ws: Socket, c: Conn, m: Extract<ClientMessage, { type: 'auth' }>): void;
  /** The prices snapshot of a market went to its topic's only subscriber (the router's `snapshotted`). */
  readonly pricesShown?: ((venue: string, marketId: string) => void) | undefined;
  /** Replays and their controls (replay-session.ts); absent: a replay is answered that this server does not replay. */
  readonly replays?: { handle(ws: Socket, c: Authed, m: ReplayMessage): void } | undefined;
}

const enc = new TextDecoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The client side of /api/v2/ws (protocol.ts declares it): every client message is checked (size,
 * message budget, UTF-8, JSON, schema), then a subscribe or unsubscribe is checked against the
 * subscribe rate, the channel and the plan, its ids resolved to venues, and the connection
 * subscribed with a snapshot (or a resume) of each topic.
 */
export class ClientProtocol implements ResumeHub {
  readonly catalogVenue: VenueConfig | undefined;
  readonly tickerChannel: string | undefined;
  readonly clock: Clock;

  constructor(private readonly d: ProtocolDeps) {
    this.clock = d.clock;
    this.catalogVenue = d.venues.withCapability('catalog');
    this.tickerChannel = this.catalogVenue ? `${this.catalogVenue.slug}_prices` : undefined;
  }

  get epoch(): number {
    return this.d.epoch();
  }

  /** Sends one message to one client, with the send time. */
  send(ws: Socket, body: Record<string, unknown>): void {
    if (!ws.getUserData().closed) ws.send(JSON.stringify({ ...body, ts: this.clock.now() }));
  }

  /**
   * Channel names a plan may use, with `{venue_a}` resolved to the catalog venue's slug; the alert
   * channels with the entitlement of their REST endpoints (the plan does not block their group).
   */
  channelsOf(plan: Plan): string[] {
    const slug = this.catalogVenue?.slug ?? 'venue_a';
    const out = plan.ws.channels.map((c) => c.replace('{venue_a}', slug));
    if (this.d.alerts) for (const ch of ALERT_CHANNELS) if (!plan.blocked.includes(ch)) out.push(ch);
    return out;
  }

  /**
   * Every client message: the size limit (1009), the message budget (RATE_LIMITED, then 1008),
   * UTF-8 of binary frames (1007; uWS checks text frames itself), then the message.
   */
  receive(ws: Socket, data: ArrayBuffer, isBinary: boolean): void {
    const c = ws.getUserData();
    if (c.closed) return;
    const bp = this.d.backpressure;
    if (data.byteLength > this.d.maxPayload) return bp.closeWith(ws, c, CLOSE.TOO_BIG, `message too big: at most ${this.d.maxPayload} bytes`);
    const verdict = c.budget.take(this.clock.now());
    if (verdict === 'close') return bp.closeWith(ws, c, CLOSE.POLICY, 'message rate limit exceeded after RATE_LIMITED');
    if (verdict === 'warn')
      return this.send(ws, {
        type: 'error',
        code: CODES.RATE_LIMITED,
        message: 'too many messages on this connection: messages are dropped until the budget refills; keep sending and the connection is closed',
      });
    if (verdict === 'drop') return;
    let text: string;
    if (!isBinary) text = enc.decode(data);
    else
      try {
        text = strictUtf8.decode(data);
      } catch {
        return bp.closeWith(ws, c, CLOSE.INVALID_PAYLOAD, 'binary message is not valid UTF-8');
      }
    this.message(ws, c, text);
  }

  private message(ws: Socket, c: Conn, text: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return this.send(ws, { type: 'error', code: CODES.BAD_JSON, message: 'message is not valid JSON' });
    }
    const parsed = parseClientMessage(raw);
    if (!parsed.ok) return this.send(ws, { type: 'error', code: CODES.BAD_REQUEST, message: parsed.message });
    if (parsed.hosted && !c.hosted) this.d.subscriptions.speakHosted(ws, c);
    const m = parsed.message;
    if (m.type === 'auth') return this.d.login(ws, c, m);
    if (!isAuthed(c))
      return this.send(ws, {
        type: 'error',
        code: CODES.AUTH_REQUIRED,
        message: 'log in first: send {"action":"auth","api_key":"pmx_…"} (or "token") as the first message',
      });
    if (m.type === 'ping') return this.send(ws, { type: 'pong' });
    if (isReplayMessage(m)) {
      if (this.d.replays) return this.d.replays.handle(ws, c, m);
      return this.send(ws, { type: 'error', code: CODES.BAD_REQUEST, message: 'this server does not replay over the WebSocket (no capture log here)' });
    }
    const channels = this.admit(ws, c, m);
    if (!channels) return;
    const ch = m.channel;
    if ((ALERT_CHANNELS as readonly string[]).includes(ch)) return this.subscribeAlerts(ws, c, m.type, ch as AlertChannel, m.market_ids);
    if (ch === 'arb' || ch === 'ev') return this.subscribeSignals(ws, c, m.type, ch, m.market_ids);
    if (ch === 'live_games') return this.subscribeGames(ws, c, m.type, m.event_ids);
    if (m.all === true || (m.market_ids?.length === 1 && m.market_ids[0] === '*')) return this.subscribeAll(ws, c, m.type, ch, channels);
    this.subscribeMarkets(ws, c, m);
  }

  /**
   * The connection's key now has another plan (a downgrade or an upgrade): subscriptions of
   * channels the new plan does not include, and those past its cap (the latest first), are
   * dropped, and the client is told which with PLAN_CHANGED.
   */
  replan(ws: Socket, c: Authed, plan: Plan): void {
    c.plan = plan;
    const channels = this.channelsOf(plan);
    const cap = plan.ws.subscriptions;
    const dropped: string[] = [];
    let kept = 0;
    for (const [topic, ch] of c.topics) {
      if (ch === 'status') continue;
      const all = ch === this.tickerChannel && topic.endsWith(':*');
      const included = channels.includes(ch) && (!all || channels.includes(`${ch}:all`));
      if (included && (cap === 0 || kept < cap)) kept++;
      else dropped.push(topic);
    }
    for (const t of dropped) this.d.subscriptions.unsub(ws, c, t);
    this.send(ws, {
      type: 'warning',
      code: CODES.PLAN_CHANGED,
      plan: plan.name,
      channels,
      dropped,
      message: `the key is now on the ${plan.name} plan${dropped.length ? `: ${dropped.length} subscription(s) it does not include were dropped` : ''}`,
    });
  }

  /** Every market of the catalog venue's ticker channel (an Enterprise entitlement). */
  private subscribeAll(ws: Socket, c: Authed, type: 'subscribe' | 'unsubscribe', ch: string, channels: readonly string[]): void {
    if (ch !== this.tickerChannel || !channels.includes(`${ch}:all`))
      return this.send(ws, {
        type: 'error',
        code: CODES.NOT_ENTITLED,
        channel: ch,
        message: 'subscribing to all markets is for Enterprise plans on the ticker channel',
      });
    const topic = `${ch}:${this.catalogVenue!.slug}:*`;
    const subs = this.d.subscriptions;
    if (type === 'subscribe') {
      subs.sub(ws, c, topic, ch);
      // The recovery signals (FEED_INTERRUPTED / FEED_READY) of the feed, as for explicit tickers.
      subs.sub(ws, c, `status:${this.catalogVenue!.slug}`, 'status');
    } else subs.unsub(ws, c, topic);
    this.send(ws, { type: type === 'subscribe' ? 'subscribed' : 'unsubscribed', channel: ch, market_ids: ['*'] });
  }

  /** prices, orderbook and the ticker channel: market ids resolved to venues, the plan's cap, a snapshot (or resume) each. */
  private subscribeMarkets(ws: Socket, c: Authed, m: Extract<ClientMessage, { channel: string }>): void {
    const ch = m.channel;
    const ids = m.market_ids ?? [];
    if (ids.length === 0) return this.send(ws, { type: 'error', code: CODES.BAD_REQUEST, channel: ch, message: 'market_ids is required (a non-empty list)' });
    if (!this.affords(ws, c, m.type, ch, ids.length)) return;
    const accepted: { id: string; v: VenueConfig }[] = [];
    const unknown: string[] = [];
    for (const raw of ids) {
      const r = this.resolve(raw, ch);
      if (r) accepted.push(r);
      else unknown.push(raw);
    }
    const subs = this.d.subscriptions;
    if (m.type === 'subscribe') {
      const cap = c.plan.ws.subscriptions;
      // Only market subscriptions count: not the feed-status topics added with them, and not a
      // market subscribed again.
      const inUse = subscriptionCount(c);
      const added = new Set(accepted.map((a) => `${ch}:${a.v.slug}:${a.id}`).filter((t) => !c.topics.has(t))).size;
      if (cap !== 0 && inUse + added > cap)
        return this.send(ws, {
          type: 'error',
          code: CODES.SUBSCRIPTION_LIMIT,
          channel: ch,
          message: `the ${c.plan.name} plan allows ${cap} subscriptions per connection (${inUse} in use)`,
        });
      for (const part of byVenue(accepted)) this.send(ws, { type: 'subscribed', channel: ch, ...part });
      for (const a of accepted) {
        const t: ResumeTopic = { topic: `${ch}:${a.v.slug}:${a.id}`, ch, v: a.v, id: a.id };
        const last = m.resume?.[a.id] ?? m.resume?.[`${a.v.slug}:${a.id}`];
        if (last !== undefined && this.d.replay) {
          void resume(this, ws, c, t, last, this.d.replay);
          continue;
        }
        this.join(ws, c, t);
        this.snapshot(ws, t);
      }
    } else {
      for (const a of accepted) subs.unsub(ws, c, `${ch}:${a.v.slug}:${a.id}`);
      for (const part of byVenue(accepted)) this.send(ws, { type: 'unsubscribed', channel: ch, ...part });
    }
    this.unknownIds(
      ws,
      ch,
      unknown,
      `unknown market id${unknown.length > 1 ? 's' : ''} (a market id, not an event id, as the venue names it or as platform:market_id)`,
    );
  }

  /** The UNKNOWN_ID warning of the ids of a request that were not accepted (none: nothing sent). */
  private unknownIds(ws: Socket, ch: string, unknown: readonly string[], message: string): void {
    if (unknown.length) this.send(ws, { type: 'warning', code: CODES.UNKNOWN_ID, channel: ch, market_ids: unknown, message });
  }

  /**
   * The key's shared budget of subscription work, and room in the client's buffer for the
   * snapshots of a subscribe (a client that does not read what it was sent gets no more): whether
   * the message may go on, else false with the client answered RATE_LIMITED.
   */
  private affords(ws: Socket, c: Authed, type: 'subscribe' | 'unsubscribe', ch: string, n: number): boolean {
    if (type === 'subscribe' && ws.getBufferedAmount() > this.d.snapshotBytes) {
      this.send(ws, { type: 'error', code: CODES.RATE_LIMITED, channel: ch, message: 'read the messages already sent before subscribing to more' });
      return false;
    }
    if (this.d.keyBudget.take(c.key.id, n, this.clock.now())) return true;
    const b = this.d.keyBudget;
    this.send(ws, {
      type: 'error',
      code: CODES.RATE_LIMITED,
      channel: ch,
      message: `this key's connections together subscribe or unsubscribe at most ${b.perSecond} market ids a second (${b.burst} at once); the message was not processed`,
    });
    return false;
  }

  /**
   * The subscribe-rate limit, the channel's existence and the plan's entitlement to it: the plan's
   * channels when the message may go on, else undefined with the client answered.
   */
  private admit(ws: Socket, c: Authed, m: Extract<ClientMessage, { channel: string }>): string[] | undefined {
    const now = this.clock.now();
    if (now - c.rateWindow >= 1000) {
      c.rateWindow = now;
      c.rateCount = 0;
    }
    const ch = m.channel;
    if (++c.rateCount > this.d.subscribeRate) {
      this.send(ws, {
        type: 'error',
        code: CODES.RATE_LIMITED,
        message: `at most ${this.d.subscribeRate} subscribe/unsubscribe messages per second`,
        channel: ch,
      });
      return undefined;
    }
    const channels = this.channelsOf(c.plan);
    const known = [
      'prices',
      'orderbook',
      ...(this.tickerChannel ? [this.tickerChannel] : []),
      ...(this.d.signals ? ['arb', 'ev'] : []),
      ...(this.d.games ? ['live_games'] : []),
      ...(this.d.alerts ? ALERT_CHANNELS : []),
    ];
    const named = ['live_games', 'arb', 'ev', ...ALERT_CHANNELS];
    if (!known.includes(ch) && !named.includes(ch))
      this.send(ws, {
        type: 'warning',
        code: CODES.UNKNOWN_CHANNEL,
        channel: ch,
        message: `unknown channel "${ch}"; channels: ${[...new Set([...known, ...named])].join(', ')}`,
      });
    else if (!known.includes(ch))
      this.send(ws, { type: 'warning', code: CODES.UNKNOWN_CHANNEL, channel: ch, message: `channel "${ch}" is not served by this instance yet` });
    else if (!channels.includes(ch))
      this.send(ws, { type: 'error', code: CODES.NOT_ENTITLED, channel: ch, message: `the ${c.plan.name} plan does not include the ${ch} channel` });
    else return channels;
    return undefined;
  }

  /** smart_money / fade_finder: every alert of the feed; market_ids, if given, must be ["*"]. */
  private subscribeAlerts(ws: Socket, c: Authed, type: 'subscribe' | 'unsubscribe', ch: AlertChannel, ids: readonly string[] | undefined): void {
    if (ids && ids.length > 0 && !(ids.length === 1 && ids[0] === '*'))
      return this.send(ws, {
        type: 'error',
        code: CODES.BAD_REQUEST,
        channel: ch,
        message: `${ch} streams every alert of its feed: send no market_ids (or ["*"])`,
      });
    const topic = `${ch}:*`;
    if (type === 'subscribe') {
      const cap = c.plan.ws.subscriptions;
      const inUse = subscriptionCount(c);
      if (cap !== 0 && !c.topics.has(topic) && inUse + 1 > cap)
        return this.send(ws, {
          type: 'error',
          code: CODES.SUBSCRIPTION_LIMIT,
          channel: ch,
          message: `the ${c.plan.name} plan allows ${cap} subscriptions per connection (${inUse} in use)`,
        });
      this.d.subscriptions.sub(ws, c, topic, ch);
    } else this.d.subscriptions.unsub(ws, c, topic);
    this.send(ws, { type: type === 'subscribe' ? 'subscribed' : 'unsubscribed', channel: ch, market_ids: ['*'] });
  }

  private subscribeGames(ws: Socket, c: Conn, type: 'subscribe' | 'unsubscribe', ids: readonly string[] | undefined): void {
    if (!ids || ids.length === 0)
      return this.send(ws, {
        type: 'error',
        code: CODES.BAD_REQUEST,
        channel: 'live_games',
        message: 'event_ids is required (a non-empty list of game event ids)',
      });
    const games = this.d.games!;
    const known = ids.filter((id) => games.hasEvent(id));
    const unknown = ids.filter((id) => !games.hasEvent(id));
    if (type === 'subscribe') {
      for (const id of known) this.d.subscriptions.sub(ws, c, `live_games:${id}`, 'live_games');
      this.send(ws, { type: 'subscribed', channel: 'live_games', event_ids: known, live: known.filter((id) => games.isLive(id)) });
    } else {
      for (const id of known) this.d.subscriptions.unsub(ws, c, `live_games:${id}`);
      this.send(ws, { type: 'unsubscribed', channel: 'live_games', event_ids: known });
    }
    if (unknown.length)
      this.send(ws, {
        type: 'warning',
        code: CODES.UNKNOWN_EVENT_ID,
        channel: 'live_games',
        event_ids: unknown,
        message: 'unknown event id (use event_id from /events or /matching-markets/sports)',
      });
  }

  /**
   * arb / ev: `market_ids` are match-group ids (from /matching-markets or /events), or omitted
   * (or ["*"]) for every group. Each subscribed group gets its current opportunities at once.
   */
  private subscribeSignals(ws: Socket, c: Conn, type: 'subscribe' | 'unsubscribe', ch: 'arb' | 'ev', ids: readonly string[] | undefined): void {
    const all = !ids || ids.length === 0 || (ids.length === 1 && ids[0] === '*');
    const groups: number[] = [];
    const unknown: string[] = [];
    if (!all)
      for (const id of ids) {
        if (/^\d{1,12}$/.test(id) && this.d.signals?.get(Number(id))) groups.push(Number(id));
        else unknown.push(id);
      }
    const topics = all ? [`${ch}:*`] : groups.map((g) => `${ch}:${g}`);
    const subs = this.d.subscriptions;
    if (type === 'unsubscribe') {
      for (const t of topics) subs.unsub(ws, c, t);
      this.send(ws, { type: 'unsubscribed', channel: ch, market_ids: all ? ['*'] : groups.map(String) });
    } else {
      this.send(ws, { type: 'subscribed', channel: ch, market_ids: all ? ['*'] : groups.map(String) });
      for (const t of topics) subs.sub(ws, c, t, ch);
      for (const g of all ? [] : groups) {
        const s = this.d.signals?.get(g);
        if (s) this.sendSnapshot(ws, signalBody(ch, s), this.seqOf(`${ch}:${g}`));
      }
    }
    this.unknownIds(ws, ch, unknown, 'unknown group id (group_id from /matching-markets or /events)');
  }

  /** A market id as given (native, or platform:market_id) → the venue and native id, if we know the market. */
  resolve(raw: string, ch: string): { id: string; v: VenueConfig } | undefined {
    const catalog = this.d.state.catalog;
    const i = raw.indexOf(':');
    if (i > 0) {
      const v = this.d.venues.bySlug.get(raw.slice(0, i));
      if (v) {
        const id = raw.slice(i + 1);
        return catalog.get(v.label, id) && this.channelFits(ch, v) ? { id, v } : undefined;
      }
    }
    const venues = ch === this.tickerChannel ? [this.catalogVenue!] : this.d.venues.enabled;
    for (const v of venues) if (catalog.get(v.label, raw) && this.channelFits(ch, v)) return { id: raw, v };
    return undefined;
  }

  private channelFits(ch: string, v: VenueConfig): boolean {
    if (ch === 'orderbook') return v.capabilities.orderbook;
    if (ch === this.tickerChannel) return v === this.catalogVenue;
    return true;
  }

  seqOf(topic: string): number {
    return this.d.topics.seqOf(topic);
  }

  isOpen(ws: Socket): boolean {
    return this.d.isOpen(ws);
  }

  /** Subscribes the connection to a market topic and its venue's feed-status topic. */
  join(ws: Socket, c: Conn, t: ResumeTopic): void {
    this.d.subscriptions.sub(ws, c, t.topic, t.ch);
    this.d.subscriptions.sub(ws, c, `status:${t.v.slug}`, 'status');
  }

  /** The current state of a market topic, sent to one client at the topic's current seq. */
  snapshot(ws: Socket, t: ResumeTopic): void {
    const body = snapshotBody(this.d.state, t, this.tickerChannel, this.d.bookDepth);
    if (!body) return;
    this.sendSnapshot(ws, body, this.seqOf(t.topic));
    if (t.ch === 'prices' && this.d.pricesShown !== undefined && this.d.topics.holders(t.topic) === 1) this.d.pricesShown(t.v.label, t.id);
  }

  /** A streamed message's current state, sent to one client on subscribe, in the streamed envelope of its dialect. */
  private sendSnapshot(ws: Socket, body: Record<string, unknown>, seq: number): void {
    this.send(ws, { ...body, ...(ws.getUserData().hosted ? { data: body } : {}), snapshot: true, seq, epoch: this.epoch });
  }
}

/** Subscriptions a connection holds against its plan's cap (feed-status topics excluded). */
function subscriptionCount(c: Conn): number {
  let n = 0;
  for (const ch of c.topics.values()) if (ch !== 'status') n++;
  return n;
}
