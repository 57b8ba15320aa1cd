import { Subject } from 'rxjs';
import type * as UWS from 'uWebSockets.js';
import type { KeyRecord, KeyStore } from '../access/keys.js';
import type { Plan, PlanName } from '../access/plans.js';
import type { VenueDirectory } from '../venues/directory.js';
import { quotePrices } from '../views/market.js';
import type { VenueConfig } from '../config/schema.js';
import type { OrderBook } from '../core/book.js';
import type { Logger } from '../core/log.js';
import { PAYOUT, toCents, toDollarString } from '../core/price.js';
import type { FeedEvent, FrameTimes } from '../core/types.js';
import type { HttpServer } from '../server/http.js';
import type { GroupSignals } from '../signals/engine.js';
import { recordJson, type OpportunityRecord } from '../signals/lifecycle/record.js';
import type { EngineState } from '../state/engine.js';
import type { QuoteRecord } from '../state/quotes.js';
import type { StoredTrade } from '../state/trades.js';
import { alertJson } from '../views/alert.js';
import { FADE_TYPES, type Alert } from '../signals/alerts.js';
import { bookBytes, bookJson, plainAscii, priceBytes, TextBytes } from './booktext.js';
import { ALERT_CHANNELS, CLOSE, CODES, MESSAGE_BUDGET, MessageBudget, parseClientMessage, type AlertChannel, type ClientMessage } from './protocol.js';

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
}

/** One publication of the hub: what a cluster core sends its edges, with the seq and epoch assigned once. */
export interface Publication {
  readonly topic: string;
  /** The message body, or its JSON text when the hub serialized it directly (order books). */
  readonly body: Record<string, unknown> | string;
  readonly seq: number;
  readonly epoch: number;
  readonly ts: number;
  /** The venue's time and our receive time of the frame behind the update (ms), when one was. */
  readonly venueTs?: number | undefined;
  readonly recvTs?: number | undefined;
}

/**
 * The publications of `topic` after `afterSeq` still held, in order; undefined when the window no
 * longer holds the one right after `afterSeq` (the client then gets a snapshot and RESYNC).
 */
export type Replay = (topic: string, afterSeq: number, epoch: number) => Promise<readonly Publication[] | undefined>;

interface Conn {
  readonly key: KeyRecord;
  readonly plan: Plan;
  /** topic → channel, for coalesced catch-up and unsubscribe-all. */
  readonly topics: Map<string, string>;
  /** Highest seq delivered per topic while coalescing. */
  readonly delivered: Map<string, number>;
  coalescing: boolean;
  /** When coalescing began (ms). */
  coalescingSince: number;
  closed: boolean;
  /** A warning that waits for room in uWS's buffer (see `sendWhenRoom`). */
  notice: string | undefined;
  /** A close that waits for room in uWS's buffer for its close frame (see `endWhenRoom`). */
  closing: { readonly code: number; readonly reason: string; readonly since: number } | undefined;
  rateWindow: number;
  rateCount: number;
  readonly budget: MessageBudget;
  /** Spoke the hosted dialect (`action`): streamed messages carry `data`. */
  hosted: boolean;
}

/**
 * Topic suffix of the hosted dialect: a connection that speaks it (sends `action`) gets each
 * streamed message with its body again under `data`; the others keep the leaner messages.
 */
const DATA = '|data';

const enc = new TextDecoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
/** Bytes a close frame takes (2 + 2-byte code + a reason of at most 123 bytes, and the header). */
const CLOSE_FRAME_ROOM = 131;

/**
 * The accepted ids of a subscribe or unsubscribe, one confirmation per venue: each carries the
 * native market_ids and its venue as a separate `source` field (spec 6 rule 1), and `sources` (one
 * per id) as before. No accepted id still gets one confirmation, with an empty list and no source.
 */
function byVenue(accepted: readonly { id: string; v: VenueConfig }[]): { market_ids: string[]; source: string | null; sources: string[] }[] {
  if (accepted.length === 0) return [{ market_ids: [], source: null, sources: [] }];
  const out = new Map<string, { market_ids: string[]; source: string | null; sources: string[] }>();
  for (const a of accepted) {
    let part = out.get(a.v.slug);
    if (!part) out.set(a.v.slug, (part = { market_ids: [], source: a.v.slug, sources: [] }));
    part.market_ids.push(a.id);
    part.sources.push(a.v.slug);
  }
  return [...out.values()];
}

/** The fields of a quote a price_update shows, as last published on its prices topic. */
interface Shown {
  yesBid: number | undefined;
  yesAsk: number | undefined;
  lastPrice: number | undefined;
  volume: number | undefined;
}

/** Which dialects a topic has subscribers in. */
interface Subs {
  readonly plain: boolean;
  readonly data: boolean;
}

/** A topic's last seq (0: nothing published in this epoch). */
interface SeqCell {
  n: number;
}

/**
 * A topic some connection holds (in its `topics`): how many do, and what uWS last answered about
 * its subscribers, valid while `gen` is the hub's subscription generation. A market-scoped topic's
 * record also sits in its market id's `HeldId`, with its channel and venue slug, so a change finds
 * it without building the topic name, and carries the topic's seq cell.
 */
interface Held extends Subs {
  readonly topic: string;
  /** Channel and venue slug of a market-scoped topic (`<ch>:<slug>:<id>`), else empty. */
  readonly ch: string;
  readonly slug: string;
  readonly seq: SeqCell | undefined;
  /** The topic (so its venue slug and market id) is printable ASCII that JSON writes as it is: its messages can be written as bytes. */
  readonly ascii: boolean;
  conns: number;
  gen: number;
  plain: boolean;
  data: boolean;
}

/** A market id some connection holds topics of: how many holds, and the held records of its topics. */
interface HeldId {
  n: number;
  readonly topics: Held[];
}

/** A price_update of `q` (with `snapshot: true` for a subscriber's first one). */
export function priceBody(v: VenueConfig, q: QuoteRecord, snapshot: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: 'price_update',
    channel: 'prices',
    market_id: q.marketId,
    source: v.slug,
    ...quotePrices(v, q),
    volume: q.volume ?? null,
  };
  if (snapshot) body['snapshot'] = true;
  return body;
}

/** No subscriber in either dialect: a topic nobody holds (a cluster core still exports the update). */
const NONE: Held = Object.freeze({ topic: '', ch: '', slug: '', seq: undefined, ascii: false, conns: 0, gen: -1, plain: false, data: false });

/**
 * The WebSocket front: /api/v2/ws on the same uWS app. Fan-out is uWS pub/sub on topics
 * `<channel>:<venue slug>:<market id>`, each update serialized once and published once, whatever
 * the number of subscribers. A client that stops reading is moved, past `coalesceBytes` of
 * buffered data, off the pub/sub topics and onto coalesced catch-up (the latest message of each of
 * its topics when it drains), and past `dropBytes` disconnected with a reason; nobody else waits
 * for it. Venue disconnects and gaps reach subscribers of that venue as FEED_INTERRUPTED
 * warnings, a resync as FEED_READY.
 */
