import MiniSearch from 'minisearch';
import { z } from 'zod';
import type { Api } from '../access/api.js';
import { exactlyOne, p } from '../access/params.js';
import type { VenueConfig } from '../config/schema.js';
import { PAYOUT, toCents, UNITS_PER_CENT } from '../core/price.js';
import type { MatchingService, ServedGroup } from '../matching/service.js';
import { errorReply, jsonReply } from '../server/http.js';
import type { MarketRecord } from '../state/catalog.js';
import type { QuoteRecord } from '../state/quotes.js';
import { decodeCursor, encodeCursor, type ApiContext } from './context.js';
import { cents, marketJson, noCents } from '../views/market.js';

const CLASSES = ['moneyline', 'spread', 'total', 'player_prop', 'other'] as const;
type Cls = (typeof CLASSES)[number];

/** An event as /events and /search serve it: every cross-venue group of one real-world event. */
interface EventRec {
  readonly event_id: string;
  readonly title: string;
  readonly event_type: string;
  readonly tags: string[];
  readonly date: string | null;
  readonly groups: ServedGroup[];
  /** All markets of the event are closed/settled, or its date has passed. */
  readonly completed: boolean;
}

/**
 * Matching endpoints (spec 4.2–4.4, 4.6, 4.7, 4.11): groups come from the MatchingService; events
 * gather the groups of one game/election/meeting; full-text search is MiniSearch over events and
 * their markets, rebuilt when the groups change.
 */
