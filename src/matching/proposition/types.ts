/** The listing a proposition is read from, the proposition's fields, and the draft parsers fill in. */

/** One venue listing as the matcher sees it. */
export interface MatchInput {
  readonly platform: string;
  /** Platform-native id (Kalshi ticker, Polymarket id or slug…); null when unknown. */
  readonly market_id: string | null;
  readonly title: string;
  readonly event_title?: string | undefined;
  /** The outcome label of this listing's YES side ("Buffalo", "Over", "Yes", "$91,000 or above"). */
  readonly outcome?: string | undefined;
  /** ISO 8601, unix seconds or ms. */
  readonly close_time?: string | number | undefined;
  readonly category?: string | undefined;
  /**
   * The wire protocol the venue speaks (`kalshi`, `polymarket`, …) when `platform` is a neutral
   * venue label: it says how to read `market_id`. Kalshi-style ids are also recognised by shape.
   */
  readonly protocol?: string | undefined;
}

/** What a proposition is about; two propositions of different kinds never match. */
export type PropositionKind =
  | 'game_winner'
  | 'draw'
  | 'spread'
  | 'total'
  | 'player_prop'
  | 'map_winner'
  | 'championship'
  | 'tournament_winner'
  | 'group_winner'
  | 'stage_reach'
  | 'nomination'
  | 'appointment'
  | 'election_winner'
  | 'chamber_control'
  | 'fed_decision'
  | 'fed_rate'
  | 'econ_threshold'
  | 'crypto_price'
  | 'ipo'
  | 'award'
  | 'other';

/** `range` is an inclusive [threshold, thresholdHigh] bucket. */
export type Comparator = '>' | '>=' | '<' | '<=' | '=' | 'range';

/** Spec 2.4 market_class. */
export type MarketClass = 'moneyline' | 'spread' | 'total' | 'player_prop' | 'other';

/** The structured statement one listing's YES side settles on. */
export interface Proposition {
  readonly platform: string;
  readonly marketId: string | null;
  readonly kind: PropositionKind;
  /**
   * Canonical subject id: a team (`NFL:SEA`, `SOC:ARS`, `NAT:NOR`, `ESP:T1`), a person
   * (`person:james talarico`), an asset (`asset:BTC`), an organisation (`org:openai`), a work
   * (`work:sinners`), an indicator (`cpi_yoy`), `fed`. Null when unknown or ambiguous.
   */
  readonly subject: string | null;
  /** Candidate subject ids when a team name is ambiguous ("Giants"); [subject] when definite. */
  readonly subjectCandidates: readonly string[];
  /** Display name of the subject. */
  readonly subjectName: string | null;
  readonly sport: string | null;
  /** NFL, NBA, MLB, NHL, NCAAF, EPL, UCL, WC, LOL, CS2, … */
  readonly league: string | null;
  /** Participants of the game (team ids), away first when known. */
  readonly teams: readonly string[];
  readonly home: string | null;
  readonly away: string | null;
  /** What is won: `NFL` (league title), `fifa_world_cup_men`, … */
  readonly competition: string | null;
  /** `winner`, `group_F`, `reach_sf`, `conf_AFC`, `map1`, … */
  readonly stage: string | null;
  /** `president_us`, `governor_ca`, `president_br`, … */
  readonly office: string | null;
  /**
   * The country an indicator is about when the listing names one other than the US, ISO 3166
   * alpha-2 (`jp`, `br`, `ea` for the euro area). Null is the US, the venues' home: an unnamed
   * "unemployment rate" is the BLS figure. The same indicator of two countries never settles alike.
   */
  readonly jurisdiction: string | null;
  readonly party: string | null;
  readonly year: number | null;
  /** Game day, deadline day or observation day (ISO, US Eastern calendar). */
  readonly date: string | null;
  /** Where `date` came from; `close_time` dates are inferred. */
  readonly dateSource: 'ticker' | 'slug' | 'title' | 'close_time' | null;
  /** Meeting or data month "YYYY-MM" (or quarter "YYYY-Qn"). */
  readonly month: string | null;
  /** Observation clock time in US Eastern, "HH:MM" (point-in-time prices). */
  readonly time: string | null;
  /**
   * Crypto: `at` (value at a time), `max_by` (touches above by a deadline), `min_by`. IPO: `by`,
   * `first`. Politics: `next` (the next holder of an office, by whatever route, until `date`),
   * `next_election` (the winner of the next election, however far away).
   */
  readonly mode: string | null;
  readonly comparator: Comparator | null;
  readonly threshold: number | null;
  readonly thresholdHigh: number | null;
  /** `usd`, `pct`, `bps`, `count` (integer stats, points, margins). */
  readonly unit: string | null;
  /** Player stat (`receptions`, `receiving_yards`, `points`…) or total unit (`points`, `maps`). */
  readonly stat: string | null;
  /** full, 1H, 2H, 1Q, F5, P1; null for non-game propositions. */
  readonly period: string | null;
  readonly market_class: MarketClass | null;
  readonly market_type: string;
  /** Spread: signed from the subject's side (-2.5 gives points). Total / prop: the half line. */
  readonly line: number | null;
  readonly side: 'home' | 'away' | 'over' | 'under' | null;
  readonly player: string | null;
  /** Display name of the team a team line is about. */
  readonly team: string | null;
  /** YES is the complement of the statement read from the title (outcome "No", "Under", the other team). */
  readonly negated: boolean;
  /** Content words, for `other` propositions only. */
  readonly tokens: readonly string[];
  /** How sure extraction is that these fields are what the listing settles on (0..1). */
  readonly confidence: number;
  /** Which parts of the listing the fields came from. */
  readonly evidence: readonly string[];
  /** Canonical text of the settlement fields: the same proposition gives the same signature. */
  readonly signature: string;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
/** A proposition being filled in by a parser (mutable, no signature yet). */
export type Draft = Mutable<Omit<Proposition, 'signature' | 'evidence' | 'tokens' | 'teams' | 'subjectCandidates'>> & {
  evidence: string[];
  tokens: string[];
  teams: string[];
  subjectCandidates: string[];
};
