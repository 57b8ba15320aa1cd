import type { LeagueDef } from '../data.js';

/**
 * How each venue would list a proposition: its own id scheme, title phrasing, event title and
 * outcome label, modeled on real listings (test/fixtures/matching/dev-pairs.json shows the real
 * phrasing). Returns undefined when that venue does not list the proposition.
 *
 * `ids` keys per protocol:
 * - kalshi: series_ticker, event_ticker, ticker, market_uuid, rules_primary, frequency, combo, fee_type
 * - polymarket: condition_id, yes_token, no_token, slug, event_slug, event_id, gamma_id, question_id,
 *   tick_size, neg_risk, outcome_yes, outcome_no
 * - polymarket_us: slug, event_slug
 * - predictit: market_id, contract_id, market_name, contract_name, short_name
 * - manifold: id, slug, creator_username, question; multi-answer listings add contract_id, answer_id,
 *   answer_text (listing id = `<contract_id>:<answer_id>`)
 * - exchange: event_id, outcome_id, market_name
 */
export interface ListingSpec {
  readonly id: string;
  readonly title: string;
  readonly eventTitle: string;
  readonly seriesTitle?: string | undefined;
  readonly outcome?: string | undefined;
  readonly inverted: boolean;
  readonly category: string;
  readonly tags: readonly string[];
  readonly ids: Record<string, string>;
  /** Listing appears later than the world's start (ms offset from the anchor). */
  readonly createdAt?: number | undefined;
  readonly tick: number;
}

/** What a generator tells the phrasers about a proposition beyond its fields. */
export interface PropMeta {
  readonly league?: LeagueDef | undefined;
  /** Kind of proposition, for phrasing. */
  readonly kind:
    'ml' | 'ml1h' | 'draw' | 'spread' | 'total' | 'player' | 'map1' | 'champ' | 'worldcup' | 'race' | 'fed' | 'cpi' | 'crypto_daily' | 'crypto_max' | 'award';
  /** Codes used in ids (candidate code, country code, Fed outcome code…). */
  readonly code?: string | undefined;
  readonly name?: string | undefined;
  readonly extra?: Readonly<Record<string, string | number>> | undefined;
}
