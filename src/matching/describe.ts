/**
 * The spec 2.4 fields of a match group (title, market_class, line, side, event_id, …), derived from
 * the group's anchor proposition with the facts its other members add (a dated listing gives a
 * dateless one its game day; a two-team listing names the opponent). The words used (competition,
 * stage, office, comparator names) are data: `tables/phrasing.json`.
 */
import type { MarketClass, Proposition } from './proposition/index.js';
import PHRASING from './tables/phrasing.json' with { type: 'json' };
import { teamById } from './teams.js';
import { MONTH_NAMES } from './text.js';

/** Spec 2.4 match-group fields, member list excluded. */
export interface GroupFields {
  /** Sports titles carry no leading date. */
  readonly title: string;
  readonly market_class: MarketClass | null;
  readonly market_type: string;
  readonly period: string | null;
  readonly line: number | null;
  readonly side: 'home' | 'away' | 'over' | 'under' | null;
  readonly player: string | null;
  readonly team: string | null;
  /** All groups of one game share it. */
  readonly event_id: string | null;
  readonly event_name: string | null;
  readonly game_title: string | null;
  readonly event_date: string | null;
}

const GAME_KINDS = new Set(['game_winner', 'draw', 'spread', 'total', 'player_prop', 'map_winner']);

function name(id: string | null | undefined): string {
  if (!id) return '?';
  return teamById(id)?.name ?? id;
}

function code(id: string): string {
  return (teamById(id)?.code ?? id.slice(id.indexOf(':') + 1)).toLowerCase();
}

function fmtNum(n: number): string {
  return Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n);
}

function monthLabel(m: string | null): string {
  if (!m) return '?';
  const q = /^(\d{4})-Q(\d)$/.exec(m);
  if (q) return `Q${q[2]} ${q[1]}`;
  const [y, mo] = m.split('-');
  return `${MONTH_NAMES[Number(mo) - 1] ?? mo} ${y}`;
}

const CMP_WORD: Readonly<Record<string, string>> = PHRASING.comparators;

function fedLabel(p: Proposition): string {
  const v = p.threshold ?? 0;
  const mag = Math.abs(v);
  const dir = v < 0 ? 'cut' : 'hike';
  switch (p.comparator) {
    case '=':
      return v === 0 ? 'no change' : `${dir} ${mag} bps`;
    case '>=':
    case '<=':
      return `${dir} ${mag}+ bps`;
    case '>':
    case '<':
      return `${dir} more than ${mag} bps`;
    default:
      return `${p.comparator ?? ''} ${v} bps`;
  }
}

const PARTY: Readonly<Record<string, string>> = PHRASING.parties;
const OFFICE_ROLE: Readonly<Record<string, string>> = PHRASING.officeRoles;

function officeLabel(o: string | null): string {
  if (!o) return '?';
  if (o === 'president_us') return 'US presidential';
  if (o === 'vice_president_us') return 'US vice-presidential';
  const [role, where] = o.split('_');
  const roleName = OFFICE_ROLE[role ?? ''] ?? role;
  return `${(where ?? '').toUpperCase()} ${roleName}`;
}

const COMP_NAME: Readonly<Record<string, string>> = PHRASING.competitions;

const STAGE_NAME: Readonly<Record<string, string>> = PHRASING.stages;

interface Merged {
  readonly teams: readonly string[];
  readonly home: string | null;
  readonly away: string | null;
  readonly date: string | null;
  readonly league: string | null;
}

function merge(anchor: Proposition, others: readonly Proposition[]): Merged {
  const all = [anchor, ...others];
  const withBoth = all.find((p) => p.home && p.away);
  const teams = all.find((p) => p.teams.length === 2)?.teams ?? anchor.teams;
  const dated = all.find((p) => p.date && p.dateSource !== 'close_time') ?? all.find((p) => p.date);
  return {
    teams,
    home: withBoth?.home ?? null,
    away: withBoth?.away ?? null,
    date: dated?.date ?? null,
    league: all.find((p) => p.league)?.league ?? null,
  };
}

/**
 * Describes a group: `anchor` is a non-inverted member (its YES is the group's YES), `others` the
 * remaining members' propositions.
 */
export function describeGroup(anchor: Proposition, others: readonly Proposition[]): GroupFields {
  const p = anchor;
  if (GAME_KINDS.has(p.kind)) return describeGame(p, merge(p, others));
  const base = {
    market_class: null,
    market_type: p.market_type,
    period: null,
    line: null,
    side: null,
    player: null,
    team: p.team,
    game_title: null,
    event_date: null,
  };
  return { ...base, ...describeEvent(p, p.subjectName ?? '?', p.negated ? ' (No)' : '') };
}