export function registerMatching(api: Api, ctx: ApiContext, matching: MatchingService): void {
  const state = ctx.state;
  const venues = ctx.venues;
  let events: EventRec[] = [];
  let eventById = new Map<string, EventRec>();
  let index: MiniSearch<{ id: string; title: string; text: string }> | undefined;
  let builtFor = -1;

  const rebuild = (): void => {
    if (builtFor === matching.version && index) return;
    const byEvent = new Map<string, ServedGroup[]>();
    for (const g of matching.served()) {
      const list = byEvent.get(g.eventKey);
      if (list) list.push(g);
      else byEvent.set(g.eventKey, [g]);
    }
    const now = Date.now();
    events = [];
    for (const [id, groups] of byEvent) {
      const recs = groups.flatMap((g) => g.members.map((m) => state.catalog.byKey(m.key))).filter((m): m is MarketRecord => m !== undefined);
      const first = groups[0]!;
      const title = first.event_name ?? first.game_title ?? recs.find((r) => r.eventTitle)?.eventTitle ?? first.title;
      const date = first.event_date ?? minDate(recs);
      const allClosed = recs.length > 0 && recs.every((r) => r.status !== 'active' && r.status !== 'initialized');
      const past = date !== null && Date.parse(`${date}T23:59:59Z`) < now - 86_400_000 && first.event_date !== null;
      events.push({
        event_id: id,
        title,
        event_type: (first.category ?? (first.market_class ? 'Sports' : 'Other')).toLowerCase(),
        tags: [...new Set(recs.flatMap((r) => r.tags ?? []))],
        date,
        groups: groups.sort((a, b) => a.group_id - b.group_id),
        completed: allClosed || past,
      });
    }
    events.sort((a, b) => ((a.date ?? '9999') < (b.date ?? '9999') ? -1 : (a.date ?? '9999') > (b.date ?? '9999') ? 1 : a.event_id < b.event_id ? -1 : 1));
    eventById = new Map(events.map((e) => [e.event_id, e]));
    index = new MiniSearch({ fields: ['title', 'text'], storeFields: ['id'], searchOptions: { boost: { title: 2 } } });
    index.addAll(
      events.map((e) => ({
        id: e.event_id,
        title: e.title,
        text: e.groups.map((g) => [g.title, ...g.members.map((m) => state.catalog.byKey(m.key)?.title ?? '')].join(' ')).join(' '),
      })),
    );
    builtFor = matching.version;
  };

  /** Searches events: short all-caps words (NFL, CPI, BTC) match only as whole words. */
  const searchEvents = (q: string): EventRec[] => {
    rebuild();
    const terms = q.split(/\s+/).filter(Boolean);
    const acronym = (t: string): boolean => /^[A-Z0-9]{2,5}$/.test(t);
    const hits = index!.search(q, {
      combineWith: 'AND',
      prefix: (term, i, all) => i === all.length - 1 && !terms.some((t) => acronym(t) && t.toLowerCase() === term) && term.length >= 3,
      fuzzy: (term) => (terms.some((t) => acronym(t) && t.toLowerCase() === term) || term.length < 5 ? false : 0.15),
    });
    return hits.map((h) => eventById.get(String(h.id))).filter((e): e is EventRec => e !== undefined);
  };

  const searchCache = new Map<string, { body: string; deps: [QuoteRecord, number][]; matching: number; catalog: number; quotes: number }>();

  /** The price-free part of a leg, rebuilt only when the market record changes (URLs and ids cost more than prices). */
  const legStatic = new Map<string, { at: number; ticker: string; url: string | null; status: string }>();

  const legJson = (
    key: string,
    inverted: boolean,
    confidence: number,
    reasons: readonly string[],
    withPrices: boolean,
  ): Record<string, unknown> | undefined => {
    const rec = state.catalog.byKey(key);
    if (!rec) return undefined;
    const v = venues.byLabel.get(rec.venue)!;
    let st = legStatic.get(key);
    if (!st || st.at !== rec.updatedAt) {
      const m = marketJson(v, rec, undefined);
      legStatic.set(key, (st = { at: rec.updatedAt, ticker: m.ticker_name, url: m.url, status: m.status }));
    }
    const leg: Record<string, unknown> = {
      platform: v.slug,
      market_id: rec.marketId,
      ticker_name: st.ticker,
      title: rec.title,
      event_title: rec.eventTitle ?? null,
      outcome: rec.outcome ?? null,
      status: st.status,
      inverted,
      confidence,
      reasons,
      url: st.url,
    };
    if (withPrices) {
      const q = state.quotes.get(rec.venue, rec.marketId);
      const m = marketJson(v, rec, q);
      Object.assign(leg, { yes_bid: m.yes_bid, yes_ask: m.yes_ask, no_bid: m.no_bid, no_ask: m.no_ask, last_price: m.last_price, volume: m.volume });
    }
    return leg;
  };

  const groupJson = (g: ServedGroup, withPrices = true): Record<string, unknown> => {
    const legs = g.members.map((m) => legJson(m.key, m.inverted, m.confidence, m.reasons, withPrices)).filter((x) => x !== undefined);
    const out: Record<string, unknown> = {
      group_id: g.group_id,
      title: g.title,
      market_class: g.market_class,
      market_type: g.market_type,
      period: g.period,
      line: g.line,
      side: g.side,
      player: g.player,
      team: g.team,
      event_id: g.event_id ?? g.eventKey,
      event_name: g.event_name,
      game_title: g.game_title,
      event_date: g.event_date,
    };
    for (const l of legs) if (l['url']) out[`market_url_${l['platform'] as string}`] ??= l['url'];
    out['markets'] = legs;
    return out;
  };

  const eventJson = (
    e: EventRec,
    includeGroups: boolean,
    types: Cls[] | 'all' | undefined,
    withPrices: boolean,
    searchPrices = false,
  ): Record<string, unknown> => {
    const groups = e.groups.filter((g) => typesMatch(g, types));
    const out: Record<string, unknown> = {
      event_id: e.event_id,
      title: e.title,
      event_type: e.event_type,
      status: e.completed ? 'completed' : 'active',
      tags: e.tags,
      date: e.date,
      group_count: groups.length,
    };
    if (includeGroups)
      out['groups'] = groups.map((g) => {
        const j = groupJson(g, withPrices && !searchPrices);
        if (withPrices && searchPrices) for (const leg of j['markets'] as Record<string, unknown>[]) Object.assign(leg, searchPrice(leg, e.completed));
        return j;
      });
    return out;
  };

  /** Spec 2.3 rule 3: mid of best YES bid and ask, null when a side is missing, wider than 20 cents, or the event completed. */
  const searchPrice = (leg: Record<string, unknown>, completed: boolean): Record<string, number | null> => {
    const rec = state.catalog.get(venues.bySlug.get(leg['platform'] as string)!.label, leg['market_id'] as string);
    const q = rec ? state.quotes.get(rec.venue, rec.marketId) : undefined;
    if (!rec || !q || completed || rec.status !== 'active') return { last_price: null, yes_bid: null, yes_ask: null };
    const bid = q.yesBid;
    const ask = q.yesAsk;
    const mid = bid !== undefined && ask !== undefined && ask - bid <= 2_000 ? toCents(Math.round((bid + ask) / 2)) : null;
    return { last_price: mid, yes_bid: cents(bid), yes_ask: cents(ask) };
  };

  const typesParam = p.list({ values: CLASSES, allowAll: true, description: 'market_class values, comma-separated, or all' });

  // ---- /matching-markets -------------------------------------------------------------------
  const venueA = venues.withCapability('catalog');
  const venueB = venues.withCapability('walletData');
  const aKey = `${venueA?.slug ?? 'venue_a'}_key`;
  const bKey = `${venueB?.slug ?? 'venue_b'}_key`;
  const mmQuery = z
    .object({
      q: p.string({ min: 3, max: 100, description: 'free text, 3 to 100 characters' }),
      [bKey]: p.string({ max: 300, description: `${venueB?.slug ?? 'venue_b'} condition id or market URL slug` }),
      [aKey]: p.string({ max: 200, description: `${venueA?.slug ?? 'venue_a'} full market ticker` }),
    })
    .superRefine(exactlyOne(['q', bKey, aKey]));

  const groupsOfRecords = (recs: Iterable<MarketRecord>): ServedGroup[] => {
    const ids = new Set<number>();
    for (const r of recs) {
      const id = matching.groupIdOf(r.venue, r.marketId);
      if (id !== undefined) ids.add(id);
    }
    return [...ids].sort((a, b) => a - b).map((id) => matching.servedGroup(id)!);
  };

  api.route({
    path: '/matching-markets',
    summary: 'Cross-venue match groups for a query, a venue_b key or a venue_a ticker (exactly one)',
    tags: ['matching'],
    group: 'matched_markets',
    query: mmQuery,
    responseDescription: '{groups: MatchGroup[], _meta: {count}}: only groups with markets on at least two venues',
    handler: (c) => {
      const q = c.query as Record<string, string | undefined>;
      let groups: ServedGroup[];
      if (q['q'] !== undefined) {
        groups = searchEvents(q['q']).flatMap((e) => e.groups);
      } else if (q[bKey] !== undefined && venueB) {
        const key = q[bKey]!;
        const recs = [...state.catalog.venue(venueB.label).values()].filter(
          (m) => m.marketId === key || m.extra?.['slug'] === key || m.extra?.['eventSlug'] === key || m.extra?.['event_slug'] === key,
        );
        groups = groupsOfRecords(recs);
      } else if (venueA) {
        const t = q[aKey]!;
        const m = state.catalog.get(venueA.label, t);
        groups = groupsOfRecords(m ? [m] : []);
      } else groups = [];
      return jsonReply({ groups: groups.map((g) => groupJson(g)), _meta: { count: groups.length } });
    },
  });

  // ---- /matching-markets/url ---------------------------------------------------------------
  api.route({
    path: '/matching-markets/url',
    summary: 'Match groups of a market page URL (hosts of the venues with the URL matcher, deep links included)',
    tags: ['matching'],
    group: 'matched_markets',
    query: z.object({ url: p.string({ required: true, max: 2000, description: 'market page URL' }) }),
    handler: (c) => {
      const raw = c.query.url!;
      const r = resolveUrl(ctx, raw);
      if ('error' in r) return errorReply(400, 'validation.invalid_url', `invalid parameter "url": ${r.error}`);
      const groups = groupsOfRecords(r.markets);
      return jsonReply({
        groups: groups.map((g) => groupJson(g)),
        _meta: { count: groups.length, platform: r.venue.slug, resolved: r.markets.map((m) => m.marketId) },
      });
    },
  });

  // ---- /matching-markets/sports ------------------------------------------------------------
  api.route({
    path: '/matching-markets/sports',
    summary: 'Matched game markets of a sport (league) on a date, grouped by game',
    tags: ['matching'],
    group: 'matched_markets',
    query: z.object({
      sport: p.string({ required: true, max: 40, description: 'league identifier such as nfl, nba, epl, or a sport such as football' }),
      date: p.date({ description: 'YYYY-MM-DD (US Eastern game day), default today' }),
      platforms: p.list({ values: venues.slugs(), description: 'only legs on these venues (groups need two)' }),
      types: p.list({ values: CLASSES, allowAll: true, description: 'market_class values or all; default moneyline' }),
    }),
    handler: (c) => {
      const q = c.query;
      const sport = q.sport!.toLowerCase();
      const date = q.date ?? new Date().toISOString().slice(0, 10);
      const types: Cls[] | 'all' = q.types ?? ['moneyline'];
      const plat = Array.isArray(q.platforms) ? new Set(q.platforms) : undefined;
      const games = new Map<string, ServedGroup[]>();
      for (const g of matching.served()) {
        if (!g.market_class || g.event_date !== date || !typesMatch(g, types)) continue;
        const prop = matching.matcher.propositionOf(g.members[0]!.key);
        const league = prop?.league?.toLowerCase();
        const sp = prop?.sport?.toLowerCase();
        if (league !== sport && sp !== sport) continue;
        if (
          plat &&
          g.members
            .filter((m) => plat.has(venues.slugOf(m.platform)))
            .map((m) => m.platform)
            .filter((x, i, a) => a.indexOf(x) === i).length < 2
        )
          continue;
        const key = g.event_id ?? g.eventKey;
        const list = games.get(key);
        if (list) list.push(g);
        else games.set(key, [g]);
      }
      const out = [...games.entries()].map(([event_id, gs]) => ({
        event_id,
        event_name: gs[0]!.event_name,
        game_title: gs[0]!.game_title,
        event_date: gs[0]!.event_date,
        groups: gs.map((g) => {
          const j = groupJson(g);
          if (plat) j['markets'] = (j['markets'] as { platform: string }[]).filter((l) => plat.has(l.platform));
          return j;
        }),
      }));
      return jsonReply({ games: out, _meta: { sport: q.sport, date, count: out.length } });
    },
  });

  // ---- /events -----------------------------------------------------------------------------
  api.route({
    path: '/events',
    summary: 'Events with their cross-venue match groups',
    tags: ['matching'],
    group: 'matched_markets',
    query: z.object({
      event_type: p.string({ max: 40, description: 'sports, politics, economics, crypto, entertainment, …' }),
      status: p.enum(['active', 'all'] as const, { default: 'active', retired: ['resolved', 'cancelled', 'completed'] }),
      tags: p.list({ max: 20 }),
      date: p.date(),
      q: p.string({ min: 1, max: 100 }),
      include_groups: p.bool({ default: true }),
      types: typesParam,
      limit: p.int({ min: 1, max: 100, default: 20 }),
      cursor: p.string({ max: 500 }),
    }),
    handler: (c) => {
      const q = c.query;
      rebuild();
      let offset = 0;
      if (q.cursor !== undefined) {
        const k = decodeCursor(q.cursor);
        if (!k || typeof k['o'] !== 'number' || k['o'] < 0)
          return errorReply(400, 'validation.invalid_cursor', 'invalid parameter "cursor": not a cursor this API issued');
        offset = k['o'];
      }
      const tags = Array.isArray(q.tags) ? q.tags.map((t) => t.toLowerCase()) : undefined;
      const list = (q.q ? searchEvents(q.q) : events).filter(
        (e) =>
          (q.status === 'all' || !e.completed) &&
          (q.event_type === undefined || e.event_type === q.event_type.toLowerCase()) &&
          (!tags || tags.every((t) => e.tags.some((x) => x.toLowerCase() === t))) &&
          (q.date === undefined || e.date === q.date) &&
          e.groups.some((g) => typesMatch(g, q.types)),
      );
      const page = list.slice(offset, offset + q.limit!);
      const more = offset + q.limit! < list.length;
      return jsonReply({
        events: page.map((e) => eventJson(e, q.include_groups!, q.types, true)),
        cursor: more ? encodeCursor({ o: offset + q.limit! }) : null,
        _meta: { count: page.length, total_count: list.length },
      });
    },
  });

  // ---- /search -----------------------------------------------------------------------------
  api.route({
    path: '/search',
    summary: 'Full-text search over events and their matched markets',
    description:
      'Short all-caps acronyms (NFL, CPI, BTC) match whole words only. last_price is the midpoint of the best YES bid and ask, null when a side is missing, the spread is wider than 20 cents, or the event is completed.',
    tags: ['matching'],
    query: z.object({
      q: p.string({ required: true, min: 3, max: 100 }),
      event_type: p.string({ max: 40 }),
      status: p.enum(['active', 'completed', 'all'] as const, { default: 'active', retired: ['resolved', 'cancelled'] }),
      date_from: p.date(),
      date_to: p.date(),
      include_groups: p.bool({ default: true }),
      include_prices: p.bool({ default: true }),
      types: typesParam,
      limit: p.int({ min: 1, max: 100, default: 20 }),
      cursor: p.string({ max: 500 }),
    }),
    handler: (c) => {
      const q = c.query;
      // Serialized once per state: a cached body is served while the groups, the catalog and
      // every quote it shows are unchanged (broad queries build hundreds of legs).
      const hit = searchCache.get(c.rawQuery);
      if (
        hit &&
        hit.matching === matching.version &&
        hit.catalog === state.catalog.version &&
        hit.quotes === state.quotes.size &&
        hit.deps.every(([r, v]) => r.version === v)
      )
        return { status: 200, body: hit.body };
      if (q.date_from && q.date_to && q.date_from > q.date_to)
        return errorReply(400, 'validation.time_range', 'invalid parameters: date_from is after date_to');
      let offset = 0;
      if (q.cursor !== undefined) {
        const k = decodeCursor(q.cursor);
        if (!k || typeof k['o'] !== 'number' || k['o'] < 0)
          return errorReply(400, 'validation.invalid_cursor', 'invalid parameter "cursor": not a cursor this API issued');
        offset = k['o'];
      }
      const list = searchEvents(q.q!).filter(
        (e) =>
          (q.status === 'all' || (q.status === 'completed') === e.completed) &&
          (q.event_type === undefined || e.event_type === q.event_type.toLowerCase()) &&
          (q.date_from === undefined || (e.date !== null && e.date >= q.date_from)) &&
          (q.date_to === undefined || (e.date !== null && e.date <= q.date_to)) &&
          e.groups.some((g) => typesMatch(g, q.types)),
      );
      const pricesUnavailable = q.include_prices! && state.quotes.size === 0;
      const page = list.slice(offset, offset + q.limit!);
      const more = offset + q.limit! < list.length;
      const events = page.map((e) => {
        const j = eventJson(e, q.include_groups!, q.types, q.include_prices! && !pricesUnavailable, true);
        if (q.include_groups && q.include_prices && pricesUnavailable)
          for (const g of j['groups'] as Record<string, unknown>[])
            for (const l of g['markets'] as Record<string, unknown>[]) Object.assign(l, { last_price: null, yes_bid: null, yes_ask: null });
        return j;
      });
      const body = JSON.stringify({
        events,
        cursor: more ? encodeCursor({ o: offset + q.limit! }) : null,
        _meta: { count: page.length, total_count: list.length, ...(pricesUnavailable ? { prices_unavailable: true } : {}) },
      });
      const deps: [QuoteRecord, number][] = [];
      if (q.include_prices)
        for (const e of page)
          for (const g of e.groups)
            for (const m of g.members) {
              const rec = state.catalog.byKey(m.key);
              const qr = rec ? state.quotes.get(rec.venue, rec.marketId) : undefined;
              if (qr) deps.push([qr, qr.version]);
            }
      if (searchCache.size >= 500) searchCache.clear();
      // A leg with no quote yet gets one by growing the quote store: the count guards that case.
      searchCache.set(c.rawQuery, { body, deps, matching: matching.version, catalog: state.catalog.version, quotes: state.quotes.size });
      return { status: 200, body };
    },
  });

  // ---- /unified-orderbook -----------------------------------------------------------------
  api.route({
    path: '/unified-orderbook',
    summary: 'Merged depth of every venue of a match group, in the group’s YES terms (inverted members complemented)',
    tags: ['matching'],
    query: z.object({ group_id: p.int({ min: 1, max: 1e12, required: true }), depth: p.int({ min: 1, max: 200, default: 25 }) }),
    handler: (c) => {
      const g = matching.servedGroup(c.query.group_id!);
      if (!g) return errorReply(404, 'not_found', `no match group ${c.query.group_id}`);
      const contradiction = officeYearContradiction(matching, g);
      if (contradiction) return errorReply(409, 'matching.contradiction', `group ${g.group_id} has a confirmed contradiction: ${contradiction}`);
      type L = { price: number; size: number; platform: string; market_id: string };
      const bids: L[] = [];
      const asks: L[] = [];
      const outcomes: Record<string, unknown>[] = [];
      for (const m of g.members) {
        const rec = state.catalog.byKey(m.key);
        if (!rec) continue;
        const v = venues.byLabel.get(rec.venue)!;
        outcomes.push({ platform: v.slug, market_id: rec.marketId, outcome: rec.outcome ?? null, title: rec.title, inverted: m.inverted });
        const book = state.books.marketBook(rec.venue, rec.marketId, c.query.depth);
        const q = state.quotes.get(rec.venue, rec.marketId);
        const yb = book?.ready ? book.bids : q?.yesBid !== undefined ? [[q.yesBid, q.yesBidSize ?? 0] as const] : [];
        const ya = book?.ready ? book.asks : q?.yesAsk !== undefined ? [[q.yesAsk, q.yesAskSize ?? 0] as const] : [];
        // An inverted member's YES bid is a bid for the group's NO: an ask for the group's YES at 100 − p.
        const gb = m.inverted ? ya.map(([pr, s]) => [PAYOUT - pr, s] as const) : yb;
        const ga = m.inverted ? yb.map(([pr, s]) => [PAYOUT - pr, s] as const) : ya;
        for (const [pr, s] of gb) bids.push({ price: toCents(pr), size: s, platform: v.slug, market_id: rec.marketId });
        for (const [pr, s] of ga) asks.push({ price: toCents(pr), size: s, platform: v.slug, market_id: rec.marketId });
      }
      // NO levels complement in integer units (100 − 48.1 in floating point is 51.900000000000006).
      const flip = (l: L): L => ({ ...l, price: noCents(Math.round(l.price * UNITS_PER_CENT))! });
      bids.sort((a, b) => b.price - a.price);
      asks.sort((a, b) => a.price - b.price);
      return jsonReply({
        group_id: g.group_id,
        title: g.title,
        event: { event_id: g.event_id ?? g.eventKey, event_name: g.event_name, game_title: g.game_title, event_date: g.event_date },
        outcome: g.title,
        outcomes,
        yes: { bids: bids.slice(0, c.query.depth), asks: asks.slice(0, c.query.depth) },
        no: {
          bids: asks.slice(0, c.query.depth).map(flip),
          asks: bids.slice(0, c.query.depth).map(flip),
        },
        timestamp: new Date().toISOString(),
      });
    },
  });
}

