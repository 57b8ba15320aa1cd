import type { VenueConfig } from '../config/schema.js';
import type { BookSideName, MarketStatus, VenueLabel } from '../core/types.js';
import { SimBookPool } from './book.js';
import { DAY, generateWorld, HOUR, type PropFields, type WorldBuilder } from './generate/index.js';
import { phrase, type PropMeta } from './phrasing/index.js';
import { QuoteStates } from './quote-state.js';
import { Rng } from './rng.js';
import type { SimChange, SimEvent, SimListing, SimProposition, SimTrade, SimWorldApi } from './types.js';

/**
 * The simulator's seeded world (SYNTHETIC DATA). Real-world-like events and propositions whose fair
 * probability walks; each venue lists a subset with its own ids and phrasing (phrasing/) and
 * keeps a YES-perspective book that tracks the fair value with its own noise and lag, so that
 * cross-venue prices disagree a little, and now and then by more than fees (arbitrage).
 * Informed wallets trade ahead of scheduled jumps; "faders" trade against them; noise wallets at
 * random. Games go scheduled → live → final and their markets close, settle and finalize.
 *
 * Deterministic: the same seed and anchor day give the same events, ids and (with a fixed clock and
 * `tick()`) the same walk.
 */

const MIN_PRICE = 100;
const MAX_PRICE = 9_900;

export interface WorldOptions {
  readonly seed: number;
  readonly venues: readonly VenueConfig[];
  /** Book changes per second when started. */
  readonly ticksPerSecond?: number;
  /** Clock; defaults to Date.now. */
  readonly now?: () => number;
  /** Multiplies the number of games per league (default 1). */
  readonly scale?: number;
  /** Book levels per side (default 8). */
  readonly depth?: number;
  /**
   * Trades kept per venue for the venues' trade endpoints (default 20,000): past it the oldest half
   * is dropped, as a venue's API serves recent trades only.
   */
  readonly tradeLog?: number;
}

interface Jump {
  readonly prop: SimProposition;
  readonly delta: number;
  readonly atTick: number;
}

interface Wallet {
  readonly address: string;
  readonly kind: 'informed' | 'fader' | 'noise';
}

/** The world: SimWorldApi plus the controls used by the sim runner, tests and benchmarks. */
export class SimWorld implements SimWorldApi {
  readonly seed: number;
  readonly events: SimEvent[] = [];
  readonly anchor: number;
  private readonly rng: Rng;
  private readonly clock: () => number;
  private readonly byVenue = new Map<VenueLabel, SimListing[]>();
  /** venue → id → listing (nested: no key string per listing). */
  private readonly byId = new Map<VenueLabel, Map<string, SimListing>>();
  private readonly pending: { listing: SimListing; at: number }[] = [];
  /** Each listing's quoting state, by its book's slot. */
  private readonly quotes = new QuoteStates();
  /** Texts seen while generating, to keep one copy of each (titles, event ids … repeat across listings); dropped once built. */
  private texts: Map<string, string> | undefined = new Map();
  /** Tag lists seen while generating, one array per distinct list; dropped once built. */
  private tagLists: Map<string, readonly string[]> | undefined = new Map();
  private readonly listeners = new Set<(c: SimChange) => void>();
  private readonly tradeLog = new Map<VenueLabel, SimTrade[]>();
  private readonly active: SimListing[] = [];
  private readonly props: SimProposition[] = [];
  private readonly jumps: Jump[] = [];
  private readonly wallets: Wallet[] = [];
  private readonly complementOf = new Map<SimProposition, SimProposition>();
  private readonly depth: number;
  private readonly books: SimBookPool;
  private tickCount = 0;
  private tradeSeq = 0;
  private timer: NodeJS.Timeout | undefined;
  private lifecycleTimer: NodeJS.Timeout | undefined;
  ticksPerSecond: number;

  constructor(private readonly opts: WorldOptions) {
    this.seed = opts.seed;
    this.rng = new Rng(opts.seed);
    this.clock = opts.now ?? Date.now;
    this.ticksPerSecond = opts.ticksPerSecond ?? 200;
    this.depth = opts.depth ?? 8;
    this.books = new SimBookPool(this.depth);
    this.anchor = Math.floor(this.clock() / DAY) * DAY;
    for (const v of opts.venues) {
      this.byVenue.set(v.label, []);
      this.tradeLog.set(v.label, []);
    }
    this.makeWallets();
    this.generate(opts.scale ?? 1);
    this.texts = undefined;
    this.tagLists = undefined;
    this.quotes.trim();
    this.lifecycle(false);
  }