/** The title and event of a group that is not about one game. */
interface EventFields {
  readonly title: string;
  readonly event_id: string | null;
  readonly event_name: string | null;
}

/** Title and event of a non-game proposition about `subj`; `no` marks a negated YES. */
function describeEvent(p: Proposition, subj: string, no: string): EventFields {
  switch (p.kind) {
    case 'championship':
    case 'tournament_winner':
    case 'group_winner':
    case 'stage_reach':
      return describeFuture(p, subj, no);
    case 'nomination': {
      const what = `${p.year ?? ''} ${PARTY[p.party ?? ''] ?? p.party} ${officeLabel(p.office).replace(/^US /, '')} nomination`.trim();
      return { title: `${subj} to win the ${what}${no}`, event_id: `nomination-${p.party}-${p.office}-${p.year ?? 'x'}`, event_name: what };
    }
    case 'appointment': {
      const office = p.office === 'fed_chair' ? 'Fed chair' : (p.office ?? '?');
      const act = p.stage === 'confirm' ? 'confirmed' : 'named';
      return { title: `${subj} to be ${act} as ${office}${no}`, event_id: `appointment-${p.office}-${p.stage}`, event_name: `${office} ${act}` };
    }
    case 'election_winner': {
      const what = `${p.year ?? ''} ${officeLabel(p.office)} election`.trim();
      return { title: `${subj} to win the ${what}${no}`, event_id: `election-${p.office}-${p.year ?? 'x'}`, event_name: what };
    }
    case 'fed_decision':
      return { title: `Fed ${monthLabel(p.month)} meeting: ${fedLabel(p)}${no}`, event_id: `fed-${p.month}`, event_name: `FOMC ${monthLabel(p.month)}` };
    case 'fed_rate':
      return {
        title: `Fed funds rate ${CMP_WORD[p.comparator ?? '='] ?? ''} ${p.threshold}% after ${monthLabel(p.month)}${no}`,
        event_id: `fed-${p.month}`,
        event_name: `FOMC ${monthLabel(p.month)}`,
      };
    case 'econ_threshold': {
      const v = p.comparator === 'range' ? `${p.threshold}% and ${p.thresholdHigh}%` : `${p.threshold}%`;
      // Another country's indicator is another event; a US one keeps the plain id.
      const ind = p.jurisdiction ? `${p.jurisdiction.toUpperCase()} ${p.market_type}` : p.market_type;
      return {
        title: `${ind} ${monthLabel(p.month)}: ${CMP_WORD[p.comparator ?? '='] ?? ''} ${v}${no}`,
        event_id: p.jurisdiction ? `${p.market_type}-${p.jurisdiction}-${p.month}` : `${p.market_type}-${p.month}`,
        event_name: `${ind} ${monthLabel(p.month)}`,
      };
    }
    case 'crypto_price':
      return describeCrypto(p, subj, no);
    case 'ipo':
      return {
        title: p.mode === 'first' ? `${subj} IPOs first${no}` : `${subj} IPO by ${p.date}${no}`,
        event_id: `ipo-${p.subject?.slice(4)}`,
        event_name: `${subj} IPO`,
      };
    case 'award':
      return {
        title: `${subj} to win ${p.stage} (${p.year ?? ''} ${p.competition})${no}`.replace('( ', '('),
        event_id: `${p.competition}-${p.year ?? 'x'}-${(p.stage ?? '').replace(/ /g, '-')}`,
        event_name: `${p.year ?? ''} ${p.competition}: ${p.stage}`.trim(),
      };
    default:
      return { title: subj, event_id: null, event_name: null };
  }
}

