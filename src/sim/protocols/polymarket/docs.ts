import { createHash } from 'node:crypto';
import { PAYOUT, toDollarString } from '../../../core/price.js';
import type { MarketStatus } from '../../../core/types.js';
import { PSEUDONYM_ADJECTIVES, PSEUDONYM_NOUNS } from '../../data.js';
import type { SimListing, SimTrade, SimWorldApi } from '../../types.js';

/** The documents and frames the simulated Polymarket serves, built from a listing (SYNTHETIC DATA). */

/** A token of a listing: its YES or its NO side. */
export interface TokenRef {
  readonly listing: SimListing;
  readonly yes: boolean;
}

/** Token id → listing side. Listings appear over time: a miss rebuilds the index. */
export class TokenIndex {
  private readonly tokens = new Map<string, TokenRef>();

  constructor(private readonly listings: () => readonly SimListing[]) {}

  get(id: string): TokenRef | undefined {
    let t = this.tokens.get(id);
    if (!t) {
      for (const l of this.listings()) this.add(l);
      t = this.tokens.get(id);
    }
    return t;
  }

  add(l: SimListing): void {
    this.tokens.set(l.ids['yes_token']!, { listing: l, yes: true });
    this.tokens.set(l.ids['no_token']!, { listing: l, yes: false });
  }
}

/** Units → the venue's shortest decimal string: 4800 → "0.48", 10_000 → "1", 10 → "0.001". */
export function polyPrice(units: number): string {
  return toDollarString(units).replace(/\.?0+$/, '') || '0';
}

/** A size as the venue writes it: "250", "12.5". */
export function polySize(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(6).replace(/\.?0+$/, '');
}

/** ms → ISO 8601. */
export const iso = (ms: number): string => new Date(ms).toISOString();
/** Listing statuses the venue shows as closed. */
export const CLOSED: readonly MarketStatus[] = ['closed', 'determined', 'finalized'];

/** Levels of one token, best first: the YES book, or its mirror for the NO token. */
export function tokenLevels(l: SimListing, yes: boolean): { bids: [number, number][]; asks: [number, number][] } {
  const b = l.book;
  const bids: [number, number][] = [];
  const asks: [number, number][] = [];
  if (yes) {
    for (let i = 0; i < b.bids.length; i++) bids.push([b.bids.prices[i]!, b.bids.sizes[i]!]);
    for (let i = 0; i < b.asks.length; i++) asks.push([b.asks.prices[i]!, b.asks.sizes[i]!]);
  } else {
    for (let i = 0; i < b.asks.length; i++) bids.push([PAYOUT - b.asks.prices[i]!, b.asks.sizes[i]!]);
    for (let i = 0; i < b.bids.length; i++) asks.push([PAYOUT - b.bids.prices[i]!, b.bids.sizes[i]!]);
  }
  return { bids, asks };
}

/** Hex SHA-1, for the venue's book and change hashes. */
export function sha1(s: string): string {
  return createHash('sha1').update(s).digest('hex');
}

/** The YES result of a settled listing, when known. */
export function resultOf(l: SimListing): 'yes' | 'no' | undefined {
  if (l.status !== 'finalized' && l.status !== 'determined') return undefined;
  if (l.last === PAYOUT) return 'yes';
  if (l.last === 0) return 'no';
  const r = l.prop.resolved;
  return r === undefined ? undefined : (r === 'yes') !== l.inverted ? 'yes' : 'no';
}

/** The `book` frame (and REST book) of one token of a listing. */
export function bookFrame(world: SimWorldApi, l: SimListing, yes: boolean): Record<string, unknown> {
  const { bids, asks } = tokenLevels(l, yes);
  const asset = l.ids[yes ? 'yes_token' : 'no_token']!;
  // The venue lists bids ascending and asks descending (best last).
  const wire = {
    bids: bids.reverse().map(([p, s]) => ({ price: polyPrice(p), size: polySize(s) })),
    asks: asks.reverse().map(([p, s]) => ({ price: polyPrice(p), size: polySize(s) })),
  };
  const ts = String(l.book.timestamp || world.now());
  const last = l.last === undefined ? '' : polyPrice(yes ? l.last : PAYOUT - l.last);
  return {
    market: l.id,
    asset_id: asset,
    timestamp: ts,
    hash: sha1(`${asset}${ts}${JSON.stringify(wire)}`),
    bids: wire.bids,
    asks: wire.asks,
    tick_size: l.ids['tick_size'] ?? '0.01',
    event_type: 'book',
    last_trade_price: last,
  };
}

/** The Gamma event a listing belongs to, as embedded in its market. */
export function eventRef(l: SimListing): Record<string, unknown> {
  return {
    id: l.ids['event_id'],
    ticker: l.ids['event_slug'],
    slug: l.ids['event_slug'],
    title: l.eventTitle,
    endDate: iso(l.closeTime),
    active: true,
    closed: CLOSED.includes(l.status),
    category: l.category,
    tags: l.tags.map((t) => ({ id: sha1(t).slice(0, 6), label: t, slug: t.toLowerCase().replace(/[^a-z0-9]+/g, '-') })),
    ...(l.seriesTitle
      ? { series: [{ id: sha1(l.seriesTitle).slice(0, 6), slug: l.seriesTitle.toLowerCase().replace(/[^a-z0-9]+/g, '-'), title: l.seriesTitle }] }
      : {}),
  };
}