  now(): number {
    return this.clock();
  }

  listings(venue: VenueLabel): readonly SimListing[] {
    return this.byVenue.get(venue) ?? [];
  }

  listing(venue: VenueLabel, id: string): SimListing | undefined {
    return this.byId.get(venue)?.get(id);
  }

  trades(venue: VenueLabel): readonly SimTrade[] {
    return this.tradeLog.get(venue) ?? [];
  }

  onChange(fn: (c: SimChange) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Wallets of the world, for tests that check alerts fire on informed wallets only. */
  walletsOf(kind: Wallet['kind']): string[] {
    return this.wallets.filter((w) => w.kind === kind).map((w) => w.address);
  }

  /** Starts the timers: book changes at ticksPerSecond, lifecycle once a second. */
  start(): void {
    if (this.timer) return;
    const everyMs = 10;
    let carry = 0;
    this.timer = setInterval(() => {
      carry += (this.ticksPerSecond * everyMs) / 1000;
      const n = Math.floor(carry);
      carry -= n;
      if (n > 0) this.tick(n);
    }, everyMs);
    this.timer.unref?.();
    this.lifecycleTimer = setInterval(() => this.lifecycle(true), 1000);
    this.lifecycleTimer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.lifecycleTimer) clearInterval(this.lifecycleTimer);
    this.timer = undefined;
    this.lifecycleTimer = undefined;
  }

  /** Advances `n` random book changes (and the trades and jumps that come with them). */
  tick(n = 1): void {
    const rng = this.rng;
    for (let k = 0; k < n; k++) {
      this.tickCount++;
      if (this.active.length === 0) return;
      // Fair values drift; now and then a jump is scheduled and informed wallets get ahead of it.
      if (rng.chance(0.05)) {
        const p = rng.pick(this.props);
        if (!p.resolved) this.setFair(p, p.fair + Math.round(rng.normal() * 80));
      }
      if (rng.chance(0.002)) {
        const p = rng.pick(this.props);
        if (!p.resolved) this.jumps.push({ prop: p, delta: (rng.chance(0.5) ? 1 : -1) * rng.int(600, 1500), atTick: this.tickCount + rng.int(200, 2000) });
      }
      while (this.jumps.length > 0 && this.jumps[0]!.atTick <= this.tickCount) {
        const j = this.jumps.shift()!;
        if (!j.prop.resolved) this.setFair(j.prop, j.prop.fair + j.delta);
      }
      const l = this.active[Math.floor(rng.next() * this.active.length)]!;
      if (l.status !== 'active') continue;
      const jump = this.jumps.find((j) => j.prop === l.prop);
      if (jump && rng.chance(0.3)) this.trade(l, this.walletOf('informed'), jump.delta > 0 !== l.inverted ? 'yes' : 'no');
      else if (jump && rng.chance(0.1)) this.trade(l, this.walletOf('fader'), jump.delta > 0 !== l.inverted ? 'no' : 'yes');
      else if (rng.chance(0.12)) this.trade(l, this.walletOf('noise'), rng.chance(0.5) ? 'yes' : 'no');
      else this.requote(l);
    }
  }

  // ---- generation -------------------------------------------------------------------------

  private makeWallets(): void {
    const add = (kind: Wallet['kind'], n: number): void => {
      for (let i = 0; i < n; i++) this.wallets.push({ address: `0x${this.rng.hex(40)}`, kind });
    };
    add('informed', 8);
    add('fader', 6);
    add('noise', 200);
  }

  private walletOf(kind: Wallet['kind']): string {
    const ws = this.wallets.filter((w) => w.kind === kind);
    return this.rng.pick(ws).address;
  }

  // Events and propositions are written out field by field: objects made by spreading the
  // generators' varied literals each got a hidden class of their own.
  private newEvent(e: Omit<SimEvent, 'props' | 'state'>): SimEvent {
    const ev: SimEvent = {
      id: e.id,
      category: e.category,
      title: this.text(e.title),
      sport: e.sport,
      league: e.league,
      home: e.home,
      away: e.away,
      startTime: e.startTime,
      closeTime: e.closeTime,
      futures: e.futures,
      state: 'scheduled',
      props: [],
    };
    this.events.push(ev);
    return ev;
  }