/** Championships, tournaments, groups and stages: "Seattle Seahawks to win the 2026 NFL Championship". */
function describeFuture(p: Proposition, subj: string, no: string): EventFields {
  const comp = COMP_NAME[p.competition ?? ''] ?? p.competition ?? '?';
  const year = p.year ? `${p.year} ` : '';
  let what: string;
  if (p.kind === 'group_winner') what = `win ${comp} ${p.stage?.replace('group_', 'Group ')}`;
  else if (p.kind === 'stage_reach') what = `reach the ${year}${comp} ${STAGE_NAME[p.stage ?? ''] ?? p.stage}`;
  else if (p.stage?.startsWith('conf_') || p.stage?.startsWith('div_')) what = `win the ${year}${p.stage.slice(p.stage.indexOf('_') + 1).replace(/_/g, ' ')}`;
  else what = `win the ${year}${comp}`;
  const eventId = `${(p.competition ?? 'x').toLowerCase()}-${p.year ?? 'x'}-${(p.stage ?? 'x').toLowerCase()}`;
  return {
    title: `${subj} to ${what}${no}`,
    event_id: eventId,
    event_name: `${year}${comp}${p.stage && p.stage !== 'winner' ? ` (${p.stage})` : ''}`,
  };
}

/** Crypto prices: "Bitcoin reaches $150,000 by 2026-12-31", "Bitcoin above $100,000 on 2026-01-09 at 12:00 ET". */
function describeCrypto(p: Proposition, subj: string, no: string): EventFields {
  const v = p.comparator === 'range' ? `$${fmtNum(p.threshold ?? 0)} and $${fmtNum(p.thresholdHigh ?? 0)}` : `$${fmtNum(p.threshold ?? 0)}`;
  const verb =
    p.mode === 'max_by'
      ? p.comparator === '>='
        ? 'reaches'
        : 'trades above'
      : p.mode === 'min_by'
        ? p.comparator === '<='
          ? 'dips to'
          : 'trades below'
        : `${CMP_WORD[p.comparator ?? '='] ?? ''}`;
  const when = p.mode === 'at' ? `on ${p.date}${p.time ? ` at ${p.time} ET` : ''}` : `by ${p.date}`;
  return {
    title: `${subj} ${verb} ${v} ${when}${no}`,
    event_id: `${p.subject?.slice(6).toLowerCase()}-${p.mode}-${p.date}`,
    event_name: `${subj} price ${p.mode === 'at' ? 'on' : 'by'} ${p.date}`,
  };
}

const STAT_LABEL: Readonly<Record<string, string>> = PHRASING.stats;

function describeGame(p: Proposition, g: Merged): GroupFields {
  const [t0, t1] = g.teams;
  const gameTitle = g.home && g.away ? `${name(g.away)} at ${name(g.home)}` : t0 && t1 ? `${name(t0)} vs ${name(t1)}` : t0 ? name(t0) : (p.subjectName ?? '?');
  const league = (g.league ?? p.league ?? 'x').toLowerCase();
  const pair = g.away && g.home ? [g.away, g.home] : [...g.teams].sort();
  const eventId = pair.length === 2 ? `${league}-${g.date ?? 'undated'}-${code(pair[0]!)}-${code(pair[1]!)}` : null;
  const period = p.period && p.period !== 'full' ? ` (${p.period})` : '';
  const side: GroupFields['side'] =
    p.kind === 'total' || p.kind === 'player_prop' ? p.side : p.subject && p.subject === g.home ? 'home' : p.subject && p.subject === g.away ? 'away' : p.side;
  const no = p.negated ? ' (No)' : '';
  let title: string;
  switch (p.kind) {
    case 'game_winner':
      title = `${gameTitle}: ${p.team ?? '?'} to win${period}`;
      break;
    case 'map_winner':
      title = `${gameTitle}: ${p.team ?? '?'} to win ${p.stage?.replace('map', 'map ') ?? 'map'}`;
      break;
    case 'draw':
      title = `${gameTitle}: draw${period}`;
      break;
    case 'spread':
      title = `${gameTitle}: ${p.team ?? '?'} ${signed(p.line ?? 0)}${p.market_type === 'map_handicap' ? ' maps' : ''}${period}`;
      break;
    case 'total':
      title = `${gameTitle}: ${p.side === 'under' ? 'Under' : 'Over'} ${p.line} ${p.stat ?? ''}${period}`.replace(/ +/g, ' ').trim();
      break;
    default:
      title = `${p.player ?? '?'}: ${p.side === 'under' ? 'Under' : 'Over'} ${p.line} ${STAT_LABEL[p.stat ?? ''] ?? (p.stat ?? '').replace(/_/g, ' ')}${period}`;
  }
  return {
    title: title + no,
    market_class: p.market_class,
    market_type: p.market_type,
    period: p.period,
    line: p.line,
    side,
    player: p.player,
    team: p.kind === 'total' || p.kind === 'draw' ? null : p.team,
    event_id: eventId,
    event_name: gameTitle,
    game_title: gameTitle,
    event_date: g.date,
  };
}
