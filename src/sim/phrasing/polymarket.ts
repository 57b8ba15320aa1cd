import { MONTH_NAMES, type LeagueDef } from '../data.js';
import type { Rng } from '../rng.js';
import type { SimEvent, SimProposition, SimTeam } from '../types.js';
import type { ListingSpec, PropMeta } from './spec.js';
import { cap, category, isoDay, matchup, money, slugify } from './text.js';

/**
 * Polymarket phrasing: one market per game with the away team's token as YES (nicknames; full
 * names in esports), half the spreads listed from the underdog's side, questions for futures, and
 * random condition/token/event ids.
 */

interface Ctx {
  readonly prop: SimProposition;
  readonly meta: PropMeta;
  readonly rng: Rng;
  readonly base: { readonly inverted: boolean; readonly category: string; readonly tick: number };
}

interface GameCtx extends Ctx {
  readonly e: SimEvent & { readonly home: SimTeam; readonly away: SimTeam };
  readonly lg: LeagueDef;
  readonly tags: string[];
  /** "Lions vs. Chiefs" (nicknames). */
  readonly game: string;
  /** "LoL: " / "Counter-Strike: " in esports, else empty. */
  readonly prefix: string;
  /** The game's title: `game`, or in esports "<prefix>T1 vs Gen.G (BO3)". */
  readonly gameTitle: string;
  /** The event slug. */
  readonly es: string;
}

type Phraser<C> = (c: C) => ListingSpec | undefined;

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

/** A line as a slug part: 2.5 → "2pt5". */
const slugLine = (line: number | null): string => String(line).replace('.', 'pt');

/** Polymarket's listing of `prop`; undefined when Polymarket does not list it. */
export function polymarket(prop: SimProposition, meta: PropMeta, rng: Rng): ListingSpec | undefined {
  const e = prop.event;
  const lg = meta.league;
  const c: Ctx = { prop, meta, rng, base: { inverted: false, category: category(e), tick: 100 } };
  if (lg && e.home && e.away) {
    const game = matchup(e, ' vs. ', (t) => t.nick);
    const prefix = lg.esports ? `${lg.league === 'LOL' ? 'LoL' : 'Counter-Strike'}: ` : '';
    return GAME[meta.kind]?.({
      ...c,
      e: e as GameCtx['e'],
      lg,
      tags: ['Sports', lg.league, 'Games'],
      game,
      prefix,
      gameTitle: lg.esports ? `${prefix}${matchup(e, ' vs ', (t) => t.name)} (BO3)` : game,
      es: `${lg.league.toLowerCase()}-${e.away.abbr.toLowerCase()}-${e.home.abbr.toLowerCase()}-${isoDay(e.startTime)}`,
    });
  }
  return OTHER[meta.kind]?.(c);
}

const GAME: Partial<Record<PropMeta['kind'], Phraser<GameCtx>>> = {
  ml: ({ prop, rng, base, e, lg, tags, game, gameTitle, es }) => {
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
  },
  draw: ({ rng, base, e, tags, es }) => ({
    ...base,
    tags,
    id: '',
    title: `Will ${matchup(e, ' vs. ', (t) => t.name)} end in a draw?`,
    eventTitle: matchup(e, ' vs. ', (t) => t.name),
    outcome: 'Yes',
    ids: polyIds(rng, `${es}-draw`, es, 'Yes', 'No'),
  }),
  ml1h: ({ prop, rng, base, e, lg, tags, game, es }) => {
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
  },
  spread: ({ prop, rng, base, e, lg, tags, game, gameTitle, es }) => {
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
        ids: polyIds(rng, `${es}-spread-away-${slugLine(line)}`, es, name(dog), name(fav)),
      };
    }
    return {
      ...base,
      tags,
      id: '',
      title: `Spread: ${name(fav)} (-${line})`,
      eventTitle: game,
      outcome: name(fav),
      ids: polyIds(rng, `${es}-spread-home-${slugLine(line)}`, es, name(fav), name(dog)),
    };
  },
  total: ({ prop, rng, base, lg, tags, game, gameTitle, es }) => ({
    ...base,
    tags,
    id: '',
    title: lg.esports ? `${gameTitle}: Games Total O/U ${prop.line}` : `${game}: O/U ${prop.line}`,
    eventTitle: lg.esports ? gameTitle : game,
    outcome: 'Over',
    ids: polyIds(rng, `${es}-total-${slugLine(prop.line)}`, es, 'Over', 'Under'),
  }),
  player: ({ prop, meta, rng, base, tags, game, es }) => {
    const stat = String(meta.extra?.['stat'] ?? '');
    const label = stat.split(' ').map(cap).join(' ');
    return {
      ...base,
      tags,
      id: '',
      title: `${prop.player}: ${label} O/U ${prop.line}`,
      eventTitle: game,
      outcome: 'Over',
      ids: polyIds(rng, `${es}-${slugify(prop.player!)}-${slugify(stat)}-${slugLine(prop.line)}`, es, 'Over', 'Under'),
    };
  },
  map1: ({ rng, base, e, tags, prefix, gameTitle, es }) => ({
    ...base,
    tags,
    id: '',
    title: `${prefix}${matchup(e, ' vs ', (t) => t.name)} - Game 1 Winner`,
    eventTitle: gameTitle,
    outcome: e.away.name,
    ids: polyIds(rng, `${es}-game1`, es, e.away.name, e.home.name),
  }),
};