  private newProp(ev: SimEvent, fields: PropFields, meta: PropMeta): SimProposition {
    const p: SimProposition = {
      marketClass: fields.marketClass,
      marketType: fields.marketType,
      period: fields.period,
      line: fields.line,
      side: fields.side,
      player: fields.player,
      team: fields.team,
      subject: this.text(fields.subject),
      statement: this.text(fields.statement),
      id: flat(`${ev.id}.${ev.props.length}`),
      event: ev,
      fair: clampFair(fields.fair),
      resolved: undefined,
    };
    ev.props.push(p);
    this.props.push(p);
    this.list(p, meta);
    return p;
  }

  private list(prop: SimProposition, meta: PropMeta): void {
    for (const v of this.opts.venues) {
      if (!v.enabled) continue;
      // Every venue lists what it lists with some gaps, as real venues do.
      if (!this.rng.chance(0.85)) continue;
      const spec = phrase(v, prop, meta, this.rng);
      if (!spec) continue;
      const id = flat(spec.id || spec.ids['condition_id']!);
      if (this.byId.get(v.label)?.has(id)) continue;
      const createdAt = spec.createdAt !== undefined ? this.anchor + spec.createdAt : this.anchor - 30 * DAY;
      const ids: Record<string, string> = {};
      for (const [k, x] of Object.entries(spec.ids)) ids[k] = spec.id && x === spec.id ? id : this.text(x);
      if (v.protocol === 'polymarket') ids['condition_id'] = id;
      const listing: SimListing = {
        venue: v.label,
        protocol: v.protocol,
        id,
        prop,
        event: prop.event,
        inverted: spec.inverted,
        title: this.text(spec.title),
        eventTitle: this.text(spec.eventTitle),
        seriesTitle: this.text(spec.seriesTitle),
        outcome: this.text(spec.outcome),
        category: spec.category,
        tags: this.tags(spec.tags),
        status: 'active',
        createdAt,
        openTime: createdAt,
        closeTime: prop.event.closeTime,
        book: this.books.book(),
        last: undefined,
        volume: 0,
        openInterest: 0,
        ids,
        version: 0,
      };
      const offset = Math.round(this.rng.normal() * 120);
      this.quotes.add(prop.fair, offset, spec.tick, this.rng.int(1, 3));
      this.buildInitialBook(listing);
      if (createdAt > this.clock()) this.pending.push({ listing, at: createdAt });
      else this.addListing(listing);
    }
  }

  /** One copy of each text while generating ({@link flat} once built). */
  private text<T extends string | undefined>(s: T): T {
    if (s === undefined) return s;
    const seen = this.texts?.get(s);
    if (seen !== undefined) return seen as T;
    const f = flat(s);
    this.texts?.set(f, f);
    return f;
  }

  /** One array per distinct tag list while generating. */
  private tags(tags: readonly string[]): readonly string[] {
    const key = tags.join('\u0000');
    const seen = this.tagLists?.get(key);
    if (seen) return seen;
    const list = tags.map((t) => this.text(t));
    this.tagLists?.set(key, list);
    return list;
  }

  private addListing(l: SimListing): void {
    this.byVenue.get(l.venue)!.push(l);
    let ids = this.byId.get(l.venue);
    if (!ids) this.byId.set(l.venue, (ids = new Map()));
    ids.set(l.id, l);
    this.active.push(l);
  }

  /** Generates the events and propositions (src/sim/generate/), listing each as it is made. */
  private generate(scale: number): void {
    let n = 0;
    const builder: WorldBuilder = {
      rng: this.rng,
      anchor: this.anchor,
      eventId: () => `E${String(++n).padStart(5, '0')}`,
      event: (e) => this.newEvent(e),
      prop: (ev, fields, meta) => this.newProp(ev, fields, meta),
      complements: (a, b) => {
        this.complementOf.set(a, b);
        this.complementOf.set(b, a);
      },
    };
    generateWorld(builder, scale);
  }

