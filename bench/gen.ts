/**
 * Synthetic, seeded venue traffic for the benchmarks, in the venues' real wire formats.
 *
 * Shapes come from the real fixtures under test/fixtures/ (Kalshi `/markets` page and WebSocket
 * orderbook frames, Polymarket Gamma market and market-channel frames); only identifiers, titles,
 * prices and sizes are generated. Every book update is drawn against a model of the book, so the
 * stream is valid where it lands: no crossed books, no negative sizes, Kalshi seq per sid without
 * gaps, Polymarket best_bid/best_ask matching the book after the change.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { VenueConfig } from '../src/config/schema.js';
import { PAYOUT } from '../src/core/price.js';
import type { BookSideName } from '../src/core/types.js';
import { repoRoot, rng } from './lib.js';

export type Rand = () => number;

function fixture(path: string): unknown {
  return JSON.parse(readFileSync(resolve(repoRoot(), 'test/fixtures', path), 'utf8'));
}

/** The venue of a protocol in config/venues.json (venue_a = kalshi, venue_b = polymarket by default). */
export function venueOf(venues: readonly VenueConfig[], protocol: VenueConfig['protocol']): VenueConfig {
  const v = venues.find((x) => x.protocol === protocol);
  if (!v) throw new Error(`no venue speaks ${protocol} in config/venues.json`);
  return v;
}

// ---- formatting (integers only: the generator must not introduce float noise either) ----------

/** Units → Kalshi's 4-decimal dollars ("0.4800"). */
export function kalshiDollars(units: number): string {
  return `${Math.floor(units / 10_000)}.${String(units % 10_000).padStart(4, '0')}`;
}

/** Hundredths of a contract → Kalshi fixed point with two decimals ("300.00", "-54.00"). */
export function fp2(hundredths: number): string {
  const a = Math.abs(hundredths);
  return `${hundredths < 0 ? '-' : ''}${Math.floor(a / 100)}.${String(a % 100).padStart(2, '0')}`;
}

/** Units → Polymarket's shortest decimal ("0.5", "0.48", "0.456", "1", "0"). */
export function polyPrice(units: number): string {
  if (units === PAYOUT) return '1';
  if (units === 0) return '0';
  return `0.${String(units).padStart(4, '0').replace(/0+$/, '')}`;
}

/** Hundredths → Polymarket size ("200", "1833.33", "12.7"). */
export function polySize(hundredths: number): string {
  const frac = String(hundredths % 100)
    .padStart(2, '0')
    .replace(/0+$/, '');
  return frac ? `${Math.floor(hundredths / 100)}.${frac}` : String(Math.floor(hundredths / 100));
}

const HEX = '0123456789abcdef';
export function hex(r: Rand, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += HEX[Math.floor(r() * 16)];
  return s;
}

function digits(r: Rand, n: number): string {
  let s = String(1 + Math.floor(r() * 9));
  for (let i = 1; i < n; i++) s += String(Math.floor(r() * 10));
  return s;
}

export function uuid(r: Rand): string {
  return `${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-a${hex(r, 3)}-${hex(r, 12)}`;
}

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
function letters(r: Rand, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += LETTERS[Math.floor(r() * 26)];
  return s;
}

const NAMES = [
  'Adach',
  'Sawicki',
  'Kowalski',
  'Nowak',
  'Garcia',
  'Okafor',
  'Tanaka',
  'Moreau',
  'Silva',
  'Larsen',
  'Novak',
  'Haddad',
  'Brennan',
  'Ivanova',
  'Costa',
  'Fischer',
];
const FIRST = ['Rafal', 'Grzegorz', 'Marta', 'Lucas', 'Amara', 'Kenji', 'Elise', 'Paulo', 'Ingrid', 'Tomas', 'Yara', 'Sean', 'Olga', 'Rita', 'Jonas', 'Nadia'];
const person = (r: Rand): string => `${FIRST[Math.floor(r() * FIRST.length)]} ${NAMES[Math.floor(r() * NAMES.length)]}`;