/** Yes/No token ids for a futures question. */
const yn = (rng: Rng, slug: string, eventSlug: string, tick = '0.01'): Record<string, string> => polyIds(rng, slug, eventSlug, 'Yes', 'No', tick);

const OTHER: Partial<Record<PropMeta['kind'], Phraser<Ctx>>> = {
  champ: ({ prop, meta, rng, base }) => {
    const lg = meta.league!;
    const c = lg.champ!;
    const year = Number(meta.extra?.['year']);
    const ev = c.poly === 'World Series' ? `MLB World Series Champion ${year}` : `${c.poly.replace(' league championship', '')} Champion ${year}`;
    const title =
      c.poly === 'World Series' ? `Will the ${prop.team!.name} win the ${year} World Series?` : `Will the ${prop.team!.name} win the ${year} ${c.poly}?`;
    return { ...base, tags: ['Sports', lg.league], id: '', title, eventTitle: ev, outcome: 'Yes', ids: yn(rng, slugify(title), slugify(ev)) };
  },
  worldcup: ({ meta, rng, base }) => {
    const title = `Will ${meta.name} win the 2026 FIFA World Cup?`;
    return {
      ...base,
      tags: ['Sports', 'Soccer'],
      id: '',
      title,
      eventTitle: '2026 FIFA World Cup Winner',
      outcome: 'Yes',
      ids: yn(rng, slugify(title), '2026-fifa-world-cup-winner'),
    };
  },
  race: ({ meta, rng, base }) => {
    const title = String(meta.extra?.['polyTitle']);
    return {
      ...base,
      tags: ['Politics', 'Elections'],
      id: '',
      title,
      eventTitle: String(meta.extra?.['polyEvent']),
      outcome: 'Yes',
      ids: { ...yn(rng, slugify(title), slugify(String(meta.extra?.['polyEvent']))), neg_risk: 'true' },
    };
  },
  fed: ({ prop, meta, rng, base }) => {
    const d = new Date(prop.event.closeTime);
    const when = `${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
    const title =
      meta.code === 'H0'
        ? `Will there be no change in Fed interest rates after the ${when} meeting?`
        : `Will the Fed ${meta.extra?.['poly']} after the ${when} meeting?`;
    return {
      ...base,
      tags: ['Economics', 'Fed'],
      id: '',
      title,
      eventTitle: `Fed decision in ${MONTH_NAMES[d.getUTCMonth()]}?`,
      outcome: 'Yes',
      ids: yn(rng, slugify(title), `fed-decision-in-${MONTH_NAMES[d.getUTCMonth()]!.toLowerCase()}`),
    };
  },
  cpi: ({ prop, meta, rng, base }) => {
    const m = Number(meta.extra?.['month']);
    const title = `Will annual inflation be above ${prop.line}% in ${MONTH_NAMES[m]}?`;
    return {
      ...base,
      tags: ['Economics', 'Inflation'],
      id: '',
      title,
      eventTitle: `${MONTH_NAMES[m]} inflation US - annual`,
      outcome: 'Yes',
      ids: yn(rng, slugify(title), slugify(`${MONTH_NAMES[m]} inflation us annual`)),
    };
  },
  crypto_daily: ({ prop, meta, rng, base }) => {
    const d = new Date(prop.event.closeTime);
    const day = `${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCDate()}`;
    const title = `${meta.name} above ${money(prop.line!)} on ${day}?`;
    return {
      ...base,
      tags: ['Crypto', meta.name!],
      id: '',
      title,
      eventTitle: `${meta.name} above ___ on ${day}?`,
      outcome: 'Yes',
      ids: yn(rng, slugify(title), slugify(`${meta.name} above on ${day}`), '0.001'),
      tick: 10,
    };
  },
  crypto_max: ({ prop, meta, rng, base }) => {
    const y = new Date(prop.event.closeTime).getUTCFullYear() - 1;
    const title = `Will ${meta.name} reach $${money(prop.line!)} by December 31, ${y}?`;
    return {
      ...base,
      tags: ['Crypto', meta.name!],
      id: '',
      title,
      eventTitle: `What price will ${meta.name} hit in ${y}?`,
      outcome: 'Yes',
      ids: yn(rng, slugify(title), slugify(`what price will ${meta.name} hit in ${y}`), '0.001'),
      tick: 10,
    };
  },
  award: ({ meta, rng, base }) => {
    const y = Number(meta.extra?.['year']);
    const title = `Will "${meta.name}" win ${meta.extra?.['category']} at the ${y} ${meta.extra?.['show']}?`;
    return {
      ...base,
      tags: ['Entertainment'],
      id: '',
      title,
      eventTitle: `${meta.extra?.['show']} ${y}: ${meta.extra?.['category']} Winner`,
      outcome: 'Yes',
      ids: yn(rng, slugify(title), slugify(`${meta.extra?.['show']} ${y} ${meta.extra?.['category']} winner`)),
    };
  },
};