  // ---- dynamics ---------------------------------------------------------------------------

  private setFair(p: SimProposition, fair: number): void {
    p.fair = clampFair(fair);
    const c = this.complementOf.get(p);
    if (c) c.fair = clampFair(10_000 - p.fair);
  }

  /** Where the listing in `slot` wants its mid. */
  private target(l: SimListing, slot: number): number {
    const believed = this.quotes.believed[slot]!;
    const fair = l.inverted ? 10_000 - believed : believed;
    return Math.min(MAX_PRICE, Math.max(MIN_PRICE, fair + this.quotes.offset[slot]!));
  }

  private buildInitialBook(l: SimListing): void {
    const slot = l.book.slot;
    const mid = this.target(l, slot);
    const tick = this.quotes.tick[slot]!;
    const spreadTicks = this.quotes.spreadTicks[slot]!;
    const bids: [number, number][] = [];
    const asks: [number, number][] = [];
    const bestBid = Math.floor((mid - (spreadTicks * tick) / 2) / tick) * tick;
    const bestAsk = bestBid + spreadTicks * tick;
    for (let i = 0; i < this.depth; i++) {
      const b = bestBid - i * tick;
      const a = bestAsk + i * tick;
      if (b >= tick) bids.push([b, this.size()]);
      if (a <= 10_000 - tick) asks.push([a, this.size()]);
    }
    l.book.snapshot(bids, asks, this.clock());
  }

  private size(): number {
    return this.rng.int(1, 40) * 25;
  }

  /** Moves one listing's book toward its (lagged, noisy) fair value and perturbs a level. */
  private requote(l: SimListing): void {
    const q = this.quotes;
    const slot = l.book.slot;
    const rng = this.rng;
    q.believed[slot] = q.believed[slot]! + Math.round((l.prop.fair - q.believed[slot]!) * 0.35);
    q.offset[slot] = Math.round(q.offset[slot]! * 0.97 + rng.normal() * 25);
    const mid = this.target(l, slot);
    const tick = q.tick[slot]!;
    const spreadTicks = q.spreadTicks[slot]!;
    const book = l.book;
    const bids = book.bids;
    const asks = book.asks;
    const changes: [BookSideName, number, number, number][] = [];
    const bestBid = Math.floor((mid - (spreadTicks * tick) / 2) / tick) * tick;
    const bestAsk = bestBid + spreadTicks * tick;
    const curBid = bids.best();
    const curAsk = asks.best();
    if (curBid !== bestBid || curAsk !== bestAsk) {
      // Re-center: the desired ladder around the new mid, keeping sizes at prices that stay.
      const want = new Map<string, number>();
      for (let i = 0; i < this.depth; i++) {
        const b = bestBid - i * tick;
        const a = bestAsk + i * tick;
        if (b >= tick) want.set(`b${b}`, bids.get(b) || this.size());
        if (a <= 10_000 - tick) want.set(`a${a}`, asks.get(a) || this.size());
      }
      for (const [p, size] of bids.levels()) if (!want.has(`b${p}`)) changes.push(['bid', p, 0, size]);
      for (const [p, size] of asks.levels()) if (!want.has(`a${p}`)) changes.push(['ask', p, 0, size]);
      for (const [k, size] of want) {
        const side: BookSideName = k[0] === 'b' ? 'bid' : 'ask';
        const p = Number(k.slice(1));
        const prev = (side === 'bid' ? bids : asks).get(p);
        if (prev !== size) changes.push([side, p, size, prev]);
      }
    } else {
      const isBid = rng.chance(0.5);
      const side = isBid ? bids : asks;
      if (side.length > 0) {
        const [p, prev] = side.levels()[rng.int(0, side.length - 1)]!;
        const next = Math.max(25, prev + rng.int(-8, 8) * 25);
        if (next !== prev) changes.push([isBid ? 'bid' : 'ask', p, next, prev]);
      }
    }
    this.applyBook(l, changes);
  }

  private applyBook(l: SimListing, changes: [BookSideName, number, number, number][]): void {
    if (changes.length === 0) return;
    const ts = this.clock();
    l.book.apply(
      changes.map((c) => [c[0], c[1], c[2]] as const),
      ts,
    );
    l.version++;
    this.emit({ type: 'book', listing: l, changes, timestamp: ts });
  }