export class WsHub {
  /** Announced in every message; a cluster edge takes a new core's with its seqs (adoptSeqs). */
  epoch: number;
  /** Every publication, as published (observed by a cluster core's publisher). */
  readonly published$ = new Subject<Publication>();
  /** The last seq of each topic, in cells that a held topic's record shares (see `Held`). */
  private readonly seq = new Map<string, SeqCell>();
  /**
   * Latest serialized message per topic, kept only for topics some coalescing client is subscribed
   * to (`watched`: topic → how many such clients), so that a publish nobody coalesces does not
   * outlive the young generation.
   */
  private readonly latest = new Map<string, { seq: number; msg: string; dataMsg: string }>();
  private readonly watched = new Map<string, number>();
  /**
   * Per market with prices subscribers, what its last price_update showed: a quote change only of
   * fields the message does not carry (top-of-book sizes, open interest) sends nothing. Dropped when
   * the topic has no subscribers, so a new subscriber's snapshot starts it afresh.
   */
  private readonly shown = new WeakMap<QuoteRecord, Shown>();
  private readonly conns = new Set<UWS.WebSocket<Conn>>();
  /**
   * Topics some connection holds, so a topic nobody holds is answered without asking uWS, and a
   * held one asks uWS again only after a subscription changed (`subGen`): the subscriber count is
   * read per change and subscriptions change rarely. Every uWS subscription of a connection is one
   * of its `topics` (in its dialect), so a topic absent here has no subscriber.
   */
  private readonly held = new Map<string, Held>();
  /**
   * The market ids (the last part of a held `prices`, `orderbook` or ticker topic, `*` for the
   * ticker's all-markets topic) some connection holds, counted: a quote or book change of a market
   * absent here is dropped without building its topic names. Ids of different venues may share an
   * entry; that only sends the change on to the exact check.
   */
  private readonly heldIds = new Map<string, HeldId>();
  /** Bumped by every subscribe, unsubscribe and close, so cached answers of `held` are re-asked. */
  private subGen = 0;
  private readonly perKey = new Map<string, number>();
  /** Where an orderbook_update that goes out only as the plain message is written (`onBook`). */
  private readonly bytes = new TextBytes();
  /** Open connections in the hosted dialect: with none, no `DATA` twin has subscribers to ask about. */
  private hostedConns = 0;
  private sweep: NodeJS.Timeout | undefined;
  private readonly app: UWS.TemplatedApp;
  private readonly coalesceBytes: number;
  private readonly dropBytes: number;
  private readonly catalogVenue: VenueConfig | undefined;
  private readonly tickerChannel: string | undefined;
  /** Messages published (each counted once, however many subscribers). */
  published = 0;
  dropped = 0;

  private readonly http: HttpServer;
  private readonly path: string;
  private readonly state: EngineState;
  private readonly venues: VenueDirectory;
  private readonly keys: KeyStore;
  private readonly plans: Readonly<Record<PlanName, Plan>>;
  private readonly log: Logger;
  /** live_games is served when a game lookup is given; arb and ev when a signal reader is. */
  private readonly games: GameLookup | undefined;
  private readonly signals: SignalReader | undefined;
  private readonly alerts: boolean;

  /**
   * Installs the /ws route on the server's uWS app. The hub reads state, games and signals through
   * `deps`; what it publishes arrives through the `on*` methods, which pipelines/fanout.ts calls.
   */
  constructor(
    deps: HubDeps,
    private readonly opts: HubOptions = {},
  ) {
    ({ http: this.http, path: this.path, state: this.state, venues: this.venues, keys: this.keys, plans: this.plans, log: this.log } = deps);
    this.epoch = opts.epoch ?? Date.now();
    this.games = deps.games;
    this.signals = deps.signals;
    this.alerts = deps.alerts === true;
    this.app = this.http.app;
    this.coalesceBytes = opts.coalesceBytes ?? 256 * 1024;
    this.dropBytes = opts.dropBytes ?? 8 * 1024 * 1024;
    this.catalogVenue = this.venues.withCapability('catalog');
    this.tickerChannel = this.catalogVenue ? `${this.catalogVenue.slug}_prices` : undefined;
    this.install();
    this.sweep = setInterval(() => this.checkBackpressure(), 100);
    this.sweep.unref();
  }

  /**
   * A trade of a live game's market goes to `live_games:<event_id>` as a `trade` message (there is
   * no standalone trades channel: trades are scoped to live games).
   */
  onTrade(t: StoredTrade): void {
    if (!this.games) return;
    const eid = this.games.eventOf(t.venue, t.marketId);
    if (!eid) return;
    const topic = `live_games:${eid}`;
    if (this.listeners(topic) === 0) return;
    const v = this.venues.byLabel.get(t.venue);
    this.publish(
      topic,
      {
        type: 'trade',
        channel: 'live_games',
        event_id: eid,
        market_id: t.marketId,
        source: v?.slug ?? t.venue,
        price: toCents(t.yesPrice),
        size: t.size,
        taker_side: t.takerSide ?? null,
        trade_id: t.tradeId,
        executed_at: new Date(t.timestamp).toISOString(),
      },
      undefined,
      t,
    );
  }

  /**
   * A change of a group's opportunities is published on `arb:<group_id>` / `ev:<group_id>` and on
   * `arb:*` / `ev:*` (all groups).
   */
  onSignals(g: GroupSignals): void {
    for (const ch of ['arb', 'ev'] as const) {
      const group = `${ch}:${g.groupId}`;
      const all = `${ch}:*`;
      const one = this.subs(group);
      const every = this.subs(all);
      if (!one && !every) continue;
      const body = this.signalBody(ch, g);
      if (one) this.publish(group, body, one);
      if (every) this.publish(all, body, every);
    }
  }

  /**
   * An opportunity closed: `arb_expired` / `ev_expired` with its id, close reason and record, on the
   * same topics as its group's opportunities, so a client drops it from its list.
   */
  onExpired(r: OpportunityRecord): void {
    const ch = r.kind;
    const group = `${ch}:${r.group_id}`;
    const all = `${ch}:*`;
    if (this.listeners(group) === 0 && this.listeners(all) === 0) return;
    const body = {
      type: `${ch}_expired`,
      channel: ch,
      group_id: r.group_id,
      opportunity_id: r.opportunity_id,
      close_reason: r.close_reason,
      record: recordJson(r),
    };
    for (const topic of [group, all]) if (this.listeners(topic) > 0) this.publish(topic, body);
  }

  /**
   * An alert of the alert engine: on `smart_money:*` (smart_money, insider, captain_hook) or
   * `fade_finder:*` (fade), in the record form of the /alerts endpoints.
   */
  onAlert(a: Alert): void {
    const ch: AlertChannel = FADE_TYPES.includes(a.type) ? 'fade_finder' : 'smart_money';
    const topic = `${ch}:*`;
    if (this.listeners(topic) === 0) return;
    const v = this.venues.byLabel.get(a.venue);
    this.publish(topic, { type: ch, channel: ch, ...alertJson(v?.slug ?? a.venue, a, this.state.catalog.get(a.venue, a.marketId)?.title ?? null) });
  }

