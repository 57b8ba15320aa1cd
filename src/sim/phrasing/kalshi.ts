import { MONTH_CODES, MONTH_NAMES, MONTH_SHORT, type LeagueDef } from '../data.js';
import type { Rng } from '../rng.js';
import type { SimProposition } from '../types.js';
import type { ListingSpec, PropMeta } from './spec.js';
import { cap, category, kDate, matchup, money, slugify, uuid } from './text.js';

/**
 * Kalshi phrasing: tickers `<series>-<event>-<market>`, questions as titles, city names for teams
 * (full names where draws exist), and rules text per market.
 */

type Ids = (series: string, event: string, ticker: string, rules: string, frequency?: string) => Record<string, string>;

interface Ctx {
  readonly prop: SimProposition;
  readonly meta: PropMeta;
  readonly rng: Rng;
  readonly ids: Ids;
  readonly base: { readonly inverted: boolean; readonly category: string; readonly tick: number };
}

interface GameCtx extends Ctx {
  readonly lg: LeagueDef;
  /** The event ticker of the game in `series`. */
  readonly ev: (series: string) => string;
  readonly tags: string[];
  readonly gameTitle: string;
}

type Phraser<C> = (c: C) => ListingSpec | undefined;

/** Kalshi's listing of `prop`; undefined when Kalshi does not list it. */
export function kalshi(prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  const e = prop.event;
  const lg = meta.league;
  const ids: Ids = (series, event, ticker, rules, frequency = 'custom') => ({
    series_ticker: series,
    event_ticker: event,
    ticker,
    market_uuid: uuid(rng),
    rules_primary: rules,
    frequency,
    combo: 'false',
    fee_type: 'quadratic',
  });
  const c: Ctx = { prop, meta, rng, ids, base: { inverted: false, category: category(e), tick: 100 } };
  if (lg && e.home && e.away && !lg.esports) {
    const ev = (series: string): string => `${series}-${kDate(e.startTime)}${e.away!.abbr}${e.home!.abbr}`;
    const gameTitle = lg.draws ? matchup(e, ' vs ', (t) => t.name) : matchup(e, ' at ', (t) => t.city);
    return GAME[meta.kind]?.({ ...c, lg, ev, tags: ['Sports', lg.league], gameTitle });
  }
  return OTHER[meta.kind]?.(c);
}

const GAME: Partial<Record<PropMeta['kind'], Phraser<GameCtx>>> = {
  ml: ({ prop, lg, ev, tags, gameTitle, ids, base }) => {
    const s = `KX${lg.code}GAME`;
    const team = prop.team!;
    return {
      ...base,
      tags,
      id: `${ev(s)}-${team.abbr}`,
      title: `${gameTitle} Winner?`,
      eventTitle: gameTitle,
      seriesTitle: `${lg.league} Game`,
      outcome: lg.draws ? team.name : team.city,
      ids: ids(s, ev(s), `${ev(s)}-${team.abbr}`, `If ${team.name} wins the ${gameTitle} game, the market resolves to Yes.`),
    };
  },
  draw: ({ lg, ev, tags, gameTitle, ids, base }) => {
    const s = `KX${lg.code}GAME`;
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
  },
  ml1h: ({ prop, lg, ev, tags, gameTitle, ids, base }) => {
    if (!['NFL', 'NBA'].includes(lg.league)) return undefined;
    const s = `KX${lg.code}1HWINNER`;
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
  },
  spread: ({ prop, lg, ev, tags, gameTitle, ids, base }) => {
    const s = `KX${lg.code}SPREAD`;
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
  },
  total: ({ prop, lg, ev, tags, gameTitle, ids, base }) => {
    const s = `KX${lg.code}TOTAL`;
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
  },
  player: ({ prop, meta, lg, ev, tags, gameTitle, ids, base }) => {
    const stat = String(meta.extra?.['stat'] ?? '');
    const n = Math.ceil(prop.line!);
    const s = `KX${lg.code}${stat === 'receptions' ? 'REC' : stat === 'points' ? 'PTS' : stat.replace(/\W/g, '').slice(0, 4).toUpperCase()}`;
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
  },
};

