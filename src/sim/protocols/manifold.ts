import type { VenueConfig } from '../../config/schema.js';
import { PAYOUT, UNITS_PER_DOLLAR } from '../../core/price.js';
import type { ManifoldAnswer, ManifoldMarket } from '../../venues/manifold/raw.js';
import { createSimHttp, HttpError } from '../server-kit.js';
import type { SimFault, SimListing, SimServer, SimServerFactory, SimWorldApi } from '../types.js';

/**
 * Simulated Manifold API v0 (SYNTHETIC DATA): `GET /v0/markets?limit=&before=`,
 * `GET /v0/market/:id` and `GET /v0/slug/:slug`, built on request from the world's listings.
 *
 * A listing without `ids.contract_id` is a BINARY cpmm-1 market. Listings sharing a
 * `contract_id` are the answers of one MULTIPLE_CHOICE cpmm-multi-1 market (listing id =
 * `<contract_id>:<answer_id>`); as on Manifold, the `/markets` list (LiteMarket) does not carry
 * answers, only the FullMarket does.
 *
 * Manifold has no book, so the probability served is the listing's mid (see `probabilityOf`).
 * `lastUpdatedTime` is the time of the last change of the listing (or of any answer).
 *
 * Faults: `disconnect` closes every HTTP connection, `stall` holds requests, `malformed` makes the
 * next `count` `/markets` responses carry an invalid entry (a string probability, a market that is a
 * number) or not be a list at all. `gap` and `duplicate_snapshot` mean nothing here and do nothing.
 */

/**
 * The probability Manifold would show for a listing, in units: the mid of its YES book when both
 * sides are there, else the last trade, else the proposition's fair value.
 */
export function probabilityOf(l: SimListing): number {
  if (l.status === 'finalized' || l.status === 'determined') {
    if (l.prop.resolved !== undefined) return (l.prop.resolved === 'yes') !== l.inverted ? PAYOUT : 0;
  }
  const bid = l.book.bids.best();
  const ask = l.book.asks.best();
  if (bid !== undefined && ask !== undefined) return Math.round((bid + ask) / 2);
  if (l.last !== undefined) return l.last;
  return l.inverted ? PAYOUT - l.prop.fair : l.prop.fair;
}

const prob = (units: number): number => units / UNITS_PER_DOLLAR;
const resolvedOf = (l: SimListing): boolean => l.status === 'finalized' || l.status === 'determined';
const yesOf = (l: SimListing): boolean => (l.prop.resolved === 'yes') !== l.inverted;

interface Group {
  readonly id: string;
  readonly listings: SimListing[];
  readonly multi: boolean;
}

/** Serves the Manifold v0 protocol for `venue` from `world`. */
export const serve: SimServerFactory = async (world: SimWorldApi, venue: VenueConfig, opts): Promise<SimServer> => {
  const http = createSimHttp();
  const changedAt = new Map<string, number>();
  const off = world.onChange((c) => {
    const l = c.type === 'trade' ? c.trade.listing : c.listing;
    if (l.venue !== venue.label) return;
    changedAt.set(l.id, c.type === 'trade' ? c.trade.timestamp : c.timestamp);
  });
  let malformedLeft = 0;
  let malformedSent = 0;

  http.get('/v0/markets', (q) => {
    const limit = Math.min(1000, Math.max(1, Number(q.get('limit') ?? 500) || 500));
    const all = groups(world, venue.label);
    const before = q.get('before');
    let start = 0;
    if (before) {
      const i = all.findIndex((g) => g.id === before);
      if (i < 0) throw new HttpError(400, { message: `Contract ${before} not found` });
      start = i + 1;
    }
    const page: unknown[] = all.slice(start, start + limit).map((g) => lite(g, changedAt));
    if (malformedLeft > 0) {
      malformedLeft--;
      return corrupt(page, malformedSent++);
    }
    return page;
  });
  http.get('/v0/market/:id', (_q, params) => {
    const g = groups(world, venue.label).find((x) => x.id === params['id']);
    if (!g) throw new HttpError(404, { message: 'Contract not found' });
    return full(g, changedAt);
  });
  http.get('/v0/slug/:slug', (_q, params) => {
    const g = groups(world, venue.label).find((x) => (x.listings[0]!.ids['slug'] ?? x.id) === params['slug']);
    if (!g) throw new HttpError(404, { message: 'Contract not found' });
    return full(g, changedAt);
  });

  const { host, port } = await http.listen(opts.host, opts.port);
  return {
    venue,
    endpoints: { rest: `http://${host}:${port}/v0` },
    fault(f: SimFault) {
      switch (f.kind) {
        case 'disconnect':
          http.server.closeAllConnections();
          break;
        case 'stall':
          http.stallUntil = Date.now() + f.ms;
          break;
        case 'malformed':
          malformedLeft += f.count ?? 1;
          break;
        case 'gap':
        case 'duplicate_snapshot':
          break;
      }
    },
    close: async () => {
      off();
      await http.close();
    },
  };
};

