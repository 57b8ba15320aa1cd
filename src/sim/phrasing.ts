import type { Protocol, VenueConfig } from '../config/schema.js';
import type { LeagueDef } from './data.js';
import { digitsOf, type Rng } from './rng.js';
import type { SimEvent, SimProposition, SimTeam } from './types.js';

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

const MON = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const MONTH = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MON_SHORT = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * US Eastern wall time of an instant, as a Date whose UTC fields read as Eastern time: venues
 * name game days and expiries by the Eastern calendar (a 9 pm ET game is "today", not the next
 * UTC day). DST: second Sunday of March 2:00 to first Sunday of November 2:00.
 */
function eastern(ms: number): Date {
  const y = new Date(ms).getUTCFullYear();
  const nthSunday = (month: number, n: number): number => {
    const first = new Date(Date.UTC(y, month, 1)).getUTCDay();
    return 1 + ((7 - first) % 7) + (n - 1) * 7;
  };
  const dstStart = Date.UTC(y, 2, nthSunday(2, 2), 7); // 2:00 EST = 07:00 UTC
  const dstEnd = Date.UTC(y, 10, nthSunday(10, 1), 6); // 2:00 EDT = 06:00 UTC
  const offsetH = ms >= dstStart && ms < dstEnd ? 4 : 5;
  return new Date(ms - offsetH * 3_600_000);
}

