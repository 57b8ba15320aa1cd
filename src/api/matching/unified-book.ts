import { z } from 'zod';
import type { Api } from '../../access/api.js';
import { p } from '../../access/params.js';
import { PAYOUT, toCents, UNITS_PER_CENT } from '../../core/price.js';
import type { MatchingService, ServedGroup } from '../../matching/service.js';
import { errorReply, jsonReply, type Reply } from '../../server/http.js';
import type { EngineState } from '../../state/engine.js';
import { AS_OF_DOC, AS_OF_STOPPED, asOfParam, isReply, marketRef, stateAsOf } from '../as-of.js';
import { noCents } from '../../views/market.js';
import type { MatchingRoutes } from './shared.js';
import { asOfFields, asOfOf, cents, platform, strOrNull, time } from '../../views/schemas.js';

const level = z.object({ price: cents('price in the group’s terms'), size: z.number().describe('contracts'), platform, market_id: z.string() });
const side = z.object({ bids: z.array(level).describe('best first'), asks: z.array(level).describe('best first') });

/** The 200 body of /unified-orderbook. */
export const UnifiedBook = z.object({
  group_id: z.number().int(),
  title: z.string(),
  event: z.object({ event_id: z.string(), event_name: strOrNull('event name'), game_title: strOrNull('game title'), event_date: strOrNull('YYYY-MM-DD') }),
  outcome: z.string().describe('the group’s YES outcome'),
  outcomes: z.array(
    z.object({
      platform,
      market_id: z.string(),
      outcome: strOrNull('outcome'),
      title: z.string(),
      inverted: z.boolean().describe("the market's YES is the group's NO"),
    }),
  ),
  yes: side,
  no: side,
  timestamp: time('the moment of the state merged: as_of (the time of the read when no member has a book or quote yet)'),
  ...asOfFields('the latest change to a member’s book or quote'),
});

/** One level of the merged book: a venue's price (cents, group YES terms) and size. */
type Level = { price: number; size: number; platform: string; market_id: string };

/** /unified-orderbook: merged depth of a match group's venues in the group's YES terms. */
export function registerUnifiedOrderbook(api: Api, r: MatchingRoutes): void {
  api.route({
    path: '/unified-orderbook',
    summary: 'Merged depth of every venue of a match group, in the group’s YES terms (inverted members complemented)',
    tags: ['matching'],
    response: UnifiedBook,
    errors: {
      404: 'No such match group (code not_found)',
      409: 'The group has a confirmed office or year contradiction (code matching.contradiction)',
      503: AS_OF_STOPPED,
    },
    query: z.object({ group_id: p.int({ min: 1, max: 1e12, required: true }), depth: p.int({ min: 1, max: 200, default: 25 }), as_of: asOfParam() }),
    description: `as_of is the latest receive time of an event that changed a member's book or quote.${AS_OF_DOC}`,
    handler: (c): Reply | Promise<Reply> => {
      const g = r.matching.servedGroup(c.query.group_id!);
      if (!g) return errorReply(404, 'not_found', `no match group ${c.query.group_id}`);
      const contradiction = officeYearContradiction(r.matching, g);
      if (contradiction) return errorReply(409, 'matching.contradiction', `group ${g.group_id} has a confirmed contradiction: ${contradiction}`);
      const depth = c.query.depth;
      if (c.query.as_of === undefined) return unifiedReply(r, r.ctx.state, g, depth);
      const refs = g.members.flatMap((m) => {
        const rec = r.ctx.state.catalog.byKey(m.key);
        return rec ? [marketRef(r.ctx, rec.venue, rec.marketId)] : [];
      });
      return stateAsOf(r.ctx, c, c.query.as_of, refs).then((s) => (isReply(s) ? s : unifiedReply(r, s, g, depth)));
    },
  });
}

