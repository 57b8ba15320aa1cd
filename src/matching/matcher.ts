/**
 * The cross-venue matcher: keeps every listing's proposition and groups listings that settle on the
 * same outcome. Incremental: a new or changed listing is compared only with the listings that
 * share one of its blocking keys (kind + subject/team + date or threshold), so one change touches a
 * handful of candidates, never the whole catalog.
 *
 * Rules (precision first):
 * - a listing joins a group only if it agrees with EVERY member (one contradiction and it does not);
 * - a group holds at most one listing per venue, plus at most one inverted one (the two sides of a
 *   game or line on one venue);
 * - a listing that fits two groups about equally well joins neither (ambiguous);
 * - complements (underdog +2.5 against favourite -2.5, Under against Over) join as `inverted`.
 *
 * Group ids are integers, stable across restarts through an optional persistence hook that maps a
 * proposition signature to the id its group had: the same proposition gets the same id again.
 */
import { compare, type Comparison } from './compare.js';
import { describeGroup, type GroupFields } from './describe.js';
import type { Override } from './overrides.js';
import { extractProposition, type MatchInput, type Proposition } from './proposition/index.js';
import { relate, type PairRelation } from './relation.js';
import { StoredProposition } from './stored.js';
import { flat } from './text.js';

/** A listing handed to the matcher: the input plus the caller's unique key (e.g. `venue:id`). */
export type MatcherInput = MatchInput & { readonly key: string };

/** Where group ids live between runs. `load` is read once at construction. */
export interface MatcherPersistence {
  load(): Iterable<[signature: string, groupId: number]>;
  save(signature: string, groupId: number): void;
}

export interface MatcherOptions {
  readonly persistence?: MatcherPersistence | undefined;
  /** Pairs below this confidence are not grouped (default 0.6). */
  readonly minConfidence?: number | undefined;
}

/** One member of a match group. */
export interface GroupMember {
  readonly key: string;
  readonly platform: string;
  readonly market_id: string | null;
  /** This listing's YES is the group's NO. */
  readonly inverted: boolean;
  readonly confidence: number;
  /** Settlement fields that agreed with the group. */
  readonly reasons: readonly string[];
}

/** A match group (spec 2.4) with its members. */
export interface MatchGroup extends GroupFields {
  readonly group_id: number;
  readonly members: readonly GroupMember[];
}

/** A listing related to another (Matcher.related). */
export interface RelatedListing {
  readonly key: string;
  readonly platform: string;
  readonly market_id: string | null;
  readonly title: string;
  /** The asked listing's relation to this one: `subset` = the asked listing's YES implies this one's. */
  readonly relation: Exclude<PairRelation, 'different'>;
  readonly confidence: number;
  readonly reasons: readonly string[];
  /** The group this listing is in (singletons included), for its prices. */
  readonly group_id: number | null;
}

/** Counters for tests and benchmarks. */
export interface MatcherStats {
  readonly markets: number;
  readonly groups: number;
  /** Pairwise proposition comparisons made since construction. */
  readonly comparisons: number;
}

/** FNV-1a (32 bits) of `s`'s length and characters, continuing `h`. */
function fnv(h: number, s: string): number {
  h = Math.imul(h ^ s.length, 16777619);
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h;
}

