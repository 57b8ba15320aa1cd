import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import type { ServedGroup } from '../../matching/service.js';
import { jsonReply } from '../../server/http.js';
import { CLASSES, typesMatch, type Cls, type MatchingRoutes } from './shared.js';
import { count, MatchGroup, strOrNull } from '../../views/schemas.js';

/** The 200 body of /matching-markets/sports. */
export const SportsGames = z.object({
  games: z.array(
    z.object({
      event_id: z.string(),
      event_name: strOrNull('event name'),
      game_title: strOrNull('game title'),
      event_date: strOrNull('game day, YYYY-MM-DD'),
      groups: z.array(MatchGroup),
    }),
  ),
  _meta: z.object({ sport: z.string(), date: z.string().describe('YYYY-MM-DD'), count: count('games') }),
});

/** /matching-markets/sports: matched game markets of a league or sport on a date, grouped by game. */
export function registerMatchingSports(api: Api, r: MatchingRoutes): void {
  const venues = r.ctx.venues;
  api.route({
    path: '/matching-markets/sports',
    summary: 'Matched game markets of a sport (league) on a date, grouped by game',
    tags: ['matching'],
    group: 'matched_markets',
    response: SportsGames,
    query: z.object({
      sport: p.string({ required: true, max: 40, description: 'league identifier such as nfl, nba, epl, or a sport such as football' }),
      date: p.date({ description: 'YYYY-MM-DD (US Eastern game day), default today' }),
      platforms: p.list({ values: venues.slugs(), description: 'only legs on these venues (groups need two)' }),
      types: p.list({ values: CLASSES, allowAll: true, description: 'market_class values or all; default moneyline' }),
    }),
    handler: (c) => {
      const q = c.query;
      const date = q.date ?? new Date().toISOString().slice(0, 10);
      const plat = Array.isArray(q.platforms) ? new Set(q.platforms) : undefined;
      const games = gamesOf(r, q.sport!.toLowerCase(), date, q.types ?? ['moneyline'], plat);
      const out = [...games.entries()].map(([event_id, gs]) => ({
        event_id,
        event_name: gs[0]!.event_name,
        game_title: gs[0]!.game_title,
        event_date: gs[0]!.event_date,
        groups: gs.map((g) => {
          const j = r.views.group(g);
          if (plat) j['markets'] = (j['markets'] as { platform: string }[]).filter((l) => plat.has(l.platform));
          return j;
        }),
      }));
      return jsonReply({ games: out, _meta: { sport: q.sport, date, count: out.length } });
    },
  });
}

/**
 * The groups of a sport's games on a date, by event: groups of `types` whose first member's
 * league or sport is `sport`, with legs on at least two of `plat` when given.
 */
function gamesOf(r: MatchingRoutes, sport: string, date: string, types: Cls[] | 'all', plat: ReadonlySet<string> | undefined): Map<string, ServedGroup[]> {
  const games = new Map<string, ServedGroup[]>();
  for (const g of r.matching.served()) {
    if (!g.market_class || g.event_date !== date || !typesMatch(g, types)) continue;
    const prop = r.matching.matcher.propositionOf(g.members[0]!.key);
    const league = prop?.league?.toLowerCase();
    const sp = prop?.sport?.toLowerCase();
    if (league !== sport && sp !== sport) continue;
    if (
      plat &&
      g.members
        .filter((m) => plat.has(r.ctx.venues.slugOf(m.platform)))
        .map((m) => m.platform)
        .filter((x, i, a) => a.indexOf(x) === i).length < 2
    )
      continue;
    const key = g.event_id ?? g.eventKey;
    const list = games.get(key);
    if (list) list.push(g);
    else games.set(key, [g]);
  }
  return games;
}