  /**
   * A message only connections in the hosted dialect read (fade_finder_update: a fade alert in the
   * hosted API's own shape), sent on `topic`'s hosted twin right after the topic's last publication
   * and with its seq (the same event again, not a new one): `body` at the top level, `data` under data.
   */
  publishHosted(topic: string, body: Readonly<Record<string, unknown>>, data: Readonly<Record<string, unknown>>): void {
    if (this.subs(topic)?.data !== true) return;
    const json = JSON.stringify(body);
    this.app.publish(topic + DATA, `${json.slice(0, -1)},"data":${JSON.stringify(data)},"seq":${this.seqOf(topic)},"epoch":${this.epoch},"ts":${Date.now()}}`);
  }

  private signalBody(ch: 'arb' | 'ev', g: GroupSignals): Record<string, unknown> {
    return {
      type: ch,
      channel: ch,
      group_id: g.groupId,
      title: g.title,
      opportunities: ch === 'arb' ? g.arbs : g.evs,
      computed_at: new Date(g.at).toISOString(),
    };
  }

  /** Feed health events (from the ingest stream) become warnings to that venue's subscribers. */
  onFeedEvent(ev: FeedEvent): void {
    const v = this.venues.byLabel.get(ev.venue);
    if (!v) return;
    let code: string | undefined;
    let message = '';
    if (ev.state === 'disconnected' || ev.state === 'gap' || ev.state === 'stalled') {
      code = CODES.FEED_INTERRUPTED;
      message = `${v.slug} feed interrupted (${ev.state}${ev.detail ? `: ${ev.detail}` : ''}); prices may be stale until FEED_READY, then reconcile over REST`;
    } else if (ev.state === 'degraded') {
      code = CODES.FEED_DEGRADED;
      message = `${v.slug} is sending malformed frames (${ev.detail ?? 'dropped'}); they are dropped and books stay consistent, but updates may be delayed until FEED_READY`;
    } else if (ev.state === 'resynced' || ev.state === 'connected' || ev.state === 'recovered') {
      code = CODES.FEED_READY;
      message = `${v.slug} feed ${ev.state}; reconcile current prices over REST (/prices/bulk) for anything you hold`;
    }
    if (!code) return;
    const topic = `status:${v.slug}`;
    if (this.listeners(topic) === 0) return;
    this.publish(topic, {
      type: code === CODES.FEED_READY ? 'ready' : 'warning',
      code,
      source: v.slug,
      message,
      ...(ev.instrument ? { market_id: ev.instrument } : {}),
    });
  }

  private nextSeq(topic: string): number {
    return ++this.seqCell(topic).n;
  }

  /** The last seq of `topic` (0: none yet). */
  private seqOf(topic: string): number {
    return this.seq.get(topic)?.n ?? 0;
  }

  private seqCell(topic: string): SeqCell {
    let c = this.seq.get(topic);
    if (c === undefined) this.seq.set(topic, (c = { n: 0 }));
    return c;
  }

  /**
   * Serializes `body` once with its envelope (seq, epoch, ts, and `at`'s venue and receive times as
   * venue_ts and recv_ts) and publishes it to every subscriber;
   * subscribers in the hosted dialect get it on the topic's `DATA` twin with the body again under
   * `data`, built from the same JSON text. The envelope is appended to the JSON text rather than
   * spread into a copy of `body`, so a publish allocates nothing that outlives it (a per-publish
   * copy gets promoted and old-generation pauses set the fan-out tail; BENCHMARKS.md has the
   * measurement).
   */
  private publish(topic: string, body: Record<string, unknown> | string, subs?: Held, at?: FrameTimes): void {
    // `subs` is the answer for this very topic, so its seq cell is the topic's.
    const seq = subs?.seq !== undefined ? ++subs.seq.n : this.nextSeq(topic);
    this.emit(topic, body, seq, this.epoch, Date.now(), subs, at?.timestamp, at?.localTimestamp);
  }

  /**
   * A publication whose seq and epoch a cluster core assigned: published here with those numbers,
   * so every edge sends the same seq for the same update.
   */
  accept(p: Publication): void {
    const cell = this.seqCell(p.topic);
    if (p.seq > cell.n) cell.n = p.seq;
    this.emit(p.topic, p.body, p.seq, p.epoch, p.ts, undefined, p.venueTs, p.recvTs);
  }

  /** The last seq of every topic (a cluster core's snapshot carries them). */
  seqs(): [string, number][] {
    const out: [string, number][] = [];
    for (const [t, c] of this.seq) if (c.n > 0) out.push([t, c.n]);
    return out;
  }

