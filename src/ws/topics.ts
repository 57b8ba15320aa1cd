import { plainAscii } from './booktext.js';
import { DATA } from './conn.js';

/** A topic's last seq (0: nothing published in this epoch). */
export interface SeqCell {
  n: number;
}

/** Which dialects a topic has subscribers in. */
export interface Subs {
  readonly plain: boolean;
  readonly data: boolean;
}

/**
 * A topic some connection holds (in its `topics`): how many do, and what uWS last answered about
 * its subscribers, valid while `gen` is the subscription generation. A market-scoped topic's
 * record also sits in its market id's `HeldId`, with its channel and venue slug, so a change finds
 * it without building the topic name, and carries the topic's seq cell.
 */
export interface Held extends Subs {
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

/**
 * A caller's slot for one market's held records (a state book keeps its market's: `Topics.heldVia`),
 * valid while the topics it was taken from have held or released no market-scoped topic since.
 */
export interface SubsSlot {
  subsOf: object | undefined;
  subsLayout: number;
  subsId: string | undefined;
  subsHeld: readonly object[] | undefined;
}

/** No subscriber in either dialect: a topic nobody holds (a cluster core still exports the update). */
export const NONE: Held = Object.freeze({ topic: '', ch: '', slug: '', seq: undefined, ascii: false, conns: 0, gen: -1, plain: false, data: false });

const GAMES = 'live_games:';

/** An `arb:` or `ev:` topic (a group's opportunities, or `*`: every group's). */
function isSignalTopic(topic: string): boolean {
  return topic.startsWith('arb:') || topic.startsWith('ev:');
}

/** How many subscribers uWS has on a topic (uWS's `app.numSubscribers`). */
export type SubscriberCount = (topic: string) => number;

/**
 * The topics of the hub: each topic's seq (gap-free per topic, within an epoch), and which topics
 * some connection holds, so a topic nobody holds is answered without asking uWS, and a held one
 * asks uWS again only after a subscription changed (`changed()`): the subscriber count is read
 * per update and subscriptions change rarely. Every uWS subscription of a connection is one of its
 * `topics` (in its dialect), so a topic absent here has no subscriber.
 */
export class Topics {
  /** The last seq of each topic, in cells that a held topic's record shares (see `Held`). */
  private readonly seq = new Map<string, SeqCell>();
  private readonly held = new Map<string, Held>();
  /**
   * The market ids (the last part of a held `prices`, `orderbook` or ticker topic, `*` for the
   * ticker's all-markets topic) some connection holds, counted: a quote or book change of a market
   * absent here is dropped without building its topic names. Ids of different venues may share an
   * entry; that only sends the change on to the exact check.
   */
  private readonly heldIds = new Map<string, HeldId>();
  /** Bumped by every subscribe, unsubscribe and close, so cached answers of `held` are re-asked. */
  private gen = 0;
  /** Bumped when a market-scoped topic is first held or last released: a `SubsSlot` taken before is looked up again. */
  private layout = 0;
  /** Held `live_games:` topics: with none (and no export), a quote change need not look for its game. */
  private gamesHeld = 0;
  /** Held `arb:` and `ev:` topics: with none (and no export), a group's signal change builds no topic names. */
  private signalsHeld = 0;
  /** Open connections in the hosted dialect: with none, no `DATA` twin has subscribers to ask about. */
  hostedConns = 0;
  /** Bumped each time `quiet` ends (a market-scoped or `live_games:` topic held again). */
  wakes = 0;

  /**
   * @param count uWS's subscriber count of a topic
   * @param tickerChannel the catalog venue's ticker channel (market-scoped like prices), if any
   * @param exportAll a cluster core: every topic counts as listened to, held here or not
   * @param kept whether a topic's latest message is retained for a coalescing client (off uWS's
   *   topics while it catches up): such a topic is listened to even with no uWS subscriber
   */
  constructor(
    private readonly count: SubscriberCount,
    private readonly tickerChannel: string | undefined,
    private readonly exportAll: boolean,
    private readonly kept: (topic: string) => boolean = () => false,
  ) {}

