/**
 * The matcher's own copy of a proposition (one per listing, all kept). The fields a few values
 * cover between them (kind, venue, league, unit, period, confidence, evidence…) sit in one shared
 * frozen object per combination, and so do the game's (teams, home, away, day: every listing of a
 * game holds the same); the fields few kinds use (month, time, a range's top, free-text tokens)
 * sit in an object of their own only when one is set; the rest (subject, threshold, line…) are the
 * listing's own. The signature is not kept: it is made of the other fields, and is built again when
 * read (from the game the listing was read with, not the one a group filled in: `withGame` keeps it).
 * At 108k listings the signature strings held were 5.4 MiB of the main heap (heap snapshot of the
 * service; most are equal to another listing's, which the matcher's `sigIds` already holds). It reads
 * as a Proposition through getters; `plain` gives the plain object extraction returns.
 */
import { signatureOf, type Comparator, type MarketClass, type Proposition, type PropositionKind } from './proposition/index.js';

/** The fields of a proposition that many listings hold alike. */
type Shared = Pick<
  Proposition,
  | 'kind'
  | 'platform'
  | 'sport'
  | 'league'
  | 'competition'
  | 'stage'
  | 'office'
  | 'jurisdiction'
  | 'party'
  | 'year'
  | 'mode'
  | 'comparator'
  | 'unit'
  | 'stat'
  | 'period'
  | 'market_class'
  | 'market_type'
  | 'side'
  | 'negated'
  | 'confidence'
  | 'evidence'
>;

/** The game (or day) a proposition is about: all listings of one game hold the same. */
type Game = Pick<Proposition, 'teams' | 'home' | 'away' | 'date' | 'dateSource'>;

/** The fields few kinds set. */
type Rare = Pick<Proposition, 'month' | 'time' | 'thresholdHigh' | 'tokens'>;

/** The fields of a proposition that are its listing's own. */
type Own = Pick<Proposition, 'marketId' | 'subject' | 'subjectCandidates' | 'subjectName' | 'threshold' | 'line' | 'player' | 'team'>;

/** What a stored proposition holds besides its own fields (`sg`: the game its signature was read with). */
interface Parts {
  readonly s: Shared;
  readonly g: Game;
  readonly r: Rare;
  readonly sg: Game;
}

/** Past this many entries a table of shared objects starts over (it only shares copies). */
const SHARED_CAP = 16_384;
const shared = new Map<string, Shared>();
const games = new Map<string, Game>();
const NO_RARE: Rare = Object.freeze({ month: null, time: null, thresholdHigh: null, tokens: Object.freeze([]) });

/** The one frozen copy of a game. */
function gameOf(teams: readonly string[], home: string | null, away: string | null, date: string | null, dateSource: Proposition['dateSource']): Game {
  const key = [teams.join('\u0002'), home, away, date, dateSource].map(part).join('\u0001');
  let g = games.get(key);
  if (g === undefined) {
    if (games.size >= SHARED_CAP) games.clear();
    games.set(key, (g = Object.freeze({ teams, home, away, date, dateSource })));
  }
  return g;
}

/** The rare fields of `p`: the shared empty object when none is set. */
function rareOf(p: Proposition): Rare {
  if (p.month === null && p.time === null && p.thresholdHigh === null && p.tokens.length === 0) return NO_RARE;
  return { month: p.month, time: p.time, thresholdHigh: p.thresholdHigh, tokens: p.tokens };
}

/** A key part for a field: null apart from every string (a separator no code holds). */
function part(v: string | number | boolean | null): string {
  return v === null ? '\u0000' : String(v);
}

/** The one frozen copy of `p`'s shared fields. */
function sharedOf(p: Proposition): Shared {
  const key = [
    p.kind,
    p.platform,
    p.sport,
    p.league,
    p.competition,
    p.stage,
    p.office,
    p.jurisdiction,
    p.party,
    p.year,
    p.mode,
    p.comparator,
    p.unit,
    p.stat,
    p.period,
    p.market_class,
    p.market_type,
    p.side,
    p.negated,
    p.confidence,
    p.evidence.join('\u0002'),
  ]
    .map(part)
    .join('\u0001');
  let s = shared.get(key);
  if (s === undefined) {
    if (shared.size >= SHARED_CAP) shared.clear();
    s = Object.freeze({
      kind: p.kind,
      platform: p.platform,
      sport: p.sport,
      league: p.league,
      competition: p.competition,
      stage: p.stage,
      office: p.office,
      jurisdiction: p.jurisdiction,
      party: p.party,
      year: p.year,
      mode: p.mode,
      comparator: p.comparator,
      unit: p.unit,
      stat: p.stat,
      period: p.period,
      market_class: p.market_class,
      market_type: p.market_type,
      side: p.side,
      negated: p.negated,
      confidence: p.confidence,
      evidence: p.evidence,
    });
    shared.set(key, s);
  }
  return s;
}