  /** Takes the last seq of each topic from a cluster core's snapshot; another epoch's (a new core) replace all of them. */
  adoptSeqs(entries: Iterable<readonly [string, number]>, epoch = this.epoch): void {
    // Cells are reset rather than dropped: held topics' records share them.
    if (epoch !== this.epoch) for (const c of this.seq.values()) c.n = 0;
    this.epoch = epoch;
    for (const [t, s] of entries) this.seqCell(t).n = s;
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
          if (v) this.snapshot(ws, ch, v, rest.slice(i + 1), topic);
        }
      });
    }
  }

  /**
   * Serializes once (a body may come pre-serialized) and publishes with its envelope; the send time
   * `ts` is read once per publication, whatever the number of subscribers.
   */
  private emit(
    topic: string,
    body: Record<string, unknown> | string,
    seq: number,
    epoch: number,
    ts: number,
    subs?: Subs,
    venueTs?: number,
    recvTs?: number,
  ): void {
    const json = typeof body === 'string' ? body : JSON.stringify(body);
    const head = json.slice(0, -1);
    const times = recvTs === undefined ? '' : `"venue_ts":${venueTs ?? recvTs},"recv_ts":${recvTs},`;
    const tail = `${times}"seq":${seq},"epoch":${epoch},"ts":${ts}}`;
    const keep = this.watched.size > 0 && this.watched.has(topic);
    const s = subs ?? this.subs(topic) ?? NONE;
    const plain = keep || s.plain;
    const data = keep || s.data;
    const msg = plain ? `${head},${tail}` : '';
    const dataMsg = data ? `${head},"data":${json},${tail}` : '';
    if (keep) this.latest.set(topic, { seq, msg, dataMsg });
    this.published++;
    if (msg) this.app.publish(topic, msg);
    if (dataMsg) this.app.publish(topic + DATA, dataMsg);
    if (this.published$.observed)
      this.published$.next(recvTs === undefined ? { topic, body, seq, epoch, ts } : { topic, body, seq, epoch, ts, venueTs, recvTs });
  }

  /** Whether a topic has subscribers in either dialect (a cluster core exports every update: always). */
  private listeners(topic: string): number {
    if (this.opts.exportAll) return 1;
    return this.subs(topic) === undefined ? 0 : 1;
  }

  /** Whether a topic has subscribers in each dialect (undefined: none at all), asked once per change. */
  private subs(topic: string): Held | undefined {
    const h = this.held.get(topic);
    // A cluster core exports every update, listened to here or not.
    if (h === undefined) return this.opts.exportAll ? NONE : undefined;
    return this.answer(h);
  }

  /** `subs` of a held topic's record. */
  private answer(h: Held): Held | undefined {
    if (h.gen !== this.subGen) {
      const topic = h.topic;
      h.plain = this.app.numSubscribers(topic) > 0;
      h.data = this.hostedConns > 0 && this.app.numSubscribers(topic + DATA) > 0;
      h.gen = this.subGen;
    }
    return h.plain || h.data || this.opts.exportAll ? h : undefined;
  }

  /** A connection now holds `topic`. */
  private hold(topic: string): void {
    const at = this.marketScope(topic);
    let h = this.held.get(topic);
    if (h) h.conns++;
    else {
      const ch = at === undefined ? '' : topic.slice(0, at[0]);
      const slug = at === undefined ? '' : topic.slice(at[0] + 1, at[1]);
      this.held.set(topic, (h = { topic, ch, slug, seq: this.seqCell(topic), ascii: plainAscii(topic), conns: 1, gen: -1, plain: false, data: false }));
      if (at !== undefined) this.heldId(topic.slice(at[1] + 1)).topics.push(h);
    }
    if (at !== undefined) this.heldId(topic.slice(at[1] + 1)).n++;
  }

  private heldId(id: string): HeldId {
    let r = this.heldIds.get(id);
    if (r === undefined) this.heldIds.set(id, (r = { n: 0, topics: [] }));
    return r;
  }

  /** A connection no longer holds `topic`. */
  private release(topic: string): void {
    const h = this.held.get(topic);
    const gone = h !== undefined && --h.conns <= 0;
    if (gone) this.held.delete(topic);
    const at = this.marketScope(topic);
    if (at === undefined) return;
    const id = topic.slice(at[1] + 1);
    const r = this.heldIds.get(id);
    if (r === undefined) return;
    if (gone) {
      const i = r.topics.indexOf(h);
      if (i >= 0) r.topics.splice(i, 1);
    }
    if (--r.n <= 0) this.heldIds.delete(id);
  }

  /**
   * Where the slug and the id of a market-scoped topic (`prices`, `orderbook`, the ticker channel:
   * `<ch>:<slug>:<id>`) begin: the indexes of its two colons; undefined for any other topic.
   */
  private marketScope(topic: string): readonly [number, number] | undefined {
    const a = topic.indexOf(':');
    const ch = topic.slice(0, a);
    if (ch !== 'prices' && ch !== 'orderbook' && ch !== this.tickerChannel) return undefined;
    const b = topic.indexOf(':', a + 1);
    return b > 0 ? [a, b] : undefined;
  }

  /**
   * The subscribers of `<ch>:<v.slug>:<id>`, found through the id's held topics without building
   * the name (undefined: none). A cluster core, which exports what nobody holds, asks by name.
   */
  private marketSubs(ch: string, v: VenueConfig, id: string): Held | undefined {
    if (this.opts.exportAll) return this.subs(`${ch}:${v.slug}:${id}`);
    const r = this.heldIds.get(id);
    if (r === undefined) return undefined;
    const ts = r.topics;
    for (let i = 0; i < ts.length; i++) {
      const h = ts[i]!;
      if (h.ch === ch && h.slug === v.slug) return this.answer(h);
    }
    return undefined;
  }

  /** Whether a connection may hold a topic of market `id` (false: certainly none does). */
  private mayHold(id: string): boolean {
    return this.opts.exportAll === true || this.heldIds.has(id) || this.heldIds.has('*');
  }

  /** The uWS topic a connection listens on for `topic`: its `DATA` twin in the hosted dialect. */
  private wire(c: Conn, topic: string): string {
    return c.hosted ? topic + DATA : topic;
  }

  private tickerBody(v: VenueConfig, q: QuoteRecord): Record<string, unknown> {
    return {
      type: 'ticker',
      channel: this.tickerChannel,
      market_id: q.marketId,
      market_ticker: q.marketId,
      source: v.slug,
      yes_bid_dollars: q.yesBid === undefined ? null : toDollarString(q.yesBid),
      yes_ask_dollars: q.yesAsk === undefined ? null : toDollarString(q.yesAsk),
      price_dollars: q.lastPrice === undefined ? null : toDollarString(q.lastPrice),
      volume: q.volume ?? null,
      open_interest: q.openInterest ?? null,
    };
  }

  private bookBody(v: VenueConfig, marketId: string): Record<string, unknown> | undefined {
    const view = this.state.books.marketBook(v.label, marketId, this.opts.bookDepth ?? 20);
    if (!view) return undefined;
    const lv = (ls: readonly (readonly [number, number])[], flip: boolean): [number, number][] => ls.map(([p, s]) => [toCents(flip ? PAYOUT - p : p), s]);
    return {
      type: 'orderbook_update',
      channel: 'orderbook',
      market_id: marketId,
      source: v.slug,
      ready: view.ready,
      yes: { bids: lv(view.bids, false), asks: lv(view.asks, false) },
      no: v.capabilities.yesOnlyBook ? { bids: [], asks: [] } : { bids: lv(view.asks, true), asks: lv(view.bids, true) },
    };
  }

  /**
   * A quote change: prices, the catalog venue's ticker channel, and live games. `at`: the venue
   * frame behind the change, whose times the messages carry.
   */
  onQuote(q: QuoteRecord, at?: FrameTimes): void {
    const v = this.venues.byLabel.get(q.venue);
    if (!v) return;
    const subs = this.marketSubs('prices', v, q.marketId);
    if (!subs) this.shown.delete(q);
    else if (this.showsChange(q)) {
      const topic = subs.topic || `prices:${v.slug}:${q.marketId}`;
      if (subs.ascii && this.plainOnly(topic, subs)) {
        this.bytes.reset();
        priceBytes(this.bytes, q.marketId, v.slug, quotePrices(v, q), q.volume);
        this.sendBytes(topic, subs, at);
      } else this.publish(topic, priceBody(v, q, false), subs, at);
    }
    if (this.games) {
      const eid = this.games.eventOf(q.venue, q.marketId);
      const subs = eid ? this.subs(`live_games:${eid}`) : undefined;
      if (subs) this.publish(`live_games:${eid}`, { ...priceBody(v, q, false), type: 'live_game', channel: 'live_games', event_id: eid }, subs, at);
    }
    if (this.tickerChannel && v === this.catalogVenue && this.mayHold(q.marketId)) {
      const one = this.marketSubs(this.tickerChannel, v, q.marketId);
      const every = this.marketSubs(this.tickerChannel, v, '*');
      if (one || every) {
        const body = this.tickerBody(v, q);
        if (one) this.publish(one.topic || `${this.tickerChannel}:${v.slug}:${q.marketId}`, body, one, at);
        if (every) this.publish(every.topic || `${this.tickerChannel}:${v.slug}:*`, body, every, at);
      }
    }
  }

  /** Whether `q` differs from what its last price_update showed (and records it as shown). */
  private showsChange(q: QuoteRecord): boolean {
    const s = this.shown.get(q);
    if (!s) {
      this.shown.set(q, { yesBid: q.yesBid, yesAsk: q.yesAsk, lastPrice: q.lastPrice, volume: q.volume });
      return true;
    }
    if (s.yesBid === q.yesBid && s.yesAsk === q.yesAsk && s.lastPrice === q.lastPrice && s.volume === q.volume) return false;
    s.yesBid = q.yesBid;
    s.yesAsk = q.yesAsk;
    s.lastPrice = q.lastPrice;
    s.volume = q.volume;
    return true;
  }

  /**
   * A book change: orderbook subscribers of the market; `at` as for onQuote; `held`: the changed
   * book, when the caller has it (saves looking the market's book up).
   */
  onBook(label: string, marketId: string, at?: FrameTimes, held?: OrderBook): void {
    const v = this.venues.byLabel.get(label);
    if (!v) return;
    const subs = this.marketSubs('orderbook', v, marketId);
    if (!subs) return;
    const topic = subs.topic || `orderbook:${v.slug}:${marketId}`;
    const sides = this.state.books.marketSides(label, marketId, held);
    const depth = this.opts.bookDepth ?? 20;
    if (sides === undefined) {
      const body = this.bookBody(v, marketId);
      if (body) this.publish(topic, body, subs, at);
    } else if (subs.ascii && this.plainOnly(topic, subs)) {
      this.bytes.reset();
      bookBytes(this.bytes, marketId, v.slug, sides, depth, v.capabilities.yesOnlyBook);
      this.sendBytes(topic, subs, at);
    } else this.publish(topic, bookJson(marketId, v.slug, sides, depth, v.capabilities.yesOnlyBook), subs, at);
  }

  /**
   * Whether a publication on `topic` goes out only as the plain message (no hosted-dialect twin,
   * no coalescing client keeping it, nobody observing `published$`), so it can be written as bytes.
   */
  private plainOnly(topic: string, subs: Subs): boolean {
    return subs.plain && !subs.data && !this.published$.observed && !(this.watched.size > 0 && this.watched.has(topic));
  }

  /** Publishes the body in `bytes` (without its closing brace) with its envelope, as `publish` would the text. */
  private sendBytes(topic: string, subs: Held, at: FrameTimes | undefined): void {
    const seq = subs.seq !== undefined ? ++subs.seq.n : this.nextSeq(topic);
    this.tailBytes(seq, Date.now(), at);
    this.published++;
    this.app.publish(topic, this.bytes.view());
  }

  /** The envelope `emit` appends (`,` then seq, epoch, ts and the frame's times, and `}`), into `bytes`. */
  private tailBytes(seq: number, ts: number, at: FrameTimes | undefined): void {
    const w = this.bytes;
    if (at !== undefined) {
      w.ascii(',"venue_ts":');
      w.num(at.timestamp);
      w.ascii(',"recv_ts":');
      w.num(at.localTimestamp);
      w.ascii(',"seq":');
    } else w.ascii(',"seq":');
    w.num(seq);
    w.ascii(',"epoch":');
    w.num(this.epoch);
    w.ascii(',"ts":');
    w.num(ts);
    w.char(125);
  }

  // ---- connections ---------------------------------------------------------------------

  private install(): void {
    this.app.ws<Conn>(this.path, {
      // uWS drops a frame over its own limit without a close frame (1006): its limit is well above
      // ours, so that a message over ours gets 1009 and a reason from message().
      maxPayloadLength: this.maxPayload() * 16,
      idleTimeout: this.opts.idleTimeoutSec ?? 120,
      sendPingsAutomatically: true,
      // uWS skips a subscriber above this; our sweep acts earlier (coalesce) and at dropBytes.
      maxBackpressure: this.maxBackpressure(),
      upgrade: (res, req, context) => this.upgrade(res, req, context),
      open: (ws) => this.open(ws),
      message: (ws, data, isBinary) => this.receive(ws, data, isBinary),
      drain: (ws) => this.drain(ws),
      close: (ws) => this.onClose(ws),
    });
  }

  private upgrade(res: UWS.HttpResponse, req: UWS.HttpRequest, context: UWS.us_socket_context_t): void {
    const headerKey = req.getHeader('x-api-key');
    const queryKey = new URLSearchParams(req.getQuery() ?? '').get('api_key') ?? undefined;
    const secKey = req.getHeader('sec-websocket-key');
    const proto = req.getHeader('sec-websocket-protocol');
    const ext = req.getHeader('sec-websocket-extensions');
    const deny = (status: string, code: string, message: string): void => {
      res.cork(() => {
        res
          .writeStatus(status)
          .writeHeader('content-type', 'application/json')
          .end(JSON.stringify({ error: message, success: false, code }));
      });
    };
    const v = this.keys.verify(headerKey || queryKey);
    if (!v.ok) {
      const msg = { missing: 'API key required: X-API-Key header or api_key query parameter', invalid: 'invalid API key', revoked: 'API key has been revoked' }[
        v.reason
      ];
      return deny('401 Unauthorized', `auth.${v.reason}_key`, msg);
    }
    const plan = this.plans[v.record.plan];
    const open = this.perKey.get(v.record.id) ?? 0;
    if (plan.ws.connections !== 0 && open >= plan.ws.connections)
      return deny(
        '429 Too Many Requests',
        'rate_limit.connections',
        `the ${plan.name} plan allows ${plan.ws.connections} concurrent WebSocket connections per key`,
      );
    const conn: Conn = {
      key: v.record,
      plan,
      topics: new Map(),
      delivered: new Map(),
      coalescing: false,
      coalescingSince: 0,
      closed: false,
      notice: undefined,
      closing: undefined,
      rateWindow: 0,
      rateCount: 0,
      hosted: false,
      budget: new MessageBudget(
        this.opts.messageBudget?.perSecond ?? MESSAGE_BUDGET.perSecond,
        this.opts.messageBudget?.burst ?? MESSAGE_BUDGET.burst,
        Date.now(),
      ),
    };
    res.upgrade(conn, secKey, proto, ext, context);
  }

  private open(ws: UWS.WebSocket<Conn>): void {
    const c = ws.getUserData();
    this.conns.add(ws);
    this.perKey.set(c.key.id, (this.perKey.get(c.key.id) ?? 0) + 1);
    ws.send(JSON.stringify({ type: 'welcome', epoch: this.epoch, plan: c.plan.name, channels: this.channelsOf(c.plan), ts: Date.now() }));
  }

  private onClose(ws: UWS.WebSocket<Conn>): void {
    const c = ws.getUserData();
    c.closed = true;
    this.conns.delete(ws);
    // uWS drops the closed socket's subscriptions itself.
    this.subGen++;
    for (const t of c.topics.keys()) this.release(t);
    if (c.hosted) this.hostedConns--;
    if (c.coalescing) {
      c.coalescing = false;
      for (const t of c.topics.keys()) this.unwatch(t);
    }
    const n = (this.perKey.get(c.key.id) ?? 1) - 1;
    if (n <= 0) this.perKey.delete(c.key.id);
    else this.perKey.set(c.key.id, n);
  }

  /**
   * Channel names a plan may use, with `{venue_a}` resolved to the catalog venue's slug; the alert
   * channels with the entitlement of their REST endpoints (the plan does not block their group).
   */
  private channelsOf(plan: Plan): string[] {
    const slug = this.catalogVenue?.slug ?? 'venue_a';
    const out = plan.ws.channels.map((c) => c.replace('{venue_a}', slug));
    if (this.alerts) for (const ch of ALERT_CHANNELS) if (!plan.blocked.includes(ch)) out.push(ch);
    return out;
  }

  private send(ws: UWS.WebSocket<Conn>, body: Record<string, unknown>): void {
    if (!ws.getUserData().closed) ws.send(JSON.stringify({ ...body, ts: Date.now() }));
  }

  private maxPayload(): number {
    return this.opts.maxPayload ?? 64 * 1024;
  }

  /**
   * Every client message: the size limit (1009), the message budget (RATE_LIMITED, then 1008),
   * UTF-8 of binary frames (1007; uWS checks text frames itself), then the message.
   */
  private receive(ws: UWS.WebSocket<Conn>, data: ArrayBuffer, isBinary: boolean): void {
    const c = ws.getUserData();
    if (c.closed) return;
    if (data.byteLength > this.maxPayload()) return this.closeWith(ws, c, CLOSE.TOO_BIG, `message too big: at most ${this.maxPayload()} bytes`);
    const verdict = c.budget.take(Date.now());
    if (verdict === 'close') return this.closeWith(ws, c, CLOSE.POLICY, 'message rate limit exceeded after RATE_LIMITED');
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
        return this.closeWith(ws, c, CLOSE.INVALID_PAYLOAD, 'binary message is not valid UTF-8');
      }
    this.message(ws, c, text);
  }

  private closeWith(ws: UWS.WebSocket<Conn>, c: Conn, code: number, reason: string): void {
    c.closed = true;
    this.log.warn({ key: c.key.id, code, reason }, 'closing websocket client');
    this.endWhenRoom(ws, c, code, reason);
  }

  /** uWS's own per-connection buffer cap: it skips a publish, and drops a close frame, past it. */
  private maxBackpressure(): number {
    return this.dropBytes * 2;
  }

  /** Sends `text` now if uWS's buffer has room for it (past its cap uWS drops it), else on a later drain. */
  private sendWhenRoom(ws: UWS.WebSocket<Conn>, c: Conn, text: string): void {
    if (ws.getBufferedAmount() + text.length + CLOSE_FRAME_ROOM <= this.maxBackpressure()) {
      c.notice = undefined;
      ws.send(text);
    } else c.notice = text;
  }

  /**
   * Closes with `code` and `reason` after what the client has not read yet. uWS drops the close
   * frame of a connection whose buffer has reached its cap (the client would see 1006, no reason),
   * so such a close waits for the client to read (`drain`); one that reads nothing for `stallMs`
   * more is cut off.
   */
  private endWhenRoom(ws: UWS.WebSocket<Conn>, c: Conn, code: number, reason: string): void {
    if (c.notice === undefined && ws.getBufferedAmount() + CLOSE_FRAME_ROOM <= this.maxBackpressure()) {
      c.closing = undefined;
      ws.end(code, reason);
    } else c.closing ??= { code, reason, since: Date.now() };
  }

  private message(ws: UWS.WebSocket<Conn>, c: Conn, text: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return this.send(ws, { type: 'error', code: CODES.BAD_JSON, message: 'message is not valid JSON' });
    }
    const parsed = parseClientMessage(raw);
    if (!parsed.ok) return this.send(ws, { type: 'error', code: CODES.BAD_REQUEST, message: parsed.message });
    if (parsed.hosted && !c.hosted) this.speakHosted(ws, c);
    const m = parsed.message;
    if (m.type === 'ping') return this.send(ws, { type: 'pong' });
    const channels = this.admit(ws, c, m);
    if (!channels) return;
    const ch = m.channel;
    if ((ALERT_CHANNELS as readonly string[]).includes(ch)) return this.subscribeAlerts(ws, c, m.type, ch as AlertChannel, m.market_ids);
    if (ch === 'arb' || ch === 'ev') return this.subscribeSignals(ws, c, m.type, ch, m.market_ids);
    if (ch === 'live_games') return this.subscribeGames(ws, c, m.type, m.event_ids);
    const wantAll = m.all === true || (m.market_ids?.length === 1 && m.market_ids[0] === '*');
    if (wantAll) {
      if (ch !== this.tickerChannel || !channels.includes(`${ch}:all`))
        return this.send(ws, {
          type: 'error',
          code: CODES.NOT_ENTITLED,
          channel: ch,
          message: 'subscribing to all markets is for Enterprise plans on the ticker channel',
        });
      const topic = `${ch}:${this.catalogVenue!.slug}:*`;
      if (m.type === 'subscribe') {
        this.sub(ws, c, topic, ch);
        // The recovery signals (FEED_INTERRUPTED / FEED_READY) of the feed, as for explicit tickers.
        this.sub(ws, c, `status:${this.catalogVenue!.slug}`, 'status');
      } else this.unsub(ws, c, topic);
      return this.send(ws, { type: m.type === 'subscribe' ? 'subscribed' : 'unsubscribed', channel: ch, market_ids: ['*'] });
    }
    const ids = m.market_ids ?? [];
    if (ids.length === 0) return this.send(ws, { type: 'error', code: CODES.BAD_REQUEST, channel: ch, message: 'market_ids is required (a non-empty list)' });
    const accepted: { id: string; v: VenueConfig }[] = [];
    const unknown: string[] = [];
    for (const raw of ids) {
      const r = this.resolve(raw, ch);
      if (r) accepted.push(r);
      else unknown.push(raw);
    }
    if (m.type === 'subscribe') {
      const cap = c.plan.ws.subscriptions;
      // Only market subscriptions count: not the feed-status topics added with them, and not a
      // market subscribed again.
      const inUse = this.subscriptionCount(c);
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
        const topic = `${ch}:${a.v.slug}:${a.id}`;
        const last = m.resume?.[a.id] ?? m.resume?.[`${a.v.slug}:${a.id}`];
        if (last !== undefined && this.opts.replay) {
          void this.resume(ws, c, { topic, ch, v: a.v, id: a.id }, last, this.opts.replay);
          continue;
        }
        this.sub(ws, c, topic, ch);
        this.sub(ws, c, `status:${a.v.slug}`, 'status');
        this.snapshot(ws, ch, a.v, a.id, topic);
      }
    } else {
      for (const a of accepted) this.unsub(ws, c, `${ch}:${a.v.slug}:${a.id}`);
      for (const part of byVenue(accepted)) this.send(ws, { type: 'unsubscribed', channel: ch, ...part });
    }
    if (unknown.length)
      this.send(ws, {
        type: 'warning',
        code: CODES.UNKNOWN_ID,
        channel: ch,
        market_ids: unknown,
        message: `unknown market id${unknown.length > 1 ? 's' : ''} (a market id, not an event id, as the venue names it or as platform:market_id)`,
      });
  }

  /**
   * The subscribe-rate limit, the channel's existence and the plan's entitlement to it: the plan's
   * channels when the message may go on, else undefined with the client answered.
   */
  private admit(ws: UWS.WebSocket<Conn>, c: Conn, m: Extract<ClientMessage, { channel: string }>): string[] | undefined {
    const now = Date.now();
    if (now - c.rateWindow >= 1000) {
      c.rateWindow = now;
      c.rateCount = 0;
    }
    const ch = m.channel;
    if (++c.rateCount > (this.opts.subscribeRate ?? 20)) {
      this.send(ws, {
        type: 'error',
        code: CODES.RATE_LIMITED,
        message: `at most ${this.opts.subscribeRate ?? 20} subscribe/unsubscribe messages per second`,
        channel: ch,
      });
      return undefined;
    }
    const channels = this.channelsOf(c.plan);
    const known = [
      'prices',
      'orderbook',
      ...(this.tickerChannel ? [this.tickerChannel] : []),
      ...(this.signals ? ['arb', 'ev'] : []),
      ...(this.games ? ['live_games'] : []),
      ...(this.alerts ? ALERT_CHANNELS : []),
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
  private subscribeAlerts(ws: UWS.WebSocket<Conn>, c: Conn, type: 'subscribe' | 'unsubscribe', ch: AlertChannel, ids: readonly string[] | undefined): void {
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
      const inUse = this.subscriptionCount(c);
      if (cap !== 0 && !c.topics.has(topic) && inUse + 1 > cap)
        return this.send(ws, {
          type: 'error',
          code: CODES.SUBSCRIPTION_LIMIT,
          channel: ch,
          message: `the ${c.plan.name} plan allows ${cap} subscriptions per connection (${inUse} in use)`,
        });
      this.sub(ws, c, topic, ch);
    } else this.unsub(ws, c, topic);
    this.send(ws, { type: type === 'subscribe' ? 'subscribed' : 'unsubscribed', channel: ch, market_ids: ['*'] });
  }

  /** Subscriptions a connection holds against its plan's cap (feed-status topics excluded). */
  private subscriptionCount(c: Conn): number {
    let n = 0;
    for (const ch of c.topics.values()) if (ch !== 'status') n++;
    return n;
  }

  private subscribeGames(ws: UWS.WebSocket<Conn>, c: Conn, type: 'subscribe' | 'unsubscribe', ids: readonly string[] | undefined): void {
    if (!ids || ids.length === 0)
      return this.send(ws, {
        type: 'error',
        code: CODES.BAD_REQUEST,
        channel: 'live_games',
        message: 'event_ids is required (a non-empty list of game event ids)',
      });
    const known = ids.filter((id) => this.games!.hasEvent(id));
    const unknown = ids.filter((id) => !this.games!.hasEvent(id));
    if (type === 'subscribe') {
      for (const id of known) this.sub(ws, c, `live_games:${id}`, 'live_games');
      this.send(ws, { type: 'subscribed', channel: 'live_games', event_ids: known, live: known.filter((id) => this.games!.isLive(id)) });
    } else {
      for (const id of known) this.unsub(ws, c, `live_games:${id}`);
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
  private subscribeSignals(ws: UWS.WebSocket<Conn>, c: Conn, type: 'subscribe' | 'unsubscribe', ch: 'arb' | 'ev', ids: readonly string[] | undefined): void {
    const all = !ids || ids.length === 0 || (ids.length === 1 && ids[0] === '*');
    const groups: number[] = [];
    const unknown: string[] = [];
    if (!all)
      for (const id of ids) {
        if (/^\d{1,12}$/.test(id) && this.signals?.get(Number(id))) groups.push(Number(id));
        else unknown.push(id);
      }
    const topics = all ? [`${ch}:*`] : groups.map((g) => `${ch}:${g}`);
    if (type === 'unsubscribe') {
      for (const t of topics) this.unsub(ws, c, t);
      this.send(ws, { type: 'unsubscribed', channel: ch, market_ids: all ? ['*'] : groups.map(String) });
    } else {
      this.send(ws, { type: 'subscribed', channel: ch, market_ids: all ? ['*'] : groups.map(String) });
      for (const t of topics) this.sub(ws, c, t, ch);
      for (const g of all ? [] : groups) {
        const s = this.signals?.get(g);
        if (s) this.sendSnapshot(ws, this.signalBody(ch, s), this.seqOf(`${ch}:${g}`));
      }
    }
    if (unknown.length)
      this.send(ws, {
        type: 'warning',
        code: CODES.UNKNOWN_ID,
        channel: ch,
        market_ids: unknown,
        message: 'unknown group id (group_id from /matching-markets or /events)',
      });
  }

  /** A market id as given (native, or platform:market_id) → the venue and native id, if we know the market. */
  private resolve(raw: string, ch: string): { id: string; v: VenueConfig } | undefined {
    const i = raw.indexOf(':');
    if (i > 0) {
      const v = this.venues.bySlug.get(raw.slice(0, i));
      if (v) {
        const id = raw.slice(i + 1);
        return this.state.catalog.get(v.label, id) && this.channelFits(ch, v) ? { id, v } : undefined;
      }
    }
    const venues = ch === this.tickerChannel ? [this.catalogVenue!] : this.venues.enabled;
    for (const v of venues) if (this.state.catalog.get(v.label, raw) && this.channelFits(ch, v)) return { id: raw, v };
    return undefined;
  }

  private channelFits(ch: string, v: VenueConfig): boolean {
    if (ch === 'orderbook') return v.capabilities.orderbook;
    if (ch === this.tickerChannel) return v === this.catalogVenue;
    return true;
  }

  private snapshot(ws: UWS.WebSocket<Conn>, ch: string, v: VenueConfig, id: string, topic: string): void {
    const seq = this.seqOf(topic);
    let body: Record<string, unknown> | undefined;
    if (ch === 'prices') {
      const q = this.state.quotes.get(v.label, id);
      body = q
        ? priceBody(v, q, true)
        : {
            type: 'price_update',
            channel: 'prices',
            market_id: id,
            source: v.slug,
            yes_bid: null,
            yes_ask: null,
            no_bid: null,
            no_ask: null,
            last_price: null,
            volume: null,
            snapshot: true,
          };
    } else if (ch === 'orderbook') body = this.bookBody(v, id);
    else if (ch === this.tickerChannel) {
      const q = this.state.quotes.get(v.label, id);
      if (q) body = this.tickerBody(v, q);
    }
    if (body) this.sendSnapshot(ws, body, seq);
  }

  /**
   * Subscribes after sending what the client missed since `last`, read off the stream, in order: the
   * topic is joined only once the replay has reached this hub's own seq, with no await between, so
   * nothing falls between the replayed and the live messages. When the window no longer holds the
   * messages after `last`, or `last` is past the topic's seq, the client gets the snapshot and a
   * RESYNC warning.
   */
  private async resume(
    ws: UWS.WebSocket<Conn>,
    c: Conn,
    t: { topic: string; ch: string; v: VenueConfig; id: string },
    last: number,
    replay: Replay,
  ): Promise<void> {
    let after = last;
    for (let round = 0; round < 4; round++) {
      const held = await replay(t.topic, after, this.epoch).catch(() => undefined);
      if (!this.conns.has(ws)) return;
      if (!held) break;
      const upto = this.seqOf(t.topic);
      // A seq past this topic's own: this hub may trail the one the client came from (an edge
      // catching up on the stream), so it waits a little for it; if it never comes, the client
      // needs the snapshot.
      if (after > upto) {
        if (round < 3 && (await this.reaches(t.topic, after, 1_000)) && this.conns.has(ws)) continue;
        break;
      }
      let gap = false;
      ws.cork(() => {
        for (const p of held) {
          if (p.seq <= after || p.seq > upto) continue;
          if (p.seq !== after + 1) {
            gap = true;
            break;
          }
          const body = typeof p.body === 'string' ? (JSON.parse(p.body) as Record<string, unknown>) : p.body;
          const times = p.recvTs === undefined ? {} : { venue_ts: p.venueTs ?? p.recvTs, recv_ts: p.recvTs };
          this.send(ws, { ...body, ...(c.hosted ? { data: body } : {}), ...times, seq: p.seq, epoch: p.epoch, ts: p.ts });
          after = p.seq;
        }
      });
      if (gap) break;
      if (after >= upto) return this.join(ws, c, t.topic, t.ch, t.v);
    }
    ws.cork(() => {
      this.join(ws, c, t.topic, t.ch, t.v);
      this.snapshot(ws, t.ch, t.v, t.id, t.topic);
      this.send(ws, {
        type: 'warning',
        code: CODES.RESYNC,
        channel: t.ch,
        market_ids: [t.id],
        message: `the messages after seq ${last} are no longer held: this is a snapshot, reconcile over REST`,
      });
    });
  }

  /** Whether this hub's seq of `topic` reaches `seq` within `ms` (checked every 50 ms). */
  private async reaches(topic: string, seq: number, ms: number): Promise<boolean> {
    for (let waited = 0; this.seqOf(topic) < seq; waited += 50) {
      if (waited >= ms) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
    return true;
  }

  private join(ws: UWS.WebSocket<Conn>, c: Conn, topic: string, ch: string, v: VenueConfig): void {
    this.sub(ws, c, topic, ch);
    this.sub(ws, c, `status:${v.slug}`, 'status');
  }

  /** A streamed message's current state, sent to one client on subscribe, in the streamed envelope of its dialect. */
  private sendSnapshot(ws: UWS.WebSocket<Conn>, body: Record<string, unknown>, seq: number): void {
    this.send(ws, { ...body, ...(ws.getUserData().hosted ? { data: body } : {}), snapshot: true, seq, epoch: this.epoch });
  }

  /** The connection spoke the hosted dialect: from now on its streamed messages carry `data`. */
  private speakHosted(ws: UWS.WebSocket<Conn>, c: Conn): void {
    this.subGen++;
    if (!c.coalescing)
      for (const t of c.topics.keys()) {
        ws.unsubscribe(t);
        ws.subscribe(t + DATA);
      }
    if (!c.hosted) this.hostedConns++;
    c.hosted = true;
  }

  private sub(ws: UWS.WebSocket<Conn>, c: Conn, topic: string, ch: string): void {
    if (!c.topics.has(topic)) {
      if (c.coalescing) this.watch(topic);
      this.hold(topic);
    }
    this.subGen++;
    c.topics.set(topic, ch);
    if (!c.coalescing) ws.subscribe(this.wire(c, topic));
  }

  private unsub(ws: UWS.WebSocket<Conn>, c: Conn, topic: string): void {
    if (c.topics.has(topic)) {
      if (c.coalescing) this.unwatch(topic);
      this.release(topic);
    }
    this.subGen++;
    c.topics.delete(topic);
    c.delivered.delete(topic);
    ws.unsubscribe(this.wire(c, topic));
  }

  // ---- backpressure ------------------------------------------------------------------

  private checkBackpressure(): void {
    for (const ws of this.conns) {
      const c = ws.getUserData();
      if (c.closing && Date.now() - c.closing.since > (this.opts.stallMs ?? 10_000)) ws.close();
      if (c.closed) continue;
      const buffered = ws.getBufferedAmount();
      if (!c.coalescing) {
        if (buffered <= this.coalesceBytes) continue;
        // First bound: off the topics; from now on this client gets the latest of each topic when
        // it drains. (Even a client already past the second bound is coalesced first and given
        // stallMs to catch up: the sweep can see a burst only after it happened.)
        c.coalescing = true;
        c.coalescingSince = Date.now();
        this.subGen++;
        for (const t of c.topics.keys()) {
          c.delivered.set(t, this.seqOf(t));
          this.watch(t);
          ws.unsubscribe(this.wire(c, t));
        }
        this.sendWhenRoom(
          ws,
          c,
          JSON.stringify({
            type: 'warning',
            code: CODES.COALESCED,
            message: 'you are reading slower than updates arrive: updates are coalesced to the latest per market until you catch up',
            ts: Date.now(),
          }),
        );
        continue;
      }
      // Second bound: still coalescing and past dropBytes, or not catching up within stallMs.
      const stalled = Date.now() - c.coalescingSince > (this.opts.stallMs ?? 10_000);
      if (buffered > this.dropBytes || stalled) {
        this.dropped++;
        this.log.warn({ key: c.key.id, buffered, stalled }, 'websocket client too slow; disconnecting');
        c.closed = true;
        this.endWhenRoom(
          ws,
          c,
          CLOSE.BACKPRESSURE,
          stalled ? 'backpressure: client stopped reading (coalesced and not catching up)' : 'backpressure limit exceeded: client is not reading',
        );
      }
    }
  }

  private drain(ws: UWS.WebSocket<Conn>): void {
    const c = ws.getUserData();
    if (c.notice !== undefined) this.sendWhenRoom(ws, c, c.notice);
    if (c.closing) return this.endWhenRoom(ws, c, c.closing.code, c.closing.reason);
    if (!c.coalescing || c.closed) return;
    if (ws.getBufferedAmount() > this.coalesceBytes / 2) return;
    for (const [t] of c.topics) {
      const l = this.latest.get(t);
      if (l && l.seq > (c.delivered.get(t) ?? 0)) {
        ws.send(c.hosted ? l.dataMsg : l.msg);
        c.delivered.set(t, l.seq);
      }
      if (ws.getBufferedAmount() > this.coalesceBytes) return; // more next drain
    }
    c.coalescing = false;
    c.delivered.clear();
    this.subGen++;
    for (const t of c.topics.keys()) {
      this.unwatch(t);
      ws.subscribe(this.wire(c, t));
    }
  }

  private watch(topic: string): void {
    this.watched.set(topic, (this.watched.get(topic) ?? 0) + 1);
  }

  private unwatch(topic: string): void {
    const n = (this.watched.get(topic) ?? 1) - 1;
    if (n > 0) return void this.watched.set(topic, n);
    this.watched.delete(topic);
    this.latest.delete(topic);
  }

  /** Topics whose latest message is kept for coalescing clients (tests check it returns to 0). */
  get retainedTopics(): number {
    return this.latest.size;
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