  private trade(l: SimListing, wallet: string, takerSide: 'yes' | 'no'): void {
    const book = l.book;
    const side = takerSide === 'yes' ? book.asks : book.bids;
    const price = side.best();
    const avail = side.bestSize();
    if (price === undefined || avail === undefined) return this.requote(l);
    const size = Math.min(avail, this.rng.int(1, 20) * 10);
    const left = avail - size;
    this.applyBook(l, [[takerSide === 'yes' ? 'ask' : 'bid', price, left, avail]]);
    const ts = this.clock();
    const maker = this.walletOf('noise');
    const t: SimTrade = { id: `${l.venue}-${++this.tradeSeq}`, listing: l, price, size, takerSide, maker, taker: wallet, timestamp: ts };
    l.last = price;
    l.volume += size;
    l.openInterest += takerSide === 'yes' ? size / 2 : size / 3;
    const log = this.tradeLog.get(l.venue)!;
    log.push(t);
    const cap = this.opts.tradeLog ?? 20_000;
    if (log.length > cap) log.splice(0, log.length - Math.ceil(cap / 2));
    this.emit({ type: 'trade', trade: t });
  }

  /** Game states, market statuses and late listings follow the clock. */
  private lifecycle(emit: boolean): void {
    const now = this.clock();
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const p = this.pending[i]!;
      if (p.at <= now) {
        this.pending.splice(i, 1);
        this.addListing(p.listing);
        if (emit) this.emit({ type: 'listing', listing: p.listing, timestamp: now });
      }
    }
    for (const ev of this.events) {
      // Futures are never "live" (no game in progress); they close and settle at their close time.
      const next = now >= ev.closeTime ? 'final' : ev.home && !ev.futures && now >= ev.startTime ? 'live' : 'scheduled';
      if (next === ev.state) continue;
      ev.state = next;
      if (next === 'final') for (const p of ev.props) this.resolve(p);
      for (const l of this.active) {
        if (l.event !== ev) continue;
        let status: MarketStatus = l.status;
        if (next === 'final') status = now - ev.closeTime > 2 * HOUR ? 'finalized' : now - ev.closeTime > HOUR ? 'determined' : 'closed';
        if (status !== l.status || next === 'live') {
          l.status = status;
          if (status === 'finalized' || status === 'determined') {
            const yes = (l.prop.resolved === 'yes') !== l.inverted;
            l.last = yes ? 10_000 : 0;
          }
          l.version++;
          if (emit) this.emit({ type: 'status', listing: l, timestamp: now });
        }
      }
    }
    // Closed markets settle over the next two hours.
    for (const l of this.active) {
      if (l.status === 'active' || l.status === 'finalized' || l.status === 'initialized') continue;
      const since = now - l.event.closeTime;
      const status: MarketStatus = since > 2 * HOUR ? 'finalized' : since > HOUR ? 'determined' : 'closed';
      if (status !== l.status) {
        l.status = status;
        l.version++;
        if (emit) this.emit({ type: 'status', listing: l, timestamp: now });
      }
    }
  }

  /**
   * Settles a proposition once: by a draw at its fair value, or as the opposite of its complement
   * when that settled first (home and away cannot both lose). The draw is taken either way, so the
   * seeded sequence does not depend on which of a pair settles first.
   */
  private resolve(p: SimProposition): void {
    if (p.resolved !== undefined) return;
    const draw = this.rng.next() * 10_000 < p.fair ? 'yes' : 'no';
    const c = this.complementOf.get(p)?.resolved;
    p.resolved = c === undefined ? draw : c === 'yes' ? 'no' : 'yes';
  }

  private emit(c: SimChange): void {
    for (const fn of this.listeners) fn(c);
  }
}

/**
 * The string as one flat sequence. Template literals and `+` build ropes in V8 (a node per part,
 * kept as long as the string lives); the world keeps its texts for its whole life, at up to a
 * million listings.
 */
function flat<T extends string | undefined>(s: T): T {
  return s === undefined || s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as T);
}

function clampFair(f: number): number {
  return Math.min(9_800, Math.max(200, Math.round(f)));
}

/** Creates the seeded world for the given venues. */
export function createWorld(opts: WorldOptions): SimWorld {
  return new SimWorld(opts);
}