// ---- book model -------------------------------------------------------------------------------

/** One side of a model book: prices best first, sizes in hundredths of a contract. */
export class ModelSide {
  readonly prices: number[] = [];
  readonly sizes = new Map<number, number>();
  constructor(readonly descending: boolean) {}

  get best(): number | undefined {
    return this.prices[0];
  }

  set(price: number, hundredths: number): void {
    const had = this.sizes.has(price);
    if (hundredths === 0) {
      if (!had) return;
      this.sizes.delete(price);
      this.prices.splice(this.prices.indexOf(price), 1);
      return;
    }
    this.sizes.set(price, hundredths);
    if (had) return;
    let i = 0;
    while (i < this.prices.length && (this.descending ? this.prices[i]! > price : this.prices[i]! < price)) i++;
    this.prices.splice(i, 0, price);
  }
}

/** A YES-perspective model book. */
export class ModelBook {
  readonly bids = new ModelSide(true);
  readonly asks = new ModelSide(false);
}

export const randomSize = (r: Rand): number => 100 * (1 + Math.floor(r() * 50)) * (r() < 0.3 ? 10 : 1) + (r() < 0.3 ? Math.floor(r() * 100) : 0);

/** Seeds a book with `levels` levels per side around a random mid, deeper levels with gaps. */
export function seedModel(r: Rand, levels: number, tick: number): ModelBook {
  const b = new ModelBook();
  const mid = Math.round((1500 + r() * 7000) / tick) * tick;
  let p = mid - tick * (1 + Math.floor(r() * 2));
  for (let n = 0; n < levels && p > 0; n++, p -= tick * (n > 3 && r() < 0.25 ? 2 : 1)) b.bids.set(p, randomSize(r));
  p = mid + tick * (1 + Math.floor(r() * 2));
  for (let n = 0; n < levels && p < PAYOUT; n++, p += tick * (n > 3 && r() < 0.25 ? 2 : 1)) b.asks.set(p, randomSize(r));
  return b;
}

/** One level change: YES-perspective side, price in units, new and previous size in hundredths. */
export interface LevelChange {
  readonly side: BookSideName;
  readonly price: number;
  readonly size: number;
  readonly prev: number;
}

/**
 * Draws the next change of a book like a live feed's: 80% within the top three levels of a side,
 * 60% size changes, 20% inserts, 20% deletes, the level count held near `levels`. Applies it to
 * the model and returns it.
 */
export function nextChange(r: Rand, b: ModelBook, levels: number, tick: number): LevelChange {
  const bid = r() < 0.5;
  const m = bid ? b.bids : b.asks;
  const other = bid ? b.asks : b.bids;
  const near = r() < 0.8;
  const len = m.prices.length;
  let kind: 'change' | 'insert' | 'delete';
  if (len <= Math.max(1, levels - 3)) kind = 'insert';
  else if (len >= levels + 3) kind = 'delete';
  else {
    const x = r();
    kind = x < 0.6 ? 'change' : x < 0.8 ? 'insert' : 'delete';
  }
  const side: BookSideName = bid ? 'bid' : 'ask';
  if (kind === 'insert') {
    const worse = bid ? -tick : tick;
    const best = m.best ?? (other.best === undefined ? PAYOUT / 2 : other.best - worse);
    for (let tries = 0; tries < 8; tries++) {
      const off = near ? Math.floor(r() * 5) - 1 : 3 + Math.floor(r() * (len + 1));
      const p = best + off * worse;
      const crosses = other.best !== undefined && (bid ? p >= other.best : p <= other.best);
      if (p > 0 && p < PAYOUT && !crosses && !m.sizes.has(p)) {
        const size = randomSize(r);
        m.set(p, size);
        return { side, price: p, size, prev: 0 };
      }
    }
    if (len === 0) return nextChange(r, b, levels, tick);
    kind = 'change';
  }
  const i = near || len <= 3 ? Math.floor(r() * Math.min(3, len)) : 3 + Math.floor(r() * (len - 3));
  const price = m.prices[i]!;
  const prev = m.sizes.get(price)!;
  let size = 0;
  if (kind === 'change') {
    size = randomSize(r);
    if (size === prev) size += 100;
  }
  m.set(price, size);
  return { side, price, size, prev };
}