/** A second hash of `s`'s length and characters, continuing `h` (a multiply-xorshift round a character, independent of fnv's). */
function mix(h: number, s: string): number {
  h = Math.imul(h ^ s.length, 0x5bd1e995);
  for (let i = 0; i < s.length; i++) {
    h = Math.imul(h ^ s.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  return h;
}

/**
 * A signature's key in the matcher's id table: 53 bits of two independent 32-bit hashes (all of fnv's,
 * the top 21 of mix's), so two of the table's signatures share a key with a chance of about n^2 / 2^54
 * (1.4e-7 at 50,000 signatures); the persistence hook still stores and loads the signature itself.
 */
function sigKey(sig: string): number {
  return (fnv(0x811c9dc5 | 0, sig) >>> 0) * 0x200000 + ((mix(0x9747b28c | 0, sig) >>> 11) & 0x1fffff);
}

/** The input fields a listing's proposition is read from besides its venue, id and title, as sameInput compares them (absent and empty alike). */
function otherInput(m: MatcherInput): string[] {
  return [m.event_title, m.outcome, m.close_time, m.category, m.protocol].map((x) => String(x ?? ''));
}

/**
 * A listing in the matcher: its proposition (the listing is its own stored proposition: one object,
 * not a record that points to one), what tells an unchanged listing (the venue label and title as
 * given, the id is the proposition's; the other input fields as two 32-bit hashes, since nothing else
 * reads them), and its place in its group (a listing is in one group at a time: set when it joins or
 * founds one). Its blocking keys are recomputed from the proposition when needed (blockKeys is cheap; a
 * copy per listing is not). At 108k listings a record with the five input fields beside a stored
 * proposition was 80 B a listing more (a field each, the close time boxed, and an object header and
 * pointer): bench/scale/matcher-heap.mjs.
 */
class Rec extends StoredProposition {
  readonly key: string;
  /** The venue label as given (the proposition's `platform` is it in lower case). */
  readonly venue: string;
  readonly title: string;
  /** fnv and mix of otherInput: a change that left both the same would go unseen (2^-64 for a changed listing). */
  private readonly h1: number;
  private readonly h2: number;
  group: Group | undefined = undefined;
  /** This listing's YES is its group's NO. */
  inverted = false;
  /** Its confidence as a member (`GroupMember.confidence`; `confidence` is its proposition's). */
  memberConfidence = 1;
  reasons: readonly string[] = NO_REASONS;
  /**
   * The member's proposition with the game its group established (teams, day) filled in: a
   * Polymarket "Spread: Patriots (+2.5)" names one team, but inside a group that knows the game
   * it can be compared with "Spread: Seahawks (-2.5)".
   */
  view: StoredProposition;

  constructor(m: MatcherInput, p: Proposition) {
    super(p, StoredProposition.partsOf(p));
    this.key = m.key;
    this.venue = m.platform;
    this.title = m.title;
    let h1 = 0x811c9dc5 | 0;
    let h2 = 0x9747b28c | 0;
    for (const x of otherInput(m)) {
      h1 = fnv(h1, x);
      h2 = mix(h2, x);
    }
    this.h1 = h1;
    this.h2 = h2;
    this.view = this;
  }

  /** The listing's own proposition (the listing itself). */
  get prop(): StoredProposition {
    return this;
  }

  /** Whether `b` reads as this listing did: every field the proposition is read from, absent and empty alike. */
  reads(b: MatcherInput): boolean {
    if (this.venue !== b.platform || this.title !== b.title || String(this.marketId ?? '') !== String(b.market_id ?? '')) return false;
    let h1 = 0x811c9dc5 | 0;
    let h2 = 0x9747b28c | 0;
    for (const x of otherInput(b)) {
      h1 = fnv(h1, x);
      h2 = mix(h2, x);
    }
    return this.h1 === h1 && this.h2 === h2;
  }
}

/** A listing as a member of its group. */
type Member = Rec;

interface Group {
  readonly id: number;
  /** Replaced, never grown in place: an array grown by push keeps room for 17 members. */
  members: readonly Member[];
  /** The member whose YES is the group's YES (chosen by content, not arrival order). */
  anchor: Member | undefined;
  /** Member that founded the group: its confidence and reasons are those of its best partner. */
  founder: Member | undefined;
  cached: MatchGroup | undefined;
  /** Last placement pass that looked at this group (instead of a Set per pass). */
  seen: number;
}

interface Fit {
  readonly inverted: boolean;
  readonly confidence: number;
  readonly reasons: readonly string[];
}

interface Slot {
  readonly rec: Rec;
  readonly inverted: boolean;
}

/**
 * The propositions with the game they agree on filled in where one lacks it: both teams from a
 * listing that names them, the day from one that states it (ids and titles before close times).
 */
function withGame(props: readonly StoredProposition[]): StoredProposition[] {
  if (props.length < 2 || !GAME_KINDS.has(props[0]!.kind)) return props.slice();
  const teams = props.find((p) => p.teams.length === 2)?.teams;
  const dated = props.find((p) => p.date !== null && p.dateSource !== 'close_time') ?? props.find((p) => p.date !== null);
  return props.map((p) => {
    const needTeams = teams !== undefined && p.teams.length < 2 && p.teams.every((t) => teams.includes(t));
    const needDate = dated !== undefined && p.date === null;
    if (!needTeams && !needDate) return p;
    return p.withGame(needTeams ? teams : p.teams, needDate ? dated.date : p.date, needDate ? dated.dateSource : p.dateSource);
  });
}

/** Orders candidate anchors: more complete first (teams, day, subject), then by signature. */
function anchorRank(a: Proposition, b: Proposition): number {
  const score = (p: Proposition): number =>
    (p.teams.length === 2 ? 4 : 0) + (p.date !== null && p.dateSource !== 'close_time' ? 2 : 0) + (p.subject !== null ? 1 : 0);
  const d = score(b) - score(a);
  if (d !== 0) return d;
  return a.signature < b.signature ? -1 : a.signature > b.signature ? 1 : 0;
}

/** A listing that fits two groups within this much confidence is ambiguous. */
const AMBIGUITY = 0.02;
const GAME_KINDS = new Set(['game_winner', 'draw', 'spread', 'total', 'player_prop', 'map_winner']);
const TEAM_ID = /^(?:NFL|NBA|MLB|NHL|NCAAF|SOC|NAT|ESP):/;

/**
 * Blocking keys. `index` is where a listing is filed; `query` where it looks for candidates.
 * Game propositions may lack a date, so a dated listing is filed under its day and under `*`, an
 * undated one under `?` and `*`; a dated listing looks at its day and `?`, an undated one at `*`.
 */
function blockKeys(p: Proposition): { index: string[]; query: string[] } {
  const index: string[] = [];
  const query: string[] = [];
  if (GAME_KINDS.has(p.kind)) {
    // A listing that names both teams is filed under the pair (P) and under each team for
    // listings that know one team only (T); a one-team listing is filed under its team (S). A
    // two-team listing looks at its pair and at one-team listings; a one-team listing at both.
    const family = p.kind === 'draw' ? 'game_winner' : p.kind;
    const prefix = p.kind === 'player_prop' ? `${family}|${p.subject ?? '?'}` : family;
    if (p.kind === 'player_prop' && !p.subject) return { index, query };
    const teams = p.teams.length === 2 ? [...p.teams].sort() : [];
    const teamLike = p.kind === 'player_prop' ? [] : p.subjectCandidates.filter((s) => TEAM_ID.test(s));
    const singles = teams.length === 2 ? teams : [...new Set([...p.teams, ...teamLike])];
    const idx: string[] = [];
    const qry: string[] = [];
    if (teams.length === 2) {
      idx.push(`${prefix}|P:${teams.join('+')}`);
      qry.push(`${prefix}|P:${teams.join('+')}`);
      for (const t of teams) {
        idx.push(`${prefix}|T:${t}`);
        qry.push(`${prefix}|S:${t}`);
      }
    } else if (p.kind === 'player_prop' && singles.length === 0) {
      idx.push(`${prefix}|S:`);
      qry.push(`${prefix}|S:`, `${prefix}|T:`);
    } else {
      for (const t of singles) {
        idx.push(`${prefix}|S:${t}`);
        qry.push(`${prefix}|S:${t}`, `${prefix}|T:${t}`);
      }
    }
    if (p.kind === 'player_prop' && teams.length === 2) {
      // Player props often name no team at all: they meet under the player alone.
      idx.push(`${prefix}|T:`);
      qry.push(`${prefix}|S:`);
    }
    for (const k of idx) index.push(p.date ? `${k}@${p.date}` : `${k}@?`, `${k}@*`);
    for (const k of qry) {
      if (p.date) query.push(`${k}@${p.date}`, `${k}@?`);
      else query.push(`${k}@*`);
    }
    return { index, query };
  }
  const subjects = p.subject ? [p.subject] : p.subjectCandidates;
  for (const s of subjects) {
    let k = `${p.kind}|${s}`;
    if (p.kind === 'crypto_price') k += `|${p.mode}|${p.date}|${p.threshold === null ? '' : Math.round(p.threshold)}`;
    else if (p.kind === 'fed_decision' || p.kind === 'fed_rate' || p.kind === 'econ_threshold') k += `|${p.month}`;
    index.push(k);
    query.push(k);
  }
  return { index, query };
}

const NO_RECS: readonly Rec[] = [];

function getOr<K, V>(m: Map<K, V>, k: K, make: () => V): V {
  let v = m.get(k);
  if (v === undefined) m.set(k, (v = make()));
  return v;
}

const OVERRIDE_REASONS: readonly string[] = Object.freeze(['override']);
const NO_REASONS: readonly string[] = Object.freeze([]);
/** Past this many distinct lists the reasons table starts over (it only shares copies). */
const REASONS_CAP = 4_096;
/** Past this many distinct view texts that table starts over (it only shares copies). */
const TEXTS_CAP = 65_536;

/**
 * A block's listings: the listing itself when it is the only one (most blocks), else an array in
 * filing order (the order a Set would iterate in).
 */
type Block = Rec | Rec[];
/** Below this many listings a block's array is replaced at its exact size when one is filed. */
const SMALL_BLOCK = 16;

/** The cross-venue matcher (see the module comment). */
export class Matcher {
  private readonly recs = new Map<string, Rec>();
  private readonly blocks = new Map<string, Block>();
  /** One frozen copy of each list of agreeing fields: members hold a handful of distinct lists between them. */
  private readonly reasonLists = new Map<string, readonly string[]>();
  /** View texts by value (see text()). */
  private readonly texts = new Map<string, string>();
  private readonly live = new Map<number, Group>();
  /**
   * Group ids by proposition signature (what the persistence hook stores), keyed by sigKey: the signature
   * strings were 4.6 MiB of the main heap at 108k listings (50,949 of them; heap snapshot of the service).
   */
  private readonly sigIds = new Map<number, number>();
  private readonly persistence: MatcherPersistence | undefined;
  private readonly minConfidence: number;
  /** Operator links: key → partner key → inverted. */
  private links = new Map<string, Map<string, boolean>>();
  /** Operator unlinks: key → keys it must never share a group with. */
  private unlinks = new Map<string, Set<string>>();
  private nextId = 1;
  private comparisons = 0;
  private pass = 0;

  constructor(opts: MatcherOptions = {}) {
    this.persistence = opts.persistence;
    this.minConfidence = opts.minConfidence ?? 0.6;
    for (const [sig, id] of opts.persistence?.load() ?? []) {
      if (!Number.isInteger(id) || id < 1) continue;
      this.sigIds.set(sigKey(sig), id);
      if (id >= this.nextId) this.nextId = id + 1;
    }
  }

  /**
   * Adds or updates a listing. An unchanged listing is a no-op; a changed one stays in its group
   * when it still agrees with every member, else it moves, and singletons near its old place get
   * another chance to group.
   */
  upsert(m: MatcherInput): void {
    const old = this.recs.get(m.key);
    if (old && old.reads(m)) return;
    const rec = new Rec(m, extractProposition(m));
    const keys = blockKeys(rec);
    if (!old) {
      this.recs.set(m.key, rec);
      this.file(rec, keys.index);
      this.place(rec, keys.query);
      return;
    }
    const previous = old.group;
    this.detach(old);
    this.unfile(old);
    this.recs.set(m.key, rec);
    this.file(rec, keys.index);
    const stay = previous && this.live.has(previous.id) ? this.fit(rec, previous) : undefined;
    if (previous && stay && stay.confidence >= this.minConfidence) return this.join(previous, rec, stay);
    this.place(rec, keys.query);
    if (previous && this.live.has(previous.id)) this.retryNeighbours(old, previous);
  }

  /** Removes a listing; returns false when the key is unknown. */
  remove(key: string): boolean {
    const rec = this.recs.get(key);
    if (!rec) return false;
    const previous = rec.group;
    this.detach(rec);
    this.unfile(rec);
    this.recs.delete(key);
    if (previous && this.live.has(previous.id)) this.retryNeighbours(rec, previous);
    return true;
  }

  /** Every group, singletons included, by group id. */
  groups(): MatchGroup[] {
    return [...this.live.values()].sort((a, b) => a.id - b.id).map((g) => this.view(g));
  }

  /**
   * The groups with members on at least two venues, by group id. Unlike groups() it builds no view
   * of a singleton, so the many listings no other venue lists cost no view each.
   */
  crossVenueGroups(): MatchGroup[] {
    const out: Group[] = [];
    for (const g of this.live.values()) {
      const first = g.members[0]?.venue;
      if (g.members.some((m) => m.venue !== first)) out.push(g);
    }
    return out.sort((a, b) => a.id - b.id).map((g) => this.view(g));
  }

  /** The group of a listing, undefined for an unknown key. */
  groupOf(key: string): MatchGroup | undefined {
    const g = this.recs.get(key)?.group;
    return g ? this.view(g) : undefined;
  }

  /** The proposition extracted for a listing. */
  propositionOf(key: string): Proposition | undefined {
    return this.recs.get(key)?.prop.plain();
  }

  /**
   * The listings related to `key` (issue 32): every other listing of the same kind and subject whose
   * relation to it is not `different`, with the relation read as "key's YES is <relation> of this
   * one's" (`subset`: key's YES implies this listing's). Undefined for an unknown key. A scan of
   * every listing (13–16 ms of CPU at 100,000 on the loaded 2-core bench machine): served on
   * request, kept out of grouping, and no index is held for it (no memory per listing).
   */
  related(key: string): RelatedListing[] | undefined {
    const rec = this.recs.get(key);
    if (!rec) return undefined;
    const kind = rec.prop.kind;
    const subject = rec.prop.subject;
    if (subject === null) return [];
    const p = rec.prop.plain();
    const out: RelatedListing[] = [];
    for (const o of this.recs.values()) {
      if (o === rec || o.prop.kind !== kind || o.prop.subject !== subject) continue;
      const r = relate(p, o.prop.plain());
      if (r.relation === 'different') continue;
      const g = o.group;
      out.push({
        key: o.key,
        platform: o.venue,
        market_id: o.prop.marketId,
        title: o.title,
        relation: r.relation,
        confidence: r.confidence,
        reasons: r.reasons,
        group_id: g ? g.id : null,
      });
    }
    return out.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  }

  stats(): MatcherStats {
    return { markets: this.recs.size, groups: this.live.size, comparisons: this.comparisons };
  }

  /**
   * Replaces the operator overrides. A link groups two listings whatever their propositions say
   * (their reasons read `override`); an unlink keeps them apart. Listings whose overrides changed
   * are placed again at once.
   */
  setOverrides(overrides: readonly Override[]): void {
    const touched = new Set<string>();
    for (const m of [this.links, this.unlinks]) for (const [k, v] of m) for (const o of v instanceof Map ? v.keys() : v) touched.add(`${k}\u0000${o}`);
    const links = new Map<string, Map<string, boolean>>();
    const unlinks = new Map<string, Set<string>>();
    for (const o of overrides) {
      for (const [x, y] of [
        [o.a, o.b],
        [o.b, o.a],
      ] as const) {
        if (o.action === 'link') getOr(links, x, () => new Map<string, boolean>()).set(y, o.inverted);
        else getOr(unlinks, x, () => new Set<string>()).add(y);
      }
    }
    const changed = new Set<string>();
    const all = new Set(touched);
    for (const m of [links, unlinks]) for (const [k, v] of m) for (const o of v instanceof Map ? v.keys() : v) all.add(`${k}\u0000${o}`);
    for (const pair of all) {
      const [x, y] = pair.split('\u0000') as [string, string];
      if (this.links.get(x)?.get(y) !== links.get(x)?.get(y) || this.unlinks.get(x)?.has(y) !== unlinks.get(x)?.has(y)) changed.add(x);
    }
    this.links = links;
    this.unlinks = unlinks;
    for (const key of changed) {
      const rec = this.recs.get(key);
      if (!rec) continue;
      const previous = rec.group;
      this.detach(rec);
      this.place(rec);
      if (previous && this.live.has(previous.id)) this.retryNeighbours(rec, previous);
    }
  }

  // ---- internals ----------------------------------------------------------------------------

  private file(rec: Rec, index: readonly string[]): void {
    for (const k of index) {
      const s = this.blocks.get(k);
      if (s === undefined) this.blocks.set(flat(k), rec);
      else if (!Array.isArray(s)) {
        if (s !== rec) this.blocks.set(k, [s, rec]);
      } else if (!s.includes(rec)) {
        // Small blocks (most) are copied at their exact size; push keeps room for 16 more.
        if (s.length < SMALL_BLOCK) this.blocks.set(k, s.concat(rec));
        else s.push(rec);
      }
    }
  }

  private unfile(rec: Rec): void {
    for (const k of blockKeys(rec.prop).index) {
      const s = this.blocks.get(k);
      if (s === undefined) continue;
      if (!Array.isArray(s)) {
        if (s === rec) this.blocks.delete(k);
        continue;
      }
      const i = s.indexOf(rec);
      if (i < 0) continue;
      s.splice(i, 1);
      if (s.length === 1) this.blocks.set(k, s[0]!);
    }
  }

  /** The listings filed under a block key, in filing order. */
  private block(k: string): readonly Rec[] {
    const s = this.blocks.get(k);
    return s === undefined ? NO_RECS : Array.isArray(s) ? s : [s];
  }

  /**
   * One flat copy of a view's text: the groups of one event name it alike, and a text built by
   * concatenation is otherwise kept as the tree of its pieces.
   */
  private text<T extends string | null>(s: T): T {
    if (s === null) return s;
    const had = this.texts.get(flat(s));
    if (had !== undefined) return had as T;
    if (this.texts.size >= TEXTS_CAP) this.texts.clear();
    this.texts.set(s, s);
    return s;
  }

  /** The shared copy of a list of agreeing fields. */
  private reasonsOf(reasons: readonly string[]): readonly string[] {
    if (reasons.length === 0) return NO_REASONS;
    if (reasons === OVERRIDE_REASONS) return reasons;
    const key = reasons.join('\u0000');
    let had = this.reasonLists.get(key);
    if (had === undefined) {
      if (this.reasonLists.size >= REASONS_CAP) this.reasonLists.clear();
      this.reasonLists.set(key, (had = Object.freeze(reasons.slice())));
    }
    return had;
  }

  /** Two listings' relation: an operator override first, else their propositions compared. */
  private relation(x: Rec, y: Rec, px: Proposition, py: Proposition): Comparison {
    if (this.unlinks.get(x.key)?.has(y.key)) return { relation: 'different', confidence: 0, reasons: OVERRIDE_REASONS, conflict: 'override' };
    const inv = this.links.get(x.key)?.get(y.key);
    if (inv !== undefined) return { relation: inv ? 'inverted' : 'same', confidence: 1, reasons: OVERRIDE_REASONS, conflict: null };
    this.comparisons++;
    return compare(px, py);
  }

  /** How `rec` would sit in `g`: undefined when it contradicts a member or its venue slot is taken. */
  private fit(rec: Rec, g: Group): Fit | undefined {
    let inverted: boolean | undefined;
    let confidence = 1;
    let reasons: readonly string[] = [];
    // Venue slots first (cheap): a side of this venue already taken rules the group out.
    let sameVenue: Member | undefined;
    for (const m of g.members) {
      if (m === rec || m.prop.platform !== rec.prop.platform) continue;
      if (sameVenue || !GAME_KINDS.has(rec.prop.kind)) return undefined;
      sameVenue = m;
    }
    if (sameVenue) {
      const c = this.relation(rec, sameVenue, rec.prop, sameVenue.view);
      if (c.relation === 'different' || (c.relation === 'inverted') === false) return undefined;
    }
    let linked = false;
    for (const m of g.members) {
      if (m === rec) continue;
      const c = this.relation(rec, m, rec.prop, m.view);
      if (c.relation === 'different') return undefined;
      if (c.reasons === OVERRIDE_REASONS) linked = true;
      const inv = (c.relation === 'inverted') !== m.inverted;
      if (inverted === undefined) {
        inverted = inv;
        reasons = c.reasons;
      } else if (inverted !== inv) return undefined;
      if (c.confidence < confidence) confidence = c.confidence;
    }
    if (inverted === undefined) return undefined;
    for (const m of g.members) {
      if (m === rec || m.prop.platform !== rec.prop.platform) continue;
      // One listing per venue per side; two sides on one venue only for one game's line.
      if (!linked && (m.inverted === inverted || !GAME_KINDS.has(rec.prop.kind))) return undefined;
    }
    return linked ? { inverted, confidence: 1, reasons: OVERRIDE_REASONS } : { inverted, confidence, reasons };
  }

  /**
   * Puts a listing in the group it fits best. Groups that fit about as well are either the same
   * proposition seen from listings that could not be related before (an underdog's spread and the
   * favourite's, neither naming the other team) and merge, or they contradict each other (two
   * dated games for one undated listing) and the listing joins none of them.
   */
  private place(rec: Rec, query: readonly string[] = blockKeys(rec.prop).query): void {
    const pass = ++this.pass;
    const fits: { g: Group; fit: Fit }[] = [];
    for (const k of query) {
      for (const other of this.block(k)) {
        const g = other.group;
        if (other === rec || !g || g.seen === pass) continue;
        g.seen = pass;
        const f = this.fit(rec, g);
        if (f && f.confidence >= this.minConfidence) fits.push({ g, fit: f });
      }
    }
    const partners = this.links.get(rec.key);
    if (partners) {
      for (const k of partners.keys()) {
        const g = this.recs.get(k)?.group;
        if (!g || g.seen === pass) continue;
        g.seen = pass;
        const f = this.fit(rec, g);
        if (f) fits.push({ g, fit: f });
      }
      // A linked listing goes with its partner whatever else fits, even when the partner's group
      // disagrees: the partner then leaves that group for a new one with this listing.
      const linked = fits.find((f) => f.fit.reasons === OVERRIDE_REASONS);
      if (linked) return this.join(linked.g, rec, linked.fit);
      const k = [...partners.keys()].find((x) => this.recs.get(x)?.group);
      if (k !== undefined) return this.pair(rec, this.recs.get(k)!, partners.get(k)!);
    }
    if (fits.length === 0) return this.found(rec);
    fits.sort((x, y) => y.fit.confidence - x.fit.confidence || x.g.id - y.g.id);
    const best = fits[0]!;
    const rivals = fits.slice(1).filter((f) => f.fit.confidence >= best.fit.confidence - AMBIGUITY);
    if (rivals.length === 0) return this.join(best.g, rec, best.fit);
    // Dry run: the best group, the listing and every rival group, oriented as the best group.
    const all: Slot[] = best.g.members.map((m) => ({ rec: m, inverted: m.inverted }));
    all.push({ rec, inverted: best.fit.inverted });
    for (const r of rivals) {
      const flip = r.fit.inverted !== best.fit.inverted;
      for (const m of r.g.members) all.push({ rec: m, inverted: m.inverted !== flip });
    }
    if (!this.consistent(all)) return this.found(rec);
    const joined: Member[] = [this.enter(rec, best.fit.inverted, best.fit.confidence, this.reasonsOf(best.fit.reasons))];
    rec.group = best.g;
    this.remember(rec.prop.signature, best.g.id);
    for (const r of rivals) {
      const flip = r.fit.inverted !== best.fit.inverted;
      this.live.delete(r.g.id);
      // The rival group is gone: its members are re-entered as members of the best group.
      for (const m of r.g.members) {
        joined.push(
          this.enter(m, m.inverted !== flip, Math.min(m.memberConfidence, r.fit.confidence), m.reasons.length > 0 ? m.reasons : this.reasonsOf(r.fit.reasons)),
        );
        m.group = best.g;
        this.remember(m.prop.signature, best.g.id);
      }
    }
    best.g.members = best.g.members.concat(joined);
    this.refresh(best.g);
  }

  /** Whether listings with these orientations may form one group: every pair agrees, slots hold. */
  private consistent(all: readonly Slot[]): boolean {
    const views = withGame(all.map((x) => x.rec.prop));
    for (let i = 0; i < all.length; i++) {
      for (let j = i + 1; j < all.length; j++) {
        const a = all[i]!;
        const b = all[j]!;
        const c = this.relation(a.rec, b.rec, views[i]!, views[j]!);
        if (c.reasons !== OVERRIDE_REASONS && a.rec.prop.platform === b.rec.prop.platform && (a.inverted === b.inverted || !GAME_KINDS.has(a.rec.prop.kind)))
          return false;
        if (c.relation === 'different' || c.confidence < this.minConfidence) return false;
        if ((c.relation === 'inverted') !== (a.inverted !== b.inverted)) return false;
      }
    }
    return true;
  }

  private found(rec: Rec): void {
    const sig = rec.prop.signature;
    const key = sigKey(sig);
    let id = this.sigIds.get(key);
    if (id === undefined || this.live.has(id)) {
      id = this.nextId++;
      if (!this.sigIds.has(key)) this.remember(sig, id, key);
    }
    const m = this.enter(rec, false, 1, NO_REASONS);
    const g: Group = { id, members: [m], anchor: m, founder: m, cached: undefined, seen: 0 };
    this.live.set(id, g);
    rec.group = g;
  }

  /** A new group of `rec` and its linked `partner` (taken out of its group). */
  private pair(rec: Rec, partner: Rec, inverted: boolean): void {
    const previous = partner.group;
    this.detach(partner);
    this.found(rec);
    this.join(rec.group!, partner, { inverted, confidence: 1, reasons: OVERRIDE_REASONS });
    if (previous && this.live.has(previous.id)) this.retryNeighbours(partner, previous);
  }

  /** A listing's place as it enters a group (its view is its own proposition until the group's refresh). */
  private enter(rec: Rec, inverted: boolean, confidence: number, reasons: readonly string[]): Member {
    rec.inverted = inverted;
    rec.memberConfidence = confidence;
    rec.reasons = reasons;
    rec.view = rec.prop;
    return rec;
  }

  private remember(sig: string, id: number, key = sigKey(sig)): void {
    const prev = this.sigIds.get(key);
    if (prev === id) return;
    // Never take a signature away from another live group: duplicates keep their own ids.
    if (prev !== undefined && prev !== id && this.live.has(prev)) return;
    this.sigIds.set(key, id);
    this.persistence?.save(sig, id);
  }

  private join(g: Group, rec: Rec, f: Fit): void {
    g.members = g.members.concat(this.enter(rec, f.inverted, f.confidence, this.reasonsOf(f.reasons)));
    rec.group = g;
    this.remember(rec.prop.signature, g.id);
    this.refresh(g);
  }

  private detach(rec: Rec): void {
    const g = rec.group;
    rec.group = undefined;
    if (!g) return;
    g.members = g.members.filter((m) => m !== rec);
    if (g.members.length === 0) {
      this.live.delete(g.id);
      return;
    }
    if (g.founder === rec) g.founder = g.members[0];
    this.refresh(g);
  }

  /**
   * After a membership change: the anchor is the member with the most complete proposition (then
   * the smallest signature), so the group's YES side does not depend on arrival order; the
   * founder's confidence and reasons are those of its best partner; views get the group's game.
   */
  private refresh(g: Group): void {
    g.cached = undefined;
    if (g.members.length === 0) return;
    let anchor = g.members[0]!;
    for (const m of g.members) if (anchorRank(m.prop, anchor.prop) < 0) anchor = m;
    if (anchor.inverted) for (const m of g.members) m.inverted = !m.inverted;
    g.anchor = anchor;
    const first = g.founder ?? g.members[0]!;
    let best: Member | undefined;
    for (const m of g.members) if (m !== first && (!best || m.memberConfidence > best.memberConfidence)) best = m;
    first.memberConfidence = best ? best.memberConfidence : 1;
    first.reasons = best ? best.reasons : NO_REASONS;
    const views = withGame(g.members.map((m) => m.prop));
    g.members.forEach((m, i) => (m.view = views[i]!));
  }

  /**
   * `rec` left `g` (changed or removed). A singleton it kept out (its venue slot, a contradiction
   * with it) may fit `g` now; only listings `rec` could see (its query blocks) can be such.
   */
  private retryNeighbours(rec: Rec, g: Group): void {
    const retry: Rec[] = [];
    const pass = ++this.pass;
    for (const k of blockKeys(rec.prop).query) {
      for (const other of this.block(k)) {
        const og = other.group;
        if (other.key === rec.key || !og || og.members.length !== 1 || og.seen === pass) continue;
        og.seen = pass;
        const f = this.fit(other, g);
        if (f && f.confidence >= this.minConfidence) retry.push(other);
      }
    }
    for (const other of retry) {
      if (!other.group || other.group.members.length !== 1) continue;
      this.detach(other);
      this.place(other);
    }
  }

  private view(g: Group): MatchGroup {
    if (g.cached) return g.cached;
    const anchor = g.anchor ?? g.members[0]!;
    const f = describeGroup(
      anchor.prop,
      g.members.filter((m) => m !== anchor).map((m) => m.prop),
    );
    // Every field named, so that views (and the service's copies of them) share one hidden class.
    g.cached = {
      group_id: g.id,
      title: this.text(f.title),
      market_class: f.market_class,
      market_type: f.market_type,
      period: f.period,
      line: f.line,
      side: f.side,
      player: f.player,
      team: f.team,
      event_id: this.text(f.event_id),
      event_name: this.text(f.event_name),
      game_title: this.text(f.game_title),
      event_date: f.event_date,
      members: g.members.map((m) => ({
        key: m.key,
        platform: m.venue,
        market_id: m.prop.marketId,
        inverted: m.inverted,
        confidence: m.memberConfidence,
        reasons: m.reasons,
      })),
    };
    return g.cached;
  }
}