const OTHER: Partial<Record<PropMeta['kind'], Phraser<Ctx>>> = {
  champ: ({ prop, meta, ids, base }) => {
    const lg = meta.league!;
    const c = lg.champ!;
    const yy = String(new Date(prop.event.closeTime).getUTCFullYear() % 100);
    const year = Number(meta.extra?.['year']);
    const t = `KX${c.code}-${yy}-${prop.team!.abbr}`;
    return {
      ...base,
      tags: ['Sports', lg.league],
      id: t,
      title: `Will ${prop.team!.city} win the ${year} ${c.kalshi}?`,
      eventTitle: `${year} ${c.kalshi} winner?`,
      outcome: prop.team!.city,
      ids: ids(`KX${c.code}`, `KX${c.code}-${yy}`, t, `If ${prop.team!.name} wins the ${year} ${c.kalshi}, the market resolves to Yes.`, 'annual'),
    };
  },
  worldcup: ({ meta, ids, base }) => {
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
  },
  race: ({ meta, ids, base }) => {
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
  },
  fed: ({ prop, meta, ids, base }) => {
    const d = new Date(prop.event.closeTime);
    const ev = `KXFEDDECISION-${String(d.getUTCFullYear() % 100)}${MONTH_CODES[d.getUTCMonth()]}`;
    const t = `${ev}-${meta.code}`;
    return {
      ...base,
      tags: ['Economics', 'Fed'],
      id: t,
      title: `Will the Federal Reserve ${meta.extra?.['kalshi']} at their ${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()} meeting?`,
      eventTitle: `Fed decision in ${MONTH_SHORT[d.getUTCMonth()]} ${d.getUTCFullYear()}?`,
      outcome: String(meta.extra?.['kalshi']),
      ids: ids('KXFEDDECISION', ev, t, 'Resolves on the FOMC target rate announcement.', 'custom'),
    };
  },
  cpi: ({ prop, meta, ids, base }) => {
    const m = Number(meta.extra?.['month']);
    const y = Number(meta.extra?.['year']);
    const ev = `KXCPIYOY-${y % 100}${MONTH_CODES[m]}`;
    const t = `${ev}-T${prop.line}`;
    return {
      ...base,
      tags: ['Economics', 'Inflation'],
      id: t,
      title: `Will the rate of CPI inflation be above ${prop.line}% for the year ending in ${MONTH_NAMES[m]} ${y}?`,
      eventTitle: `CPI year-over-year in ${MONTH_SHORT[m]} ${y}?`,
      outcome: `Above ${prop.line}%`,
      ids: ids('KXCPIYOY', ev, t, 'Resolves on the BLS CPI-U release.', 'monthly'),
    };
  },
  crypto_daily: ({ prop, meta, rng, ids, base }) => {
    const e = prop.event;
    const d = new Date(e.closeTime);
    const ev = `KX${meta.code}D-${kDate(e.closeTime)}17`;
    const strike = (prop.line! - 0.01).toFixed(2);
    const t = `${ev}-T${strike}`;
    // Some daily ladders are listed during the day, after the world starts.
    const created = rng.chance(0.3) ? rng.int(0, 20) * 3_600_000 : undefined;
    const title = `${meta.name} price on ${MONTH_SHORT[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()} at 5pm EST?`;
    return {
      ...base,
      tags: ['Crypto', meta.name!],
      id: t,
      title,
      eventTitle: title,
      outcome: `$${money(prop.line!)} or above`,
      ids: ids(`KX${meta.code}D`, ev, t, `If the ${meta.name} index is above ${strike} at 5pm EST, the market resolves to Yes.`, 'daily'),
      createdAt: created,
    };
  },
  crypto_max: ({ prop, meta, ids, base }) => {
    const y = new Date(prop.event.closeTime).getUTCFullYear() - 1;
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
  },
  award: ({ meta, ids, base }) => {
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
  },
};