function typesMatch(g: ServedGroup, types: readonly string[] | 'all' | undefined): boolean {
  if (types === undefined || types === 'all') return true;
  return g.market_class !== null ? types.includes(g.market_class) : types.includes('other');
}

function minDate(recs: readonly MarketRecord[]): string | null {
  let t = Infinity;
  for (const r of recs) if (r.closeTime !== undefined && r.closeTime < t) t = r.closeTime;
  return Number.isFinite(t) ? new Date(t).toISOString().slice(0, 10) : null;
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

/** A market page URL → the venue and markets it names (spec 4.3). */
function resolveUrl(ctx: ApiContext, raw: string): { venue: VenueConfig; markets: MarketRecord[] } | { error: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { error: 'not a URL' };
  }
  const host = u.host.toLowerCase();
  const deep = u.protocol !== 'https:' && u.protocol !== 'http:';
  const venue = ctx.venues.enabled.find(
    (v) => v.web.hosts.includes(host) || (deep && v.web.deepLink !== undefined && v.web.deepLink.startsWith(`${u.protocol}//`)),
  );
  if (!venue) {
    const known = ctx.venues.enabled.filter((v) => v.capabilities.urlMatcher).flatMap((v) => v.web.hosts);
    return { error: `host "${host}" is not a supported market page; accepted hosts: ${known.join(', ')}` };
  }
  if (!venue.capabilities.urlMatcher) return { error: `${venue.slug} market pages cannot be resolved by the URL matcher` };
  let parts: string[];
  try {
    parts = (deep ? `${u.host}${u.pathname}` : u.pathname)
      .split('/')
      .filter(Boolean)
      .map((s) => decodeURIComponent(s));
  } catch {
    // A path with malformed percent-encoding is the client's error (400), not ours (500).
    return { error: 'malformed percent-encoding in the URL path' };
  }
  const catalog = ctx.state.catalog.venue(venue.label);
  const all = [...catalog.values()];
  const found: MarketRecord[] = [];
  switch (venue.protocol) {
    case 'kalshi': {
      // kalshi.com/markets/<series>/<slug>/<event or market ticker>
      const last = (parts[parts.length - 1] ?? '').toUpperCase();
      const m = catalog.get(last);
      if (m) found.push(m);
      else found.push(...all.filter((x) => x.eventId?.toUpperCase() === last || (parts.length <= 2 && x.seriesId?.toUpperCase() === last)));
      break;
    }
    case 'polymarket': {
      // polymarket.com/event/<event slug>[/<market slug>] or /market/<market slug>
      const slugs = parts.slice(1);
      const market = slugs[1] ?? (parts[0] === 'market' ? slugs[0] : undefined);
      if (market) found.push(...all.filter((x) => x.extra?.['slug'] === market));
      if (found.length === 0 && slugs[0])
        found.push(...all.filter((x) => x.extra?.['eventSlug'] === slugs[0] || x.extra?.['event_slug'] === slugs[0] || x.extra?.['slug'] === slugs[0]));
      break;
    }
    case 'predictit': {
      // predictit.org/markets/detail/<market id>[/<name>]
      const i = parts.indexOf('detail');
      const id = i >= 0 ? parts[i + 1] : parts.find((s) => /^\d+$/.test(s));
      if (id) found.push(...all.filter((x) => x.eventId === id || x.marketId === id));
      break;
    }
    default: {
      // exchange venues: /outcome/<outcome id> on the web, <scheme>://outcome/<id> deep links
      const id = parts[parts.length - 1] ?? '';
      const m = catalog.get(venue.idPrefix ? `${venue.slug}_${id}` : id) ?? catalog.get(id);
      if (m) found.push(m);
    }
  }
  if (found.length === 0) return { error: `no ${venue.slug} market found for ${u.pathname || u.host}` };
  return { venue, markets: found };
}