/** The /unified-orderbook reply of a group from `state` (the live one, or one rebuilt for as_of). */
function unifiedReply(r: MatchingRoutes, state: EngineState, g: ServedGroup, depth: number | undefined): Reply {
  const { bids, asks, outcomes, asOf } = merge(r, state, g, depth);
  // NO levels complement in integer units (100 − 48.1 in floating point is 51.900000000000006).
  const flip = (l: Level): Level => ({ ...l, price: noCents(Math.round(l.price * UNITS_PER_CENT))! });
  return jsonReply({
    group_id: g.group_id,
    title: g.title,
    event: { event_id: g.event_id ?? g.eventKey, event_name: g.event_name, game_title: g.game_title, event_date: g.event_date },
    outcome: g.title,
    outcomes,
    yes: { bids: bids.slice(0, depth), asks: asks.slice(0, depth) },
    no: {
      bids: asks.slice(0, depth).map(flip),
      asks: bids.slice(0, depth).map(flip),
    },
    timestamp: new Date(asOf || r.ctx.clock.now()).toISOString(),
    ...asOfOf(asOf),
  });
}

/** Every member's book (or top of book) in the group's YES terms, bids best first, asks best first. */
function merge(
  r: MatchingRoutes,
  state: EngineState,
  g: ServedGroup,
  depth: number | undefined,
): { bids: Level[]; asks: Level[]; outcomes: Record<string, unknown>[]; asOf: number } {
  const { venues } = r.ctx;
  let asOf = 0;
  const bids: Level[] = [];
  const asks: Level[] = [];
  const outcomes: Record<string, unknown>[] = [];
  for (const m of g.members) {
    // The catalog is today's (the rebuilt state holds books and quotes only).
    const rec = r.ctx.state.catalog.byKey(m.key);
    if (!rec) continue;
    const v = venues.byLabel.get(rec.venue)!;
    outcomes.push({ platform: v.slug, market_id: rec.marketId, outcome: rec.outcome ?? null, title: rec.title, inverted: m.inverted });
    const book = state.books.marketBook(rec.venue, rec.marketId, depth);
    const q = state.quotes.get(rec.venue, rec.marketId);
    asOf = Math.max(asOf, state.books.marketRecvTs(rec.venue, rec.marketId), q?.updatedAt ?? 0);
    const yb = book?.ready ? book.bids : q?.yesBid !== undefined ? [[q.yesBid, q.yesBidSize ?? 0] as const] : [];
    const ya = book?.ready ? book.asks : q?.yesAsk !== undefined ? [[q.yesAsk, q.yesAskSize ?? 0] as const] : [];
    // An inverted member's YES bid is a bid for the group's NO: an ask for the group's YES at 100 − p.
    const gb = m.inverted ? ya.map(([pr, s]) => [PAYOUT - pr, s] as const) : yb;
    const ga = m.inverted ? yb.map(([pr, s]) => [PAYOUT - pr, s] as const) : ya;
    for (const [pr, s] of gb) bids.push({ price: toCents(pr), size: s, platform: v.slug, market_id: rec.marketId });
    for (const [pr, s] of ga) asks.push({ price: toCents(pr), size: s, platform: v.slug, market_id: rec.marketId });
  }
  bids.sort((a, b) => b.price - a.price);
  asks.sort((a, b) => a.price - b.price);
  return { bids, asks, outcomes, asOf };
}

/** A confirmed election office or year contradiction between members (spec 4.11 → 409). */
function officeYearContradiction(matching: MatchingService, g: ServedGroup): string | undefined {
  const props = g.members.map((m) => matching.matcher.propositionOf(m.key)).filter((x) => x !== undefined);
  const offices = new Set(props.map((x) => x.office).filter((x) => x !== null));
  const years = new Set(
    props
      .filter((x) => x.office !== null)
      .map((x) => x.year)
      .filter((x) => x !== null),
  );
  if (offices.size > 1) return `offices ${[...offices].join(' vs ')}`;
  if (years.size > 1) return `years ${[...years].join(' vs ')}`;
  return undefined;
}