/** The venue's markets: binary listings alone, multi-answer listings grouped by contract. */
function groups(world: SimWorldApi, label: string): Group[] {
  const by = new Map<string, Group>();
  for (const l of world.listings(label)) {
    const cid = l.ids['contract_id'];
    const id = cid ?? l.id;
    const g = by.get(id);
    if (g) g.listings.push(l);
    else by.set(id, { id, listings: [l], multi: cid !== undefined });
  }
  // Newest first, as Manifold lists; ties by id so that `before` paging is stable.
  return [...by.values()].sort((a, b) => created(b) - created(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

const created = (g: Group): number => Math.min(...g.listings.map((l) => l.createdAt));

/** The LiteMarket of a group (no answers); `changedAt` holds each listing's last change. */
function lite(g: Group, changedAt: ReadonlyMap<string, number>): ManifoldMarket {
  const first = g.listings[0]!;
  const creator = first.ids['creator_username'] ?? 'Manifold';
  const slug = first.ids['slug'] ?? g.id;
  const question = first.ids['question'] ?? first.eventTitle;
  const resolved = g.listings.every(resolvedOf);
  const volume = g.listings.reduce((s, l) => s + l.volume, 0);
  const m: ManifoldMarket = {
    id: g.id,
    creatorId: `u-${creator}`,
    creatorUsername: creator,
    creatorName: creator,
    createdTime: created(g),
    closeTime: Math.max(...g.listings.map((l) => l.closeTime)),
    question,
    slug,
    url: `https://manifold.markets/${creator}/${slug}`,
    outcomeType: g.multi ? 'MULTIPLE_CHOICE' : 'BINARY',
    mechanism: g.multi ? 'cpmm-multi-1' : 'cpmm-1',
    volume,
    volume24Hours: volume,
    isResolved: resolved,
    uniqueBettorCount: Math.round(volume / 50),
    lastUpdatedTime: Math.max(...g.listings.map((l) => changedAt.get(l.id) ?? l.createdAt)),
    token: 'MANA',
  };
  if (!g.multi) {
    const p = probabilityOf(first);
    // A cpmm-1 pool with p = 0.5 whose implied probability is p: YES shares scarce when likely.
    m.probability = prob(p);
    m.p = 0.5;
    m.pool = { YES: 1000 * prob(PAYOUT - p), NO: 1000 * prob(p) };
    m.totalLiquidity = 1000;
    if (resolved) {
      m.resolution = yesOf(first) ? 'YES' : 'NO';
      m.resolutionTime = first.closeTime;
    }
  } else {
    m.totalLiquidity = 1000 * g.listings.length;
    if (resolved) {
      const winners = g.listings.filter(yesOf);
      m.resolution = winners.length === 1 ? winners[0]!.ids['answer_id']! : 'MKT';
      m.resolutionTime = first.closeTime;
    }
  }
  return m;
}

/** The FullMarket of a group: with its answers when multi-answer. */
function full(g: Group, changedAt: ReadonlyMap<string, number>): ManifoldMarket {
  const m: ManifoldMarket = { ...lite(g, changedAt), groupSlugs: [...new Set(g.listings.flatMap((l) => l.tags.map((t) => t.toLowerCase())))] };
  if (g.multi) {
    m.answers = g.listings.map((l, index): ManifoldAnswer => {
      const p = probabilityOf(l);
      const a: ManifoldAnswer = {
        id: l.ids['answer_id']!,
        index,
        contractId: g.id,
        text: l.ids['answer_text'] ?? l.outcome ?? l.title,
        createdTime: l.createdAt,
        probability: prob(p),
        pool: { YES: 1000 * prob(PAYOUT - p), NO: 1000 * prob(p) },
        totalLiquidity: 1000,
        volume: l.volume,
      };
      if (resolvedOf(l) && l.prop.resolved !== undefined) {
        a.resolution = yesOf(l) ? 'YES' : 'NO';
        a.resolutionTime = l.closeTime;
      }
      return a;
    });
  }
  return { ...m, description: '', textDescription: '' } as ManifoldMarket;
}

/** One of three ways a `/markets` page can be wrong, in turn. */
function corrupt(page: unknown[], n: number): unknown {
  const items = structuredClone(page) as Record<string, unknown>[];
  const variant = n % 3;
  if (variant === 2 || items.length === 0) return { error: 'temporarily unavailable' };
  const binary = items.findIndex((m) => m['outcomeType'] === 'BINARY');
  if (variant === 0 && binary >= 0) items[binary]!['probability'] = String(items[binary]!['probability']);
  else items.push(42 as unknown as Record<string, unknown>);
  return items;
}