/** A proposition as the matcher keeps it (see the module comment). */
export class StoredProposition implements Proposition {
  readonly marketId: string | null;
  readonly subject: string | null;
  readonly subjectCandidates: readonly string[];
  readonly subjectName: string | null;
  readonly threshold: number | null;
  readonly line: number | null;
  readonly player: string | null;
  readonly team: string | null;
  private readonly s: Shared;
  private readonly g: Game;
  private readonly r: Rare;
  /** The game the listing was read with (its signature's teams and day): `g` but in a view with a group's game. */
  private readonly sg: Game;

  protected constructor(o: Own, parts: Parts) {
    this.marketId = o.marketId;
    this.subject = o.subject;
    this.subjectCandidates = o.subjectCandidates;
    this.subjectName = o.subjectName;
    this.threshold = o.threshold;
    this.line = o.line;
    this.player = o.player;
    this.team = o.team;
    this.s = parts.s;
    this.g = parts.g;
    this.r = parts.r;
    this.sg = parts.sg;
  }

  /**
   * What the stored copy of an extracted proposition is made of besides its own fields. Throws when `p`'s
   * signature is not the one its fields give (`signatureOf`): a stored proposition builds it again from them.
   */
  protected static partsOf(p: Proposition): Parts {
    const g = gameOf(p.teams, p.home, p.away, p.date, p.dateSource);
    const sig = signatureOf(p);
    if (sig !== p.signature) throw new Error(`proposition signature ${JSON.stringify(p.signature)} is not its fields' (${JSON.stringify(sig)})`);
    return { s: sharedOf(p), g, r: rareOf(p), sg: g };
  }

  /** The matcher's copy of an extracted proposition (see `partsOf`). */
  static of(p: Proposition): StoredProposition {
    return new StoredProposition(p, StoredProposition.partsOf(p));
  }

  /** This proposition with the game a group established (teams, day) filled in; its signature stays the listing's. */
  withGame(teams: readonly string[], date: string | null, dateSource: Proposition['dateSource']): StoredProposition {
    return new StoredProposition(this, { s: this.s, g: gameOf(teams, this.home, this.away, date, dateSource), r: this.r, sg: this.sg });
  }

  /** Canonical text of the settlement fields as the listing was read (see the module comment). */
  get signature(): string {
    return signatureOf(this, this.sg.teams, this.sg.date);
  }

  get teams(): readonly string[] {
    return this.g.teams;
  }
  get home(): string | null {
    return this.g.home;
  }
  get away(): string | null {
    return this.g.away;
  }
  get date(): string | null {
    return this.g.date;
  }
  get dateSource(): Proposition['dateSource'] {
    return this.g.dateSource;
  }
  get month(): string | null {
    return this.r.month;
  }
  get time(): string | null {
    return this.r.time;
  }
  get thresholdHigh(): number | null {
    return this.r.thresholdHigh;
  }
  get tokens(): readonly string[] {
    return this.r.tokens;
  }
  get kind(): PropositionKind {
    return this.s.kind;
  }
  get platform(): string {
    return this.s.platform;
  }
  get sport(): string | null {
    return this.s.sport;
  }
  get league(): string | null {
    return this.s.league;
  }
  get competition(): string | null {
    return this.s.competition;
  }
  get stage(): string | null {
    return this.s.stage;
  }
  get office(): string | null {
    return this.s.office;
  }
  get jurisdiction(): string | null {
    return this.s.jurisdiction;
  }
  get party(): string | null {
    return this.s.party;
  }
  get year(): number | null {
    return this.s.year;
  }
  get mode(): string | null {
    return this.s.mode;
  }
  get comparator(): Comparator | null {
    return this.s.comparator;
  }
  get unit(): string | null {
    return this.s.unit;
  }
  get stat(): string | null {
    return this.s.stat;
  }
  get period(): string | null {
    return this.s.period;
  }
  get market_class(): MarketClass | null {
    return this.s.market_class;
  }
  get market_type(): string {
    return this.s.market_type;
  }
  get side(): Proposition['side'] {
    return this.s.side;
  }
  get negated(): boolean {
    return this.s.negated;
  }
  get confidence(): number {
    return this.s.confidence;
  }
  get evidence(): readonly string[] {
    return this.s.evidence;
  }

  /** The plain object extraction returns, fields in its order. */
  plain(): Proposition {
    return {
      platform: this.platform,
      marketId: this.marketId,
      kind: this.kind,
      subject: this.subject,
      subjectCandidates: this.subjectCandidates,
      subjectName: this.subjectName,
      sport: this.sport,
      league: this.league,
      teams: this.teams,
      home: this.home,
      away: this.away,
      competition: this.competition,
      stage: this.stage,
      office: this.office,
      jurisdiction: this.jurisdiction,
      party: this.party,
      year: this.year,
      date: this.date,
      dateSource: this.dateSource,
      month: this.month,
      time: this.time,
      mode: this.mode,
      comparator: this.comparator,
      threshold: this.threshold,
      thresholdHigh: this.thresholdHigh,
      unit: this.unit,
      stat: this.stat,
      period: this.period,
      market_class: this.market_class,
      market_type: this.market_type,
      line: this.line,
      side: this.side,
      player: this.player,
      team: this.team,
      negated: this.negated,
      tokens: this.tokens,
      confidence: this.confidence,
      evidence: this.evidence,
      signature: this.signature,
    };
  }
}