// ---- Kalshi -----------------------------------------------------------------------------------

interface KalshiTemplate {
  readonly markets: Record<string, unknown>[];
}

let kalshiTemplateCache: Record<string, unknown> | undefined;
/** A Kalshi `/markets` REST market object: the fixture's first market with generated identity. */
export function kalshiRestMarket(r: Rand, i: number, ticker: string, eventTicker: string): Record<string, unknown> {
  kalshiTemplateCache ??= (fixture('kalshi/rest_markets_page_first2_2026-09-13.json') as KalshiTemplate).markets[0]!;
  const yes = person(r);
  const no = person(r);
  const bid = 100 * (5 + Math.floor(r() * 85));
  return {
    ...kalshiTemplateCache,
    ticker,
    event_ticker: eventTicker,
    title: `${yes} wins`,
    yes_sub_title: yes,
    no_sub_title: no,
    custom_strike: { table_tennis_competitor: uuid(r) },
    rules_primary: `If ${yes} wins the ${yes} vs ${no} men's professional TT Elite Series table tennis match #${i} originally scheduled for Sep 13, 2026 at 11:10 AM EDT, then the market resolves to Yes.`,
    yes_bid_dollars: kalshiDollars(bid),
    yes_ask_dollars: kalshiDollars(bid + 100),
    no_bid_dollars: kalshiDollars(PAYOUT - bid - 100),
    no_ask_dollars: kalshiDollars(PAYOUT - bid),
    volume_fp: fp2(100 * Math.floor(r() * 100_000)),
    open_interest_fp: fp2(100 * Math.floor(r() * 20_000)),
  };
}

/** Kalshi-style tickers: events of 2–4 markets, e.g. KXTTELITEMATCH-26SEP1300042ABC-XYZ. */
export function kalshiTickers(r: Rand, n: number): { ticker: string; event: string; uuid: string }[] {
  const out: { ticker: string; event: string; uuid: string }[] = [];
  let e = 0;
  while (out.length < n) {
    const event = `KXTTELITEMATCH-26SEP13${String(e++).padStart(5, '0')}${letters(r, 3)}`;
    const k = 2 + Math.floor(r() * 3);
    for (let j = 0; j < k && out.length < n; j++) out.push({ ticker: `${event}-${letters(r, 3)}${j}`, event, uuid: uuid(r) });
  }
  return out;
}

/** `/markets` pages (JSON text, as fetched) of `pageSize` markets. */
export function kalshiMarketPages(r: Rand, ids: readonly { ticker: string; event: string }[], pageSize = 1000): string[] {
  const pages: string[] = [];
  for (let i = 0; i < ids.length; i += pageSize) {
    const markets = ids.slice(i, i + pageSize).map((m, j) => kalshiRestMarket(r, i + j, m.ticker, m.event));
    pages.push(JSON.stringify({ cursor: i + pageSize < ids.length ? `c${i + pageSize}` : '', markets }));
  }
  return pages;
}

/** The WebSocket `orderbook_snapshot` frame of a model book (YES bids; NO bids = 1 − YES asks). */
export function kalshiSnapshotFrame(sid: number, seq: number, ticker: string, marketUuid: string, b: ModelBook): string {
  // The wire lists bids ascending (best last), as in the spec example.
  const yes = [...b.bids.prices].reverse().map((p) => [kalshiDollars(p), fp2(b.bids.sizes.get(p)!)]);
  const no = [...b.asks.prices].reverse().map((p) => [kalshiDollars(PAYOUT - p), fp2(b.asks.sizes.get(p)!)]);
  return JSON.stringify({
    type: 'orderbook_snapshot',
    sid,
    seq,
    msg: { market_ticker: ticker, market_id: marketUuid, yes_dollars_fp: yes, no_dollars_fp: no },
  });
}