/** The Gamma market of a listing, with its event (`ev`, or the listing's own). */
export function gammaMarket(world: SimWorldApi, l: SimListing, ev?: Record<string, unknown>): Record<string, unknown> {
  const bid = l.book.bids.best();
  const ask = l.book.asks.best();
  const result = resultOf(l);
  const ref = bid !== undefined && ask !== undefined ? Math.round((bid + ask) / 2) : (l.last ?? 5000);
  const yesPrice = result === 'yes' ? PAYOUT : result === 'no' ? 0 : (l.last ?? ref);
  let liquidity = 0;
  for (const [p, q] of l.book.bids.levels()) liquidity += (p * q) / PAYOUT;
  for (const [p, q] of l.book.asks.levels()) liquidity += ((PAYOUT - p) * q) / PAYOUT;
  liquidity = Math.round(liquidity * 1e4) / 1e4;
  const closed = CLOSED.includes(l.status);
  return {
    id: l.ids['gamma_id'],
    question: l.title,
    conditionId: l.id,
    slug: l.ids['slug'],
    resolutionSource: '',
    endDate: iso(l.closeTime),
    liquidity: String(liquidity),
    startDate: iso(l.openTime),
    outcomes: JSON.stringify([l.ids['outcome_yes'] ?? 'Yes', l.ids['outcome_no'] ?? 'No']),
    outcomePrices: JSON.stringify([polyPrice(yesPrice), polyPrice(PAYOUT - yesPrice)]),
    volume: String(l.volume),
    active: true,
    closed,
    createdAt: iso(l.createdAt),
    updatedAt: iso(world.now()),
    questionID: l.ids['question_id'],
    enableOrderBook: true,
    orderPriceMinTickSize: Number(l.ids['tick_size'] ?? '0.01'),
    orderMinSize: 5,
    volumeNum: l.volume,
    liquidityNum: liquidity,
    endDateIso: iso(l.closeTime).slice(0, 10),
    startDateIso: iso(l.openTime).slice(0, 10),
    clobTokenIds: JSON.stringify([l.ids['yes_token'], l.ids['no_token']]),
    acceptingOrders: l.status === 'active',
    acceptingOrdersTimestamp: l.status === 'initialized' ? null : iso(l.openTime),
    negRisk: l.ids['neg_risk'] === 'true',
    category: l.category,
    umaResolutionStatus: l.status === 'finalized' ? 'resolved' : l.status === 'determined' ? 'proposed' : undefined,
    umaResolutionStatuses: '[]',
    bestBid: bid === undefined ? undefined : bid / PAYOUT,
    bestAsk: ask === undefined ? undefined : ask / PAYOUT,
    lastTradePrice: l.last === undefined ? undefined : l.last / PAYOUT,
    events: [ev ?? eventRef(l)],
  };
}

/**
 * The Gamma event of a listing: listings are grouped by event slug and event title. The world
 * draws an event id per listing (the group's first one names the event) and may phrase one
 * event's title differently per market; keeping the title in the key serves every listing its
 * own event title.
 */
export function eventKey(l: SimListing): string {
  return `${l.ids['event_slug'] ?? l.id}\u0000${l.eventTitle}`;
}

/** The market part of `new_market` / `market_resolved` frames. */
export function marketMessage(world: SimWorldApi, l: SimListing): Record<string, unknown> {
  return {
    id: l.ids['gamma_id'],
    question: l.title,
    market: l.id,
    slug: l.ids['slug'],
    description: '',
    assets_ids: [l.ids['yes_token'], l.ids['no_token']],
    outcomes: [l.ids['outcome_yes'] ?? 'Yes', l.ids['outcome_no'] ?? 'No'],
    event_message: { id: l.ids['event_id'], ticker: l.ids['event_slug'], slug: l.ids['event_slug'], title: l.eventTitle, description: '' },
    timestamp: String(world.now()),
  };
}

/**
 * The public profile the data-api shows with a wallet's trades, as on the venue: about a third
 * of wallets have none (empty strings), the rest an Adjective-Noun pseudonym, some a chosen name.
 */
export function profile(wallet: string): { name: string; pseudonym: string } {
  const h = createHash('sha1').update(wallet.toLowerCase()).digest();
  if (h[0]! % 3 === 0) return { name: '', pseudonym: '' };
  const pseudonym = `${PSEUDONYM_ADJECTIVES[h[1]! % PSEUDONYM_ADJECTIVES.length]}-${PSEUDONYM_NOUNS[h[2]! % PSEUDONYM_NOUNS.length]}`;
  return { name: h[3]! % 2 ? `trader-${wallet.slice(2, 8).toLowerCase()}` : '', pseudonym };
}

/** A simulated trade as the data-api serves it (taker only, the API's default takerOnly=true). */
export function dataTrade(t: SimTrade): Record<string, unknown> {
  const l = t.listing;
  const yes = t.takerSide === 'yes';
  const price = yes ? t.price : PAYOUT - t.price;
  return {
    proxyWallet: t.taker,
    side: 'BUY',
    asset: l.ids[yes ? 'yes_token' : 'no_token'],
    conditionId: l.id,
    size: t.size,
    price: price / PAYOUT,
    timestamp: Math.floor(t.timestamp / 1000),
    title: l.title,
    slug: l.ids['slug'],
    icon: '',
    eventSlug: l.ids['event_slug'],
    outcome: l.ids[yes ? 'outcome_yes' : 'outcome_no'] ?? (yes ? 'Yes' : 'No'),
    outcomeIndex: yes ? 0 : 1,
    ...profile(t.taker),
    bio: '',
    profileImage: '',
    profileImageOptimized: '',
    transactionHash: `0x${createHash('sha256').update(t.id).digest('hex')}`,
  };
}