  /** A subscription changed somewhere: cached subscriber answers are asked again. */
  changed(): void {
    this.gen++;
  }

  next(topic: string): number {
    return ++this.cell(topic).n;
  }

  /** The last seq of `topic` (0: none yet). */
  seqOf(topic: string): number {
    return this.seq.get(topic)?.n ?? 0;
  }

  cell(topic: string): SeqCell {
    let c = this.seq.get(topic);
    if (c === undefined) this.seq.set(topic, (c = { n: 0 }));
    return c;
  }

  /** The last seq of every topic that has one. */
  seqs(): [string, number][] {
    const out: [string, number][] = [];
    for (const [t, c] of this.seq) if (c.n > 0) out.push([t, c.n]);
    return out;
  }

  /** Takes the last seq of each topic given; `reset` first zeroes every topic's (a new epoch). */
  adopt(entries: Iterable<readonly [string, number]>, reset: boolean): void {
    // Cells are reset rather than dropped: held topics' records share them.
    if (reset) for (const c of this.seq.values()) c.n = 0;
    for (const [t, s] of entries) this.cell(t).n = s;
  }

  /** Connections holding `topic` here (0: none). */
  holders(topic: string): number {
    return this.held.get(topic)?.conns ?? 0;
  }

  /** Whether a topic has subscribers in either dialect (a cluster core exports every update: always). */
  listeners(topic: string): number {
    if (this.exportAll) return 1;
    return this.subs(topic) === undefined ? 0 : 1;
  }

  /** Whether a topic has subscribers in each dialect (undefined: none at all), asked once per change. */
  subs(topic: string): Held | undefined {
    const h = this.held.get(topic);
    // A cluster core exports every update, listened to here or not.
    if (h === undefined) return this.exportAll ? NONE : undefined;
    return this.answer(h);
  }

  /** `subs` of a held topic's record. */
  private answer(h: Held): Held | undefined {
    if (h.gen !== this.gen) {
      const topic = h.topic;
      h.plain = this.count(topic) > 0;
      h.data = this.hostedConns > 0 && this.count(topic + DATA) > 0;
      h.gen = this.gen;
    }
    return h.plain || h.data || this.exportAll || this.kept(h.topic) ? h : undefined;
  }

  /**
   * Whether a market's quote or book change can reach no subscriber at all: no market-scoped
   * (`prices`, `orderbook`, ticker) or `live_games:` topic is held, and this is not a cluster core
   * (which exports every update). The fan-out then marks nothing (pipelines/fanout.ts).
   */
  get quiet(): boolean {
    return !this.exportAll && this.heldIds.size === 0 && this.gamesHeld === 0;
  }

  /** A connection now holds `topic`. */
  hold(topic: string): void {
    const wasQuiet = this.quiet;
    this.holdTopic(topic);
    if (wasQuiet && !this.quiet) this.wakes++;
  }

  private holdTopic(topic: string): void {
    const at = this.marketScope(topic);
    let h = this.held.get(topic);
    if (h) h.conns++;
    else {
      const ch = at === undefined ? '' : topic.slice(0, at[0]);
      const slug = at === undefined ? '' : topic.slice(at[0] + 1, at[1]);
      this.held.set(topic, (h = { topic, ch, slug, seq: this.cell(topic), ascii: plainAscii(topic), conns: 1, gen: -1, plain: false, data: false }));
      if (at !== undefined) {
        this.heldId(topic.slice(at[1] + 1)).topics.push(h);
        this.layout++;
      } else if (topic.startsWith(GAMES)) this.gamesHeld++;
      else if (isSignalTopic(topic)) this.signalsHeld++;
    }
    if (at !== undefined) this.heldId(topic.slice(at[1] + 1)).n++;
  }

  private heldId(id: string): HeldId {
    let r = this.heldIds.get(id);
    if (r === undefined) this.heldIds.set(id, (r = { n: 0, topics: [] }));
    return r;
  }

