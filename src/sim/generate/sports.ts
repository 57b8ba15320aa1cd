import { LEAGUES, WORLD_CUP, type LeagueDef } from '../data.js';
import type { SimEvent, SimTeam } from '../types.js';
import { DAY, HOUR, type WorldBuilder } from './builder.js';

/**
 * Per league: `6 × scale` games around the anchor, then its championship. The games fall on eight
 * days, or on `0.8 × scale` days in a larger world, so that a day holds about as many games of a
 * league at any scale (a venue's ids for a game are per matchup and day: more games on the same
 * days would collide, and the world would grow less than linearly).
 */
export function leagues(b: WorldBuilder, scale: number): void {
  const days = Math.max(8, Math.round(0.8 * scale));
  for (const lg of LEAGUES) {
    const games = Math.max(1, Math.round(3 * scale));
    for (let g = 0; g < games * 2; g++) game(b, lg, g, days);
    if (lg.champ) championship(b, lg);
  }
}

/** The 2026 FIFA World Cup winner: one proposition per country. */
export function worldCup(b: WorldBuilder): void {
  const wc = b.event({
    id: b.eventId(),
    category: 'sports',
    title: '2026 FIFA World Cup',
    sport: 'soccer',
    league: 'FIFA',
    startTime: Date.UTC(2026, 5, 11),
    closeTime: Date.UTC(2026, 6, 20),
    futures: true,
  });
  for (const [country, c2, , fair] of WORLD_CUP) {
    b.prop(
      wc,
      {
        marketClass: null,
        marketType: 'tournament_winner',
        period: null,
        line: null,
        side: null,
        subject: country,
        statement: `${country} win the 2026 FIFA World Cup`,
        fair,
      },
      { kind: 'worldcup', code: c2, name: country },
    );
  }
}

/** Game `g` of a league: two random teams, on one of `days` days from the day before the anchor. */
function game(b: WorldBuilder, lg: LeagueDef, g: number, days: number): void {
  const rng = b.rng;
  const teams = rng.shuffle(lg.teams);
  const home = teams[0]!;
  const away = teams[1]!;
  const start = b.anchor + ((g % days) - 1) * DAY + rng.int(0, 23) * HOUR + rng.pick([0, 30]) * 60_000;
  const ev = b.event({
    id: b.eventId(),
    category: 'sports',
    title: `${away.name} at ${home.name}`,
    sport: lg.sport,
    league: lg.league,
    home,
    away,
    startTime: start,
    closeTime: start + 4 * HOUR,
    futures: false,
  });
  const pHome = rng.int(2500, 7500);
  moneylines(b, ev, lg, home, away, pHome);
  if (!lg.esports && !lg.draws) halftime(b, ev, lg, home, away, pHome);
  spreadAndTotal(b, ev, lg, home, away, pHome);
  if (lg.esports) firstMap(b, ev, lg, away, pHome);
  playerProps(b, ev, lg, home, away);
}

/**
 * Championships of later seasons for a larger world (`sim.scale`): one more season per 10 units of
 * scale past 1, so futures grow with the world. Nothing at scale below 11, which keeps the default
 * world as it was.
 */
export function laterSeasons(b: WorldBuilder, scale: number): void {
  const seasons = Math.floor((scale - 1) / 10);
  for (let k = 1; k <= seasons; k++) for (const lg of LEAGUES) if (lg.champ) championship(b, lg, k);
}

/** The championship winner of the season `ahead` years from this one: one proposition per team. */
function championship(b: WorldBuilder, lg: LeagueDef, ahead = 0): void {
  const champ = lg.champ!;
  const cy = new Date(b.anchor).getUTCFullYear() + ahead;
  const ev = b.event({
    id: b.eventId(),
    category: 'sports',
    title: `${cy} ${champ.poly}`,
    sport: lg.sport,
    league: lg.league,
    startTime: b.anchor + (120 + 365 * ahead) * DAY,
    closeTime: b.anchor + (200 + 365 * ahead) * DAY,
    futures: true,
  });
  const fairs = lg.teams.map(() => b.rng.int(200, 1800));
  lg.teams.forEach((t, i) => {
    b.prop(
      ev,
      {
        marketClass: null,
        marketType: 'championship_winner',
        period: null,
        line: null,
        side: null,
        team: t,
        subject: t.name,
        statement: `${t.name} win the ${cy} ${champ.poly}`,
        fair: fairs[i]!,
      },
      { league: lg, kind: 'champ', extra: { year: cy } },
    );
  });
}

