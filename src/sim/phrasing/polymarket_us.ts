import type { SimProposition } from '../types.js';
import type { ListingSpec, PropMeta } from './spec.js';
import { isoDay, matchup } from './text.js';

/** Polymarket US phrasing: sports only, slugs as ids, "<game>: <team> to win" titles. */
export function polymarketUs(prop: SimProposition, meta: PropMeta): ListingSpec | undefined {
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
