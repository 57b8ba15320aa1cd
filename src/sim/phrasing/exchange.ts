import type { VenueConfig } from '../../config/schema.js';
import { MONTH_NAMES, type LeagueDef } from '../data.js';
import { digitsOf, type Rng } from '../rng.js';
import type { SimProposition } from '../types.js';
import type { ListingSpec, PropMeta } from './spec.js';
import { category, isoDay, matchup, money } from './text.js';

/**
 * Exchange-protocol phrasing: on the sports-only venue (venue_h) one outcome per side of a venue
 * market; on the others games, races, Fed, crypto dailies and CPI as "<subject> to win" markets.
 */
export function exchange(venue: VenueConfig, prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  const e = prop.event;
  const lg = meta.league;
  const sportsOnly = venue.label === 'venue_h' || /sports/i.test(venue.name);
  const outcomeId = sportsOnly ? rng.digits(9) : `${venue.slug.slice(-1).toUpperCase()}-${rng.hex(10)}`;
  const eventId = `EV-${e.id}`;
  const base = { inverted: false, category: category(e), tags: [category(e)], tick: 100 };
  // On venue_h one venue market (a game's moneyline, one spread line, a championship) holds an
  // outcome per side, each listed as its own market: both sides derive the same market id.
  const ids = (marketName: string): Record<string, string> => ({
    event_id: eventId,
    outcome_id: outcomeId,
    market_name: marketName,
    ...(sportsOnly ? { market_id: digitsOf(`${venue.label}|${eventId}|${marketName}|${Math.abs(prop.line ?? 0)}`, 9) } : {}),
  });
  const c: Ctx = { venue, prop, meta, rng, sportsOnly, outcomeId, base, ids };
  if (lg && e.home && e.away) return gameListing(c, lg);
  if (sportsOnly) return sportsFutures(c);
  return otherListing(c);
}

interface Ctx {
  readonly venue: VenueConfig;
  readonly prop: SimProposition;
  readonly meta: PropMeta;
  readonly rng: Rng;
  /** The sports-only venue: one outcome per side of a venue market. */
  readonly sportsOnly: boolean;
  readonly outcomeId: string;
  readonly base: { readonly inverted: boolean; readonly category: string; readonly tags: string[]; readonly tick: number };
  /** The listing's ids under the venue market `marketName`. */
  readonly ids: (marketName: string) => Record<string, string>;
}

/** A game's moneyline, spread or total. */
function gameListing(c: Ctx, lg: LeagueDef): ListingSpec | undefined {
  const { prop, meta, sportsOnly, outcomeId, base, ids } = c;
  const e = prop.event;
  const yesOnly = c.venue.capabilities.yesOnlyBook;
  if (lg.esports && sportsOnly === false) return undefined;
  const game = matchup(e, ' @ ', (t) => t.name);
  switch (meta.kind) {
    case 'ml':
      if (!sportsOnly && yesOnly) return undefined;
      return {
        ...base,
        tags: ['Sports', lg.league],
        id: outcomeId,
        title: sportsOnly ? prop.team!.name : `${prop.team!.name} to beat ${(prop.team === e.home ? e.away! : e.home!).name}`,
        eventTitle: game,
        outcome: prop.team!.name,
        ids: ids('Moneyline'),
      };
    case 'spread':
      if (!sportsOnly) return undefined;
      return {
        ...base,
        tags: ['Sports', lg.league],
        id: outcomeId,
        title: `${prop.team!.name} -${Math.abs(prop.line!)}`,
        eventTitle: game,
        outcome: prop.team!.name,
        ids: ids('Spread'),
      };
    case 'total':
      if (!sportsOnly) return undefined;
      return { ...base, tags: ['Sports', lg.league], id: outcomeId, title: `Over ${prop.line}`, eventTitle: game, outcome: 'Over', ids: ids('Total') };
    default:
      return undefined;
  }
}

/** The sports-only venue's futures: championship winners of a few leagues. */
function sportsFutures(c: Ctx): ListingSpec | undefined {
  const { prop, meta, outcomeId, base, ids } = c;
  const lg = meta.league;
  if (meta.kind === 'champ' && lg && ['NFL', 'NCAAF', 'NBA'].includes(lg.league)) {
    const year = Number(meta.extra?.['year']);
    return {
      ...base,
      tags: ['Sports', lg.league],
      id: outcomeId,
      title: prop.team!.name,
      eventTitle: `${year} ${lg.champ!.poly} Winner`,
      outcome: prop.team!.name,
      ids: ids('Futures'),
    };
  }
  return undefined;
}

/** Races, Fed decisions, crypto dailies and CPI on the general venues. */
function otherListing(c: Ctx): ListingSpec | undefined {
  const { venue, prop, meta, rng, outcomeId, base, ids } = c;
  const e = prop.event;
  switch (meta.kind) {
    case 'race':
      return {
        ...base,
        id: outcomeId,
        title: `${meta.name} to win: ${meta.extra?.['office']} ${meta.extra?.['year']}`,
        eventTitle: `${meta.extra?.['office']} ${meta.extra?.['year']}`,
        outcome: meta.name,
        ids: ids('Winner'),
      };
    case 'fed': {
      const d = new Date(e.closeTime);
      return {
        ...base,
        id: outcomeId,
        title: `Fed ${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()}: ${meta.extra?.['kalshi']}`,
        eventTitle: `FOMC ${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()}`,
        outcome: String(meta.extra?.['kalshi']),
        ids: ids('Rate decision'),
      };
    }
    case 'crypto_daily': {
      if (venue.label !== 'venue_f' && rng.chance(0.5)) return undefined;
      const d = new Date(e.closeTime);
      return {
        ...base,
        id: outcomeId,
        title: `${meta.name} above $${money(prop.line!)} on ${isoDay(d.getTime())} 22:00 UTC`,
        eventTitle: `${meta.name} daily close ${isoDay(d.getTime())}`,
        outcome: 'Yes',
        ids: ids('Above'),
      };
    }
    case 'cpi':
      return {
        ...base,
        id: outcomeId,
        title: `US CPI YoY above ${prop.line}% (${MONTH_NAMES[Number(meta.extra?.['month'])]} ${meta.extra?.['year']})`,
        eventTitle: `US CPI ${MONTH_NAMES[Number(meta.extra?.['month'])]} ${meta.extra?.['year']}`,
        outcome: 'Yes',
        ids: ids('Above'),
      };
    default:
      return undefined;
  }
}