  /** A connection no longer holds `topic`. */
  release(topic: string): void {
    const h = this.held.get(topic);
    const gone = h !== undefined && --h.conns <= 0;
    if (gone) this.held.delete(topic);
    const at = this.marketScope(topic);
    if (at === undefined) {
      if (gone && topic.startsWith(GAMES)) this.gamesHeld--;
      else if (gone && isSignalTopic(topic)) this.signalsHeld--;
      return;
    }
    if (gone) this.layout++;
    const id = topic.slice(at[1] + 1);
    const r = this.heldIds.get(id);
    if (r === undefined) return;
    if (gone) {
      const i = r.topics.indexOf(h);
      if (i >= 0) r.topics.splice(i, 1);
    }
    if (--r.n <= 0) {
      // A slot holding this id's records (`heldVia`) looks again.
      this.heldIds.delete(id);
      this.layout++;
    }
  }

  /** How many topics some connection holds (tests check it returns to 0). */
  get heldCount(): number {
    return this.held.size;
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
   * The subscribers of `<ch>:<slug>:<id>`, found through the id's held topics without building
   * the name (undefined: none). A cluster core, which exports what nobody holds, asks by name.
   */
  marketSubs(ch: string, slug: string, id: string): Held | undefined {
    return this.marketSubsIn(this.heldOf(id), ch, slug, id);
  }

  /**
   * `marketSubs` through the caller's slot for market `id` (see `heldVia`); its subscribers are
   * asked as `marketSubs` asks them.
   */
  marketSubsVia(ch: string, slug: string, id: string, slot: SubsSlot): Held | undefined {
    return this.marketSubsIn(this.heldVia(id, slot), ch, slug, id);
  }

  /**
   * `heldOf(id)` through the caller's slot for market `id`: looked up again only when the slot was
   * filled by other topics, for another id, or before a market-scoped topic was held or released
   * (a book keeps its market's, so a book change and the quote change it causes look up nothing).
   */
  heldVia(id: string, slot: SubsSlot): readonly Held[] | undefined {
    if (slot.subsOf !== this || slot.subsLayout !== this.layout || slot.subsId !== id) {
      slot.subsOf = this;
      slot.subsLayout = this.layout;
      slot.subsId = id;
      slot.subsHeld = this.heldOf(id);
    }
    return slot.subsHeld as readonly Held[] | undefined;
  }

  /**
   * The held records of market `id`'s topics, every channel and venue (undefined: no connection
   * holds one), for several `marketSubsIn` with one lookup of the id.
   */
  heldOf(id: string): readonly Held[] | undefined {
    return this.heldIds.get(id)?.topics;
  }

  /** `marketSubs` of `<ch>:<slug>:<id>`, found among `held` (what `heldOf(id)` gave). */
  marketSubsIn(held: readonly Held[] | undefined, ch: string, slug: string, id: string): Held | undefined {
    if (this.exportAll) return this.subs(`${ch}:${slug}:${id}`);
    const h = heldIn(held, ch, slug);
    return h === undefined ? undefined : this.answer(h);
  }

  /** Whether some `live_games:` topic may have subscribers (always on a cluster core, which exports every topic). */
  get gamesListened(): boolean {
    return this.exportAll || this.gamesHeld > 0;
  }

  /** Whether some `arb:` or `ev:` topic may have subscribers (always on a cluster core, which exports every topic). */
  get signalsListened(): boolean {
    return this.exportAll || this.signalsHeld > 0;
  }

  /** Whether a connection may hold a topic of market `id` (false: certainly none does). */
  mayHold(id: string): boolean {
    return this.mayHoldIn(this.heldOf(id));
  }

  /** `mayHold` of the market whose held records `heldOf` gave as `held`. */
  mayHoldIn(held: readonly Held[] | undefined): boolean {
    return this.exportAll || held !== undefined || this.heldIds.has('*');
  }
}

/** The record of channel `ch` on venue `slug` among a market's held records. */
function heldIn(held: readonly Held[] | undefined, ch: string, slug: string): Held | undefined {
  if (held === undefined) return undefined;
  for (let i = 0; i < held.length; i++) {
    const h = held[i]!;
    if (h.ch === ch && h.slug === slug) return h;
  }
  return undefined;
}