/** The relative `orderbook_delta` frame of a YES-perspective level change. */
export function kalshiDeltaFrame(sid: number, seq: number, ticker: string, marketUuid: string, c: LevelChange, tsMs: number): string {
  const yes = c.side === 'bid';
  return JSON.stringify({
    type: 'orderbook_delta',
    sid,
    seq,
    msg: {
      market_ticker: ticker,
      market_id: marketUuid,
      price_dollars: kalshiDollars(yes ? c.price : PAYOUT - c.price),
      delta_fp: fp2(c.size - c.prev),
      side: yes ? 'yes' : 'no',
      ts: new Date(tsMs - (tsMs % 1000)).toISOString().replace('.000Z', 'Z'),
      ts_ms: tsMs,
    },
  });
}

/** A Kalshi `ticker` frame (last price, volume, open interest) as in the spec example. */
export function kalshiTickerFrame(r: Rand, sid: number, ticker: string, marketUuid: string, b: ModelBook, tsMs: number): string {
  const bid = b.bids.best ?? 0;
  const ask = b.asks.best ?? PAYOUT;
  const vol = 100 * Math.floor(r() * 100_000);
  const oi = 100 * Math.floor(r() * 20_000);
  return JSON.stringify({
    type: 'ticker',
    sid,
    msg: {
      market_id: marketUuid,
      market_ticker: ticker,
      price_dollars: kalshiDollars(bid > 0 ? bid : 100),
      yes_bid_dollars: kalshiDollars(bid),
      yes_ask_dollars: kalshiDollars(ask),
      volume_fp: fp2(vol),
      open_interest_fp: fp2(oi),
      dollar_volume: Math.floor(vol / 200),
      dollar_open_interest: Math.floor(oi / 200),
      yes_bid_size_fp: fp2(b.bids.sizes.get(bid) ?? 0),
      yes_ask_size_fp: fp2(b.asks.sizes.get(ask) ?? 0),
      last_trade_size_fp: '25.00',
      ts: Math.floor(tsMs / 1000),
      ts_ms: tsMs,
      time: new Date(tsMs - (tsMs % 1000)).toISOString().replace('.000Z', 'Z'),
    },
  });
}

/** A Kalshi book stream: snapshots of every market, then relative deltas, seq per sid. */
export interface KalshiStream {
  readonly ids: { ticker: string; event: string; uuid: string }[];
  readonly pages: string[];
  readonly snapshots: string[];
  readonly deltas: string[];
  /** Per delta: its market's index and the equivalent absolute YES-perspective change. */
  readonly market: Int32Array;
  readonly changes: (readonly [BookSideName, number, number])[][];
  /** Receive time of delta i (ms). */
  readonly local: Float64Array;
}

export const T0 = Date.parse('2026-09-13T15:00:00Z');

/**
 * `markets` markets spread over `sids` subscriptions, `levels` levels per side at a 1-cent tick,
 * then `deltas` deltas at `rate` frames per second of simulated time.
 */
export function kalshiStream(opts: { seed: number; markets: number; sids: number; levels: number; deltas: number; rate?: number }): KalshiStream {
  const r = rng(opts.seed);
  const tick = 100;
  const ids = kalshiTickers(r, opts.markets);
  const pages = kalshiMarketPages(r, ids);
  const books = ids.map(() => seedModel(r, opts.levels, tick));
  const seq = new Array<number>(opts.sids + 1).fill(0);
  const sidOf = (i: number): number => 1 + (i % opts.sids);
  const snapshots = ids.map((m, i) => kalshiSnapshotFrame(sidOf(i), ++seq[sidOf(i)]!, m.ticker, m.uuid, books[i]!));
  const deltas: string[] = new Array(opts.deltas);
  const market = new Int32Array(opts.deltas);
  const changes: (readonly [BookSideName, number, number])[][] = new Array(opts.deltas);
  const local = new Float64Array(opts.deltas);
  const msPerFrame = 1000 / (opts.rate ?? 5000);
  for (let i = 0; i < opts.deltas; i++) {
    const k = Math.floor(r() * opts.markets);
    const c = nextChange(r, books[k]!, opts.levels, tick);
    const t = T0 + Math.floor(i * msPerFrame);
    local[i] = t + 3;
    market[i] = k;
    changes[i] = [[c.side, c.price, c.size / 100]];
    deltas[i] = kalshiDeltaFrame(sidOf(k), ++seq[sidOf(k)]!, ids[k]!.ticker, ids[k]!.uuid, c, t);
  }
  return { ids, pages, snapshots, deltas, market, changes, local };
}