function kDate(ms: number): string {
  const d = eastern(ms);
  return `${String(d.getUTCFullYear() % 100).padStart(2, '0')}${MON[d.getUTCMonth()]}${String(d.getUTCDate()).padStart(2, '0')}`;
}
function isoDay(ms: number): string {
  return eastern(ms).toISOString().slice(0, 10);
}
function money(n: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: 2 });
}
function slugify(s: string): string {
  return s
    .toLowerCase()
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}
function uuid(rng: Rng): string {
  const h = rng.hex(32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const matchup = (e: SimEvent, sep: string, f: (t: SimTeam) => string): string => `${f(e.away!)}${sep}${f(e.home!)}`;

/** Phrases `prop` for a venue; undefined when the venue does not list it. */
export function phrase(venue: VenueConfig, prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  const p: Protocol = venue.protocol;
  switch (p) {
    case 'kalshi':
      return kalshi(prop, meta, rng);
    case 'polymarket':
      return polymarket(prop, meta, rng);
    case 'polymarket_us':
      return polymarketUs(prop, meta);
    case 'predictit':
      return predictit(prop, meta, rng);
    case 'manifold':
      return manifold(prop, meta, rng);
    case 'exchange':
      return exchange(venue, prop, meta, rng);
  }
}

function category(e: SimEvent): string {
  return { sports: 'Sports', politics: 'Politics', economics: 'Economics', crypto: 'Crypto', entertainment: 'Entertainment' }[e.category];
}

function kalshi(prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  const e = prop.event;
  const lg = meta.league;
  const ids = (series: string, event: string, ticker: string, rules: string, frequency = 'custom'): Record<string, string> => ({
    series_ticker: series,
    event_ticker: event,
    ticker,
    market_uuid: uuid(rng),
    rules_primary: rules,
    frequency,
    combo: 'false',
    fee_type: 'quadratic',
  });
  const base = { inverted: false, category: category(e), tick: 100 };
  if (lg && e.home && e.away && !lg.esports) {
    const code = lg.code;
    const ev = (series: string): string => `${series}-${kDate(e.startTime)}${e.away!.abbr}${e.home!.abbr}`;
    const tags = ['Sports', lg.league];
    const gameTitle = lg.draws ? matchup(e, ' vs ', (t) => t.name) : matchup(e, ' at ', (t) => t.city);
    switch (meta.kind) {
      case 'ml': {
        const s = `KX${code}GAME`;
        const team = prop.team!;
        const title = lg.draws ? `${gameTitle} Winner?` : `${gameTitle} Winner?`;
        return {
          ...base,
          tags,
          id: `${ev(s)}-${team.abbr}`,
          title,
          eventTitle: gameTitle,
          seriesTitle: `${lg.league} Game`,
          outcome: lg.draws ? team.name : team.city,
          ids: ids(s, ev(s), `${ev(s)}-${team.abbr}`, `If ${team.name} wins the ${gameTitle} game, the market resolves to Yes.`),
        };
      }
      case 'draw': {
        const s = `KX${code}GAME`;
        return {
          ...base,
          tags,
          id: `${ev(s)}-TIE`,
          title: `${gameTitle} Winner?`,
          eventTitle: gameTitle,
          seriesTitle: `${lg.league} Game`,
          outcome: 'Tie',
          ids: ids(s, ev(s), `${ev(s)}-TIE`, `If the ${gameTitle} game ends in a tie, the market resolves to Yes.`),
        };
      }
      case 'ml1h': {
        if (!['NFL', 'NBA'].includes(lg.league)) return undefined;
        const s = `KX${code}1HWINNER`;
        const team = prop.team!;
        return {
          ...base,
          tags,
          id: `${ev(s)}-${team.abbr}`,
          title: `${gameTitle}: First Half Winner?`,
          eventTitle: gameTitle,
          seriesTitle: `${lg.league} 1H Winner`,
          outcome: team.city,
          ids: ids(s, ev(s), `${ev(s)}-${team.abbr}`, `If ${team.name} leads at halftime, the market resolves to Yes.`),
        };
      }
      case 'spread': {
        const s = `KX${code}SPREAD`;
        const team = prop.team!;
        const line = Math.abs(prop.line!);
        const t = `${ev(s)}-${team.abbr}${Math.floor(line)}`;
        return {
          ...base,
          tags,
          id: t,
          title: `${team.city} wins by over ${line} ${lg.unit}?`,
          eventTitle: gameTitle,
          seriesTitle: `${lg.league} Spread`,
          outcome: team.city,
          ids: ids(s, ev(s), t, `If ${team.name} wins by more than ${line} ${lg.unit}, the market resolves to Yes.`),
        };
      }
      case 'total': {
        const s = `KX${code}TOTAL`;
        const t = `${ev(s)}-${Math.floor(prop.line!)}`;
        return {
          ...base,
          tags,
          id: t,
          title: `${gameTitle}: Total ${cap(lg.unit)}`,
          eventTitle: gameTitle,
          seriesTitle: `${lg.league} Total`,
          outcome: `Over ${prop.line} ${lg.unit}`,
          ids: ids(s, ev(s), t, `If more than ${prop.line} ${lg.unit} are scored, the market resolves to Yes.`),
        };
      }
      case 'player': {
        const stat = String(meta.extra?.['stat'] ?? '');
        const n = Math.ceil(prop.line!);
        const s = `KX${code}${stat === 'receptions' ? 'REC' : stat === 'points' ? 'PTS' : stat.replace(/\W/g, '').slice(0, 4).toUpperCase()}`;
        const pcode = `${prop.team!.abbr}${slugify(prop.player!).replace(/-/g, '').toUpperCase().slice(0, 14)}`;
        const t = `${ev(s)}-${pcode}-${n}`;
        return {
          ...base,
          tags,
          id: t,
          title: `${prop.player}: ${n}+ ${stat}`,
          eventTitle: gameTitle,
          seriesTitle: `${lg.league} ${cap(stat)}`,
          outcome: `${n}+`,
          ids: ids(s, ev(s), t, `If ${prop.player} records ${n} or more ${stat}, the market resolves to Yes.`),
        };
      }
      default:
        return undefined;
    }
  }
  switch (meta.kind) {
    case 'champ': {
      const c = lg!.champ!;
      const yy = String(new Date(e.closeTime).getUTCFullYear() % 100);
      const year = Number(meta.extra?.['year']);
      const t = `KX${c.code}-${yy}-${prop.team!.abbr}`;
      return {
        ...base,
        tags: ['Sports', lg!.league],
        id: t,
        title: `Will ${prop.team!.city} win the ${year} ${c.kalshi}?`,
        eventTitle: `${year} ${c.kalshi} winner?`,
        outcome: prop.team!.city,
        ids: ids(`KX${c.code}`, `KX${c.code}-${yy}`, t, `If ${prop.team!.name} wins the ${year} ${c.kalshi}, the market resolves to Yes.`, 'annual'),
      };
    }
    case 'worldcup': {
      const t = `KXMENWORLDCUP-26-${meta.code}`;
      return {
        ...base,
        tags: ['Sports', 'Soccer'],
        id: t,
        title: `Will the ${meta.name} win the 2026 Men's World Cup?`,
        eventTitle: "2026 Men's World Cup winner?",
        outcome: meta.name,
        ids: ids('KXMENWORLDCUP', 'KXMENWORLDCUP-26', t, `If ${meta.name} wins the 2026 FIFA World Cup, the market resolves to Yes.`, 'one_off'),
      };
    }
    case 'race': {
      const series = String(meta.extra?.['series']);
      const yy = String(Number(meta.extra?.['year']) % 100);
      const t = `${series}-${yy}-${meta.code}`;
      return {
        ...base,
        tags: ['Politics', 'Elections'],
        id: t,
        title: String(meta.extra?.['kalshiTitle']),
        eventTitle: String(meta.extra?.['kalshiEvent']),
        outcome: meta.name,
        ids: ids(series, `${series}-${yy}`, t, `If ${meta.name} wins, the market resolves to Yes.`, 'one_off'),
      };
    }
    case 'fed': {
      const d = new Date(e.closeTime);
      const ev = `KXFEDDECISION-${String(d.getUTCFullYear() % 100)}${MON[d.getUTCMonth()]}`;
      const t = `${ev}-${meta.code}`;
      return {
        ...base,
        tags: ['Economics', 'Fed'],
        id: t,
        title: `Will the Federal Reserve ${meta.extra?.['kalshi']} at their ${MONTH[d.getUTCMonth()]} ${d.getUTCFullYear()} meeting?`,
        eventTitle: `Fed decision in ${MON_SHORT[d.getUTCMonth()]} ${d.getUTCFullYear()}?`,
        outcome: String(meta.extra?.['kalshi']),
        ids: ids('KXFEDDECISION', ev, t, 'Resolves on the FOMC target rate announcement.', 'custom'),
      };
    }
    case 'cpi': {
      const m = Number(meta.extra?.['month']);
      const y = Number(meta.extra?.['year']);
      const ev = `KXCPIYOY-${y % 100}${MON[m]}`;
      const t = `${ev}-T${prop.line}`;
      return {
        ...base,
        tags: ['Economics', 'Inflation'],
        id: t,
        title: `Will the rate of CPI inflation be above ${prop.line}% for the year ending in ${MONTH[m]} ${y}?`,
        eventTitle: `CPI year-over-year in ${MON_SHORT[m]} ${y}?`,
        outcome: `Above ${prop.line}%`,
        ids: ids('KXCPIYOY', ev, t, 'Resolves on the BLS CPI-U release.', 'monthly'),
      };
    }
    case 'crypto_daily': {
      const d = new Date(e.closeTime);
      const ev = `KX${meta.code}D-${kDate(e.closeTime)}17`;
      const strike = (prop.line! - 0.01).toFixed(2);
      const t = `${ev}-T${strike}`;
      const created = rng.chance(0.3) ? rng.int(0, 20) * 3_600_000 : undefined;
      return {
        ...base,
        tags: ['Crypto', meta.name!],
        id: t,
        title: `${meta.name} price on ${MON_SHORT[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()} at 5pm EST?`,
        eventTitle: `${meta.name} price on ${MON_SHORT[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()} at 5pm EST?`,
        outcome: `$${money(prop.line!)} or above`,
        ids: ids(`KX${meta.code}D`, ev, t, `If the ${meta.name} index is above ${strike} at 5pm EST, the market resolves to Yes.`, 'daily'),
        createdAt: created,
      };
    }
    case 'crypto_max': {
      const y = new Date(e.closeTime).getUTCFullYear() - 1;
      const strike = (prop.line! - 0.01).toFixed(2);
      const t = `KX${meta.code}MAXY-${y % 100}DEC31-${strike}`;
      return {
        ...base,
        tags: ['Crypto', meta.name!],
        id: t,
        title: `Will ${meta.name} be above $${money(prop.line! - 0.01)} by Dec 31, ${y} at 11:59 PM ET?`,
        eventTitle: `How high will ${meta.name} get in ${y}?`,
        outcome: `Above $${money(prop.line! - 0.01)}`,
        ids: ids(
          `KX${meta.code}MAXY`,
          `KX${meta.code}MAXY-${y % 100}DEC31`,
          t,
          'Resolves Yes if the index trades above the strike before the deadline.',
          'annual',
        ),
      };
    }
    case 'award': {
      const y = Number(meta.extra?.['year']);
      const ev = `KX${meta.code}-${y % 100}`;
      const t = `${ev}-${slugify(meta.name!).replace(/-/g, '').toUpperCase().slice(0, 8)}`;
      return {
        ...base,
        tags: ['Entertainment', String(meta.extra?.['show'])],
        id: t,
        title: `Will ${meta.name} win ${meta.extra?.['category']} at the ${y} ${meta.extra?.['show']}?`,
        eventTitle: `${meta.extra?.['show']} ${y}: ${meta.extra?.['category']}`,
        outcome: meta.name,
        ids: ids(`KX${meta.code}`, ev, t, 'Resolves on the official announcement.', 'annual'),
      };
    }
    default:
      return undefined;
  }
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function polyIds(rng: Rng, slug: string, eventSlug: string, yes: string, no: string, tick = '0.01'): Record<string, string> {
  return {
    condition_id: `0x${rng.hex(64)}`,
    yes_token: rng.digits(77),
    no_token: rng.digits(77),
    slug,
    event_slug: eventSlug,
    event_id: rng.digits(5),
    gamma_id: rng.digits(6),
    question_id: `0x${rng.hex(64)}`,
    tick_size: tick,
    neg_risk: 'false',
    outcome_yes: yes,
    outcome_no: no,
  };
}

function polymarket(prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  const e = prop.event;
  const lg = meta.league;
  const base = { inverted: false, category: category(e), tick: 100 };
  if (lg && e.home && e.away) {
    const tags = ['Sports', lg.league, 'Games'];
    const game = matchup(e, ' vs. ', (t) => t.nick);
    const prefix = lg.esports ? `${lg.league === 'LOL' ? 'LoL' : 'Counter-Strike'}: ` : '';
    const gameTitle = lg.esports ? `${prefix}${matchup(e, ' vs ', (t) => t.name)} (BO3)` : game;
    const es = `${lg.league.toLowerCase()}-${e.away.abbr.toLowerCase()}-${e.home.abbr.toLowerCase()}-${isoDay(e.startTime)}`;
    switch (meta.kind) {
      case 'ml': {
        if (lg.draws) {
          const team = prop.team!;
          return {
            ...base,
            tags,
            id: '',
            title: `Will ${team.name} win on ${isoDay(e.startTime)}?`,
            eventTitle: matchup(e, ' vs. ', (t) => t.name),
            outcome: 'Yes',
            ids: polyIds(rng, `${es}-${team.abbr.toLowerCase()}`, es, 'Yes', 'No'),
          };
        }
        // One market per game; YES token = the first-named (away) team, as Polymarket lists it.
        if (prop.side !== 'away') return undefined;
        const title = lg.esports ? gameTitle : game;
        return {
          ...base,
          tags,
          id: '',
          title,
          eventTitle: title,
          outcome: e.away.name === e.away.nick ? e.away.nick : lg.esports ? e.away.name : e.away.nick,
          ids: polyIds(rng, es, es, lg.esports ? e.away.name : e.away.nick, lg.esports ? e.home.name : e.home.nick),
        };
      }
      case 'draw':
        return {
          ...base,
          tags,
          id: '',
          title: `Will ${matchup(e, ' vs. ', (t) => t.name)} end in a draw?`,
          eventTitle: matchup(e, ' vs. ', (t) => t.name),
          outcome: 'Yes',
          ids: polyIds(rng, `${es}-draw`, es, 'Yes', 'No'),
        };
      case 'ml1h': {
        if (prop.side !== 'away' || !['NFL', 'NBA'].includes(lg.league)) return undefined;
        return {
          ...base,
          tags,
          id: '',
          title: `${game}: 1H Moneyline`,
          eventTitle: game,
          outcome: e.away.nick,
          ids: polyIds(rng, `${es}-1h-moneyline`, es, e.away.nick, e.home.nick),
        };
      }
      case 'spread': {
        const line = Math.abs(prop.line!);
        const fav = prop.team!;
        const dog = fav === e.home ? e.away : e.home;
        const name = (t: SimTeam): string => (lg.esports ? t.name : t.nick);
        if (lg.esports) {
          return {
            ...base,
            tags,
            id: '',
            title: `Map Handicap: ${name(fav)} (-${line}) vs ${name(dog)} (+${line})`,
            eventTitle: gameTitle,
            outcome: name(fav),
            ids: polyIds(rng, `${es}-map-handicap`, es, name(fav), name(dog)),
          };
        }
        // Half of the spreads are listed from the underdog's side: the same market, YES inverted.
        if (rng.chance(0.5)) {
          return {
            ...base,
            inverted: true,
            tags,
            id: '',
            title: `Spread: ${name(dog)} (+${line})`,
            eventTitle: game,
            outcome: name(dog),
            ids: polyIds(rng, `${es}-spread-away-${String(line).replace('.', 'pt')}`, es, name(dog), name(fav)),
          };
        }
        return {
          ...base,
          tags,
          id: '',
          title: `Spread: ${name(fav)} (-${line})`,
          eventTitle: game,
          outcome: name(fav),
          ids: polyIds(rng, `${es}-spread-home-${String(line).replace('.', 'pt')}`, es, name(fav), name(dog)),
        };
      }
      case 'total':
        return {
          ...base,
          tags,
          id: '',
          title: lg.esports ? `${gameTitle}: Games Total O/U ${prop.line}` : `${game}: O/U ${prop.line}`,
          eventTitle: lg.esports ? gameTitle : game,
          outcome: 'Over',
          ids: polyIds(rng, `${es}-total-${String(prop.line).replace('.', 'pt')}`, es, 'Over', 'Under'),
        };
      case 'player': {
        const stat = String(meta.extra?.['stat'] ?? '');
        const label = stat.split(' ').map(cap).join(' ');
        return {
          ...base,
          tags,
          id: '',
          title: `${prop.player}: ${label} O/U ${prop.line}`,
          eventTitle: game,
          outcome: 'Over',
          ids: polyIds(rng, `${es}-${slugify(prop.player!)}-${slugify(stat)}-${String(prop.line).replace('.', 'pt')}`, es, 'Over', 'Under'),
        };
      }
      case 'map1':
        return {
          ...base,
          tags,
          id: '',
          title: `${prefix}${matchup(e, ' vs ', (t) => t.name)} - Game 1 Winner`,
          eventTitle: gameTitle,
          outcome: e.away.name,
          ids: polyIds(rng, `${es}-game1`, es, e.away.name, e.home.name),
        };
      default:
        return undefined;
    }
  }
  const yn = (slug: string, eventSlug: string, tick = '0.01'): Record<string, string> => polyIds(rng, slug, eventSlug, 'Yes', 'No', tick);
  switch (meta.kind) {
    case 'champ': {
      const c = lg!.champ!;
      const year = Number(meta.extra?.['year']);
      const ev = c.poly === 'World Series' ? `MLB World Series Champion ${year}` : `${c.poly.replace(' league championship', '')} Champion ${year}`;
      const title =
        c.poly === 'World Series' ? `Will the ${prop.team!.name} win the ${year} World Series?` : `Will the ${prop.team!.name} win the ${year} ${c.poly}?`;
      return { ...base, tags: ['Sports', lg!.league], id: '', title, eventTitle: ev, outcome: 'Yes', ids: yn(slugify(title), slugify(ev)) };
    }
    case 'worldcup': {
      const title = `Will ${meta.name} win the 2026 FIFA World Cup?`;
      return {
        ...base,
        tags: ['Sports', 'Soccer'],
        id: '',
        title,
        eventTitle: '2026 FIFA World Cup Winner',
        outcome: 'Yes',
        ids: yn(slugify(title), '2026-fifa-world-cup-winner'),
      };
    }
    case 'race': {
      const title = String(meta.extra?.['polyTitle']);
      return {
        ...base,
        tags: ['Politics', 'Elections'],
        id: '',
        title,
        eventTitle: String(meta.extra?.['polyEvent']),
        outcome: 'Yes',
        ids: { ...yn(slugify(title), slugify(String(meta.extra?.['polyEvent']))), neg_risk: 'true' },
      };
    }
    case 'fed': {
      const d = new Date(e.closeTime);
      const when = `${MONTH[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
      const title =
        meta.code === 'H0'
          ? `Will there be no change in Fed interest rates after the ${when} meeting?`
          : `Will the Fed ${meta.extra?.['poly']} after the ${when} meeting?`;
      return {
        ...base,
        tags: ['Economics', 'Fed'],
        id: '',
        title,
        eventTitle: `Fed decision in ${MONTH[d.getUTCMonth()]}?`,
        outcome: 'Yes',
        ids: yn(slugify(title), `fed-decision-in-${MONTH[d.getUTCMonth()]!.toLowerCase()}`),
      };
    }
    case 'cpi': {
      const m = Number(meta.extra?.['month']);
      const title = `Will annual inflation be above ${prop.line}% in ${MONTH[m]}?`;
      return {
        ...base,
        tags: ['Economics', 'Inflation'],
        id: '',
        title,
        eventTitle: `${MONTH[m]} inflation US - annual`,
        outcome: 'Yes',
        ids: yn(slugify(title), slugify(`${MONTH[m]} inflation us annual`)),
      };
    }
    case 'crypto_daily': {
      const d = new Date(e.closeTime);
      const title = `${meta.name} above ${money(prop.line!)} on ${MONTH[d.getUTCMonth()]} ${d.getUTCDate()}?`;
      return {
        ...base,
        tags: ['Crypto', meta.name!],
        id: '',
        title,
        eventTitle: `${meta.name} above ___ on ${MONTH[d.getUTCMonth()]} ${d.getUTCDate()}?`,
        outcome: 'Yes',
        ids: yn(slugify(title), slugify(`${meta.name} above on ${MONTH[d.getUTCMonth()]} ${d.getUTCDate()}`), '0.001'),
        tick: 10,
      };
    }
    case 'crypto_max': {
      const y = new Date(e.closeTime).getUTCFullYear() - 1;
      const title = `Will ${meta.name} reach $${money(prop.line!)} by December 31, ${y}?`;
      return {
        ...base,
        tags: ['Crypto', meta.name!],
        id: '',
        title,
        eventTitle: `What price will ${meta.name} hit in ${y}?`,
        outcome: 'Yes',
        ids: yn(slugify(title), slugify(`what price will ${meta.name} hit in ${y}`), '0.001'),
        tick: 10,
      };
    }
    case 'award': {
      const y = Number(meta.extra?.['year']);
      const title = `Will "${meta.name}" win ${meta.extra?.['category']} at the ${y} ${meta.extra?.['show']}?`;
      return {
        ...base,
        tags: ['Entertainment'],
        id: '',
        title,
        eventTitle: `${meta.extra?.['show']} ${y}: ${meta.extra?.['category']} Winner`,
        outcome: 'Yes',
        ids: yn(slugify(title), slugify(`${meta.extra?.['show']} ${y} ${meta.extra?.['category']} winner`)),
      };
    }
    default:
      return undefined;
  }
}

function polymarketUs(prop: SimProposition, meta: PropMeta): ListingSpec | undefined {
  const e = prop.event;
  const lg = meta.league;
  if (!lg || !e.home || !e.away || lg.esports) {
    if (meta.kind !== 'champ') return undefined;
    const c = lg!.champ!;
    const year = Number(meta.extra?.['year']);
    const slug = `${lg!.league.toLowerCase()}-champion-${year}-${prop.team!.abbr.toLowerCase()}`;
    return {
      id: slug,
      title: `${prop.team!.name} to win the ${year} ${c.poly}`,
      eventTitle: `${year} ${c.poly}`,
      outcome: prop.team!.name,
      inverted: false,
      category: 'Sports',
      tags: ['Sports', lg!.league],
      ids: { slug, event_slug: `${lg!.league.toLowerCase()}-champion-${year}` },
      tick: 100,
    };
  }
  const es = `aec-${lg.league.toLowerCase()}-${e.away.abbr.toLowerCase()}-${e.home.abbr.toLowerCase()}-${isoDay(e.startTime)}`;
  const game = matchup(e, ' vs. ', (t) => t.name);
  const base = { inverted: false, category: 'Sports', tags: ['Sports', lg.league], tick: 100 };
  switch (meta.kind) {
    case 'ml': {
      if (lg.draws) return undefined;
      const team = prop.team!;
      const slug = `${es}-${team.abbr.toLowerCase()}`;
      return { ...base, id: slug, title: `${game}: ${team.name} to win`, eventTitle: game, outcome: team.name, ids: { slug, event_slug: es } };
    }
    case 'spread': {
      const slug = `${es}-spread-${prop.team!.abbr.toLowerCase()}-${String(Math.abs(prop.line!)).replace('.', 'pt')}`;
      return {
        ...base,
        id: slug,
        title: `${game}: ${prop.team!.name} -${Math.abs(prop.line!)}`,
        eventTitle: game,
        outcome: prop.team!.name,
        ids: { slug, event_slug: es },
      };
    }
    case 'total': {
      const slug = `${es}-total-over-${String(prop.line).replace('.', 'pt')}`;
      return { ...base, id: slug, title: `${game}: Over ${prop.line}`, eventTitle: game, outcome: 'Over', ids: { slug, event_slug: es } };
    }
    default:
      return undefined;
  }
}

function predictit(prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  if (meta.kind !== 'race') return undefined;
  const market = String(meta.extra?.['predictitMarket']);
  const marketId = String(meta.extra?.['predictitMarketId']);
  const contractId = rng.digits(5);
  return {
    id: contractId,
    title: meta.name!,
    eventTitle: market,
    outcome: meta.name,
    inverted: false,
    category: 'Politics',
    tags: ['Politics'],
    ids: { market_id: marketId, contract_id: contractId, market_name: market, contract_name: meta.name!, short_name: meta.name!.split(' ').slice(-1)[0]! },
    tick: 100,
  };
}

function manifold(prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  const e = prop.event;
  const creator = rng.pick(['Manifold', 'JamesGrugett', 'SG', 'Joshua', 'Bayesian', 'mattyb']);
  if (meta.kind === 'race') {
    // Multi-answer market: one listing per answer, title = the clean outcome label (spec 2.3 rule 1).
    const contractId = String(meta.extra?.['manifoldContractId']);
    const question = String(meta.extra?.['manifoldQuestion']);
    const answerId = rng.hex(12);
    return {
      id: `${contractId}:${answerId}`,
      title: meta.name!,
      eventTitle: question,
      outcome: meta.name,
      inverted: false,
      category: 'Politics',
      tags: ['Politics'],
      ids: {
        id: `${contractId}:${answerId}`,
        contract_id: contractId,
        answer_id: answerId,
        answer_text: meta.name!,
        slug: slugify(question),
        creator_username: 'Manifold',
        question,
      },
      tick: 100,
    };
  }
  let question: string | undefined;
  if (meta.kind === 'worldcup') question = `Will ${meta.name} win the 2026 FIFA World Cup?`;
  else if (meta.kind === 'crypto_max') question = `Will ${meta.name} reach $${money(prop.line!)} by the end of ${new Date(e.closeTime).getUTCFullYear() - 1}?`;
  else if (meta.kind === 'award') question = `Will ${meta.name} win ${meta.extra?.['category']} at the ${meta.extra?.['year']} ${meta.extra?.['show']}?`;
  else if (meta.kind === 'champ' && meta.league?.league === 'NFL') question = `Will the ${prop.team!.name} win the ${meta.extra?.['year']} Super Bowl?`;
  if (!question) return undefined;
  const id = rng.hex(20);
  return {
    id,
    title: question,
    eventTitle: question,
    outcome: 'Yes',
    inverted: false,
    category: category(e),
    tags: [category(e)],
    ids: { id, slug: slugify(question), creator_username: creator, question },
    tick: 100,
  };
}

function exchange(venue: VenueConfig, prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  const e = prop.event;
  const lg = meta.league;
  const yesOnly = venue.capabilities.yesOnlyBook;
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
  if (lg && e.home && e.away) {
    if (lg.esports && sportsOnly === false) return undefined;
    const game = matchup(e, ' @ ', (t) => t.name);
    switch (meta.kind) {
      case 'ml':
        if (!sportsOnly && yesOnly) return undefined;
        return {
          ...base,
          tags: ['Sports', lg.league],
          id: outcomeId,
          title: sportsOnly ? prop.team!.name : `${prop.team!.name} to beat ${(prop.team === e.home ? e.away : e.home).name}`,
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
  if (sportsOnly) {
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
        title: `Fed ${MONTH[d.getUTCMonth()]} ${d.getUTCFullYear()}: ${meta.extra?.['kalshi']}`,
        eventTitle: `FOMC ${MONTH[d.getUTCMonth()]} ${d.getUTCFullYear()}`,
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
        title: `US CPI YoY above ${prop.line}% (${MONTH[Number(meta.extra?.['month'])]} ${meta.extra?.['year']})`,
        eventTitle: `US CPI ${MONTH[Number(meta.extra?.['month'])]} ${meta.extra?.['year']}`,
        outcome: 'Yes',
        ids: ids('Above'),
      };
    default:
      return undefined;
  }
}

export { slugify, isoDay };