/** Home and away to win; where draws happen a draw too, else the two are complements. */
function moneylines(b: WorldBuilder, ev: SimEvent, lg: LeagueDef, home: SimTeam, away: SimTeam, pHome: number): void {
  const draw = lg.draws ? b.rng.int(2000, 2800) : 0;
  const homeFair = lg.draws ? Math.round((10_000 - draw) * (pHome / 10_000)) : pHome;
  const ml = (team: SimTeam, other: SimTeam, side: 'home' | 'away', fair: number) =>
    b.prop(
      ev,
      {
        marketClass: 'moneyline',
        marketType: 'moneyline',
        period: 'full',
        line: null,
        side,
        team,
        subject: team.name,
        statement: `${team.name} beat ${other.name}`,
        fair,
      },
      { league: lg, kind: 'ml' },
    );
  const mlHome = ml(home, away, 'home', homeFair);
  const mlAway = ml(away, home, 'away', 10_000 - homeFair - draw);
  if (!lg.draws) {
    b.complements(mlHome, mlAway);
    return;
  }
  b.prop(
    ev,
    {
      marketClass: 'moneyline',
      marketType: 'draw',
      period: 'full',
      line: null,
      side: null,
      subject: 'Draw',
      statement: `${home.name} and ${away.name} draw`,
      fair: draw,
    },
    { league: lg, kind: 'draw' },
  );
}

/** Who leads at halftime (no draws, no esports): complements. */
function halftime(b: WorldBuilder, ev: SimEvent, lg: LeagueDef, home: SimTeam, away: SimTeam, pHome: number): void {
  const lead = (team: SimTeam, other: SimTeam, side: 'home' | 'away', fair: number) =>
    b.prop(
      ev,
      {
        marketClass: 'moneyline',
        marketType: 'moneyline',
        period: '1H',
        line: null,
        side,
        team,
        subject: team.name,
        statement: `${team.name} lead ${other.name} at halftime`,
        fair,
      },
      { league: lg, kind: 'ml1h' },
    );
  const h1 = lead(home, away, 'home', pHome);
  const a1 = lead(away, home, 'away', 10_000 - pHome);
  b.complements(h1, a1);
}

/** The favourite's spread (a map handicap in esports) and the over of the total. */
function spreadAndTotal(b: WorldBuilder, ev: SimEvent, lg: LeagueDef, home: SimTeam, away: SimTeam, pHome: number): void {
  const rng = b.rng;
  const cls = lg.esports;
  const s = rng.pick(lg.spreads);
  const fav = pHome >= 5000 ? home : away;
  b.prop(
    ev,
    {
      marketClass: 'spread',
      marketType: cls ? 'map_handicap' : 'spread',
      period: 'full',
      line: -s,
      side: fav === home ? 'home' : 'away',
      team: fav,
      subject: fav.name,
      statement: `${fav.name} win by more than ${s} ${lg.unit}`,
      fair: rng.int(4000, 6000),
    },
    { league: lg, kind: 'spread' },
  );
  const total = lg.total + (cls ? 0 : rng.pick([-1, 0, 1]) * (lg.total > 20 ? 3 : 1));
  b.prop(
    ev,
    {
      marketClass: 'total',
      marketType: cls ? 'total_maps' : 'total',
      period: 'full',
      line: total,
      side: 'over',
      subject: `${away.name} at ${home.name}`,
      statement: `more than ${total} ${lg.unit}`,
      fair: rng.int(4200, 5800),
    },
    { league: lg, kind: 'total' },
  );
}

/** Esports: the away side wins map 1. */
function firstMap(b: WorldBuilder, ev: SimEvent, lg: LeagueDef, away: SimTeam, pHome: number): void {
  b.prop(
    ev,
    {
      marketClass: 'other',
      marketType: 'map_winner',
      period: null,
      line: null,
      side: 'away',
      team: away,
      subject: away.name,
      statement: `${away.name} win map 1`,
      fair: 10_000 - pHome,
    },
    { league: lg, kind: 'map1' },
  );
}

/** The league's player lines for players of either team. */
function playerProps(b: WorldBuilder, ev: SimEvent, lg: LeagueDef, home: SimTeam, away: SimTeam): void {
  for (const [abbr, player, stat, line] of lg.players ?? []) {
    if (abbr !== home.abbr && abbr !== away.abbr) continue;
    const team = abbr === home.abbr ? home : away;
    b.prop(
      ev,
      {
        marketClass: 'player_prop',
        marketType: `player_${stat.replace(/ /g, '_')}`,
        period: 'full',
        line,
        side: 'over',
        player,
        team,
        subject: player,
        statement: `${player} over ${line} ${stat}`,
        fair: b.rng.int(4000, 6000),
      },
      { league: lg, kind: 'player', extra: { stat } },
    );
  }
}