// ---- Polymarket -------------------------------------------------------------------------------

export interface PolyIds {
  readonly condition: string;
  readonly yes: string;
  readonly no: string;
  readonly event: string;
  readonly eventSlug: string;
  readonly slug: string;
}

export function polyIds(r: Rand, n: number): PolyIds[] {
  const out: PolyIds[] = [];
  let e = 0;
  while (out.length < n) {
    const event = String(200_000 + e);
    const eventSlug = `will-${letters(r, 6).toLowerCase()}-happen-in-2026-${e++}`;
    const k = 1 + Math.floor(r() * 4);
    for (let j = 0; j < k && out.length < n; j++)
      out.push({ condition: `0x${hex(r, 64)}`, yes: digits(r, 77), no: digits(r, 77), event, eventSlug, slug: `${eventSlug}-${letters(r, 4).toLowerCase()}` });
  }
  return out;
}

let gammaTemplate: Record<string, unknown> | undefined;

/** A Gamma market object: the fixture's market with generated identity, Yes/No outcomes. */
export function gammaMarket(r: Rand, i: number, id: PolyIds): Record<string, unknown> {
  gammaTemplate ??= fixture('polymarket/gamma_market_btc_updown_5m.json') as Record<string, unknown>;
  const events = gammaTemplate['events'] as Record<string, unknown>[];
  const who = person(r);
  const p = 5 + Math.floor(r() * 90);
  return {
    ...gammaTemplate,
    id: String(1_500_000 + i),
    question: `Will ${who} win the 2026 ${letters(r, 5)} championship?`,
    conditionId: id.condition,
    slug: id.slug,
    questionID: `0x${hex(r, 64)}`,
    outcomes: '["Yes", "No"]',
    outcomePrices: JSON.stringify([polyPrice(p * 100), polyPrice(PAYOUT - p * 100)]),
    clobTokenIds: JSON.stringify([id.yes, id.no]),
    volumeNum: Math.floor(r() * 1e6) / 100,
    liquidityNum: Math.floor(r() * 1e6) / 100,
    groupItemTitle: who,
    events: [{ ...events[0]!, id: id.event, ticker: id.eventSlug, slug: id.eventSlug, title: `2026 championship winner (${id.event})` }],
  };
}

/** Gamma `/markets` responses (JSON text, arrays of markets) of `pageSize` markets. */
export function gammaPages(r: Rand, ids: readonly PolyIds[], pageSize = 500): string[] {
  const pages: string[] = [];
  for (let i = 0; i < ids.length; i += pageSize) pages.push(JSON.stringify(ids.slice(i, i + pageSize).map((m, j) => gammaMarket(r, i + j, m))));
  return pages;
}

/** A YES-perspective book as the NO token's book: NO bids = 1 − YES asks. */
function mirror(b: ModelBook): ModelBook {
  const n = new ModelBook();
  for (const p of b.asks.prices) n.bids.set(PAYOUT - p, b.asks.sizes.get(p)!);
  for (const p of b.bids.prices) n.asks.set(PAYOUT - p, b.bids.sizes.get(p)!);
  return n;
}

/** The market-channel `book` frame of one token (bids ascending, asks descending, as captured). */
export function polyBookFrame(id: PolyIds, asset: string, b: ModelBook, tsMs: number, r: Rand): string {
  return JSON.stringify({
    market: id.condition,
    asset_id: asset,
    timestamp: String(tsMs),
    hash: hex(r, 40),
    bids: [...b.bids.prices].reverse().map((p) => ({ price: polyPrice(p), size: polySize(b.bids.sizes.get(p)!) })),
    asks: [...b.asks.prices].reverse().map((p) => ({ price: polyPrice(p), size: polySize(b.asks.sizes.get(p)!) })),
    tick_size: '0.01',
    event_type: 'book',
    last_trade_price: polyPrice(b.bids.best ?? 5000),
  });
}

/**
 * A `price_change` frame (the price_changes[] format): the change on the YES token and its mirror
 * on the NO token, each with that token's best bid and ask after the change.
 */
export function polyPriceChangeFrame(id: PolyIds, yes: ModelBook, c: LevelChange, tsMs: number, r: Rand): string {
  const top = (b: ModelSide, empty: number): string => polyPrice(b.best ?? empty);
  const yesBid = yes.bids.best ?? 0;
  const yesAsk = yes.asks.best ?? PAYOUT;
  return JSON.stringify({
    market: id.condition,
    price_changes: [
      {
        asset_id: id.yes,
        price: polyPrice(c.price),
        size: polySize(c.size),
        side: c.side === 'bid' ? 'BUY' : 'SELL',
        hash: hex(r, 40),
        best_bid: top(yes.bids, 0),
        best_ask: top(yes.asks, PAYOUT),
      },
      {
        asset_id: id.no,
        price: polyPrice(PAYOUT - c.price),
        size: polySize(c.size),
        side: c.side === 'bid' ? 'SELL' : 'BUY',
        hash: hex(r, 40),
        best_bid: polyPrice(PAYOUT - yesAsk),
        best_ask: polyPrice(PAYOUT - yesBid),
      },
    ],
    timestamp: String(tsMs),
    event_type: 'price_change',
  });
}

export interface PolyStream {
  readonly ids: PolyIds[];
  readonly pages: string[];
  /** `book` frames: YES then NO token of every market. */
  readonly snapshots: string[];
  readonly changes: string[];
  /** Per frame: market index and the absolute changes of the YES and NO tokens. */
  readonly market: Int32Array;
  readonly yesChange: (readonly [BookSideName, number, number])[][];
  readonly noChange: (readonly [BookSideName, number, number])[][];
  readonly local: Float64Array;
}

/** `markets` markets (two tokens each) with `levels` levels at a 1-cent tick, then `frames` price_change frames. */
export function polyStream(opts: { seed: number; markets: number; levels: number; frames: number; rate?: number }): PolyStream {
  const r = rng(opts.seed);
  const tick = 100;
  const ids = polyIds(r, opts.markets);
  const pages = gammaPages(r, ids);
  const books = ids.map(() => seedModel(r, opts.levels, tick));
  const snapshots: string[] = [];
  ids.forEach((id, i) => {
    snapshots.push(polyBookFrame(id, id.yes, books[i]!, T0 - 1000, r));
    snapshots.push(polyBookFrame(id, id.no, mirror(books[i]!), T0 - 1000, r));
  });
  const changes: string[] = new Array(opts.frames);
  const market = new Int32Array(opts.frames);
  const yesChange: (readonly [BookSideName, number, number])[][] = new Array(opts.frames);
  const noChange: (readonly [BookSideName, number, number])[][] = new Array(opts.frames);
  const local = new Float64Array(opts.frames);
  const msPerFrame = 1000 / (opts.rate ?? 5000);
  for (let i = 0; i < opts.frames; i++) {
    const k = Math.floor(r() * opts.markets);
    const c = nextChange(r, books[k]!, opts.levels, tick);
    const t = T0 + Math.floor(i * msPerFrame);
    local[i] = t + 3;
    market[i] = k;
    yesChange[i] = [[c.side, c.price, c.size / 100]];
    noChange[i] = [[c.side === 'bid' ? 'ask' : 'bid', PAYOUT - c.price, c.size / 100]];
    changes[i] = polyPriceChangeFrame(ids[k]!, books[k]!, c, t, r);
  }
  return { ids, pages, snapshots, changes, market, yesChange, noChange, local };
}
