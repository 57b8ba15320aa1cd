import type { BookSide } from '../core/book.js';
import { PAYOUT, toCents } from '../core/price.js';
import type { MarketSides } from '../state/books.js';

/** `[[cents, size], …]` of at most `depth` levels of a side, prices complemented (100 − p) when `complement`. */
export function levelsJson(side: BookSide, depth: number, complement: boolean): string {
  const n = Math.min(depth, side.prices.length);
  let out = '[';
  for (let i = 0; i < n; i++) {
    const p = side.prices[i]!;
    out += `${i === 0 ? '[' : ',['}${toCents(complement ? PAYOUT - p : p)},${side.sizes[i]!}]`;
  }
  return out + ']';
}

/**
 * One side's first levels as last rendered, with their JSON text either way round (as is, and
 * complemented for the other outcome). A delta moves one side of a book, so the other side's text
 * is reused: it is rendered again only when its side, or a price or size among its first levels,
 * differs from the copy kept here.
 */
export class SideText {
  private side: BookSide | undefined;
  private n = -1;
  private readonly prices: number[] = [];
  private readonly sizes: number[] = [];
  private straight: string | undefined;
  private flipped: string | undefined;

  /** What `levelsJson(side, depth, complement)` returns, rendered only when the levels changed. */
  levels(side: BookSide, depth: number, complement: boolean): string {
    if (!this.holds(side, depth)) {
      this.straight = undefined;
      this.flipped = undefined;
    }
    return complement ? (this.flipped ??= levelsJson(side, depth, true)) : (this.straight ??= levelsJson(side, depth, false));
  }

  /** Whether the copy is of `side`'s first `depth` levels as they stand; if not, takes a new copy. */
  private holds(side: BookSide, depth: number): boolean {
    const p = side.prices;
    const z = side.sizes;
    const n = Math.min(depth, p.length);
    let same = side === this.side && n === this.n;
    for (let i = 0; same && i < n; i++) same = p[i] === this.prices[i] && z[i] === this.sizes[i];
    if (same) return true;
    this.side = side;
    this.n = n;
    for (let i = 0; i < n; i++) {
      this.prices[i] = p[i]!;
      this.sizes[i] = z[i]!;
    }
    return false;
  }
}

/** What one market's orderbook_update keeps between publications: its fixed start and its sides' text. */
export class BookText {
  readonly bids = new SideText();
  readonly asks = new SideText();

  /** `head`: the message up to the YES levels (see `bookHead`). */
  constructor(readonly head: string) {}
}

/** The start of a market's orderbook_update, up to and including `"yes":`. */
export function bookHead(marketId: string, slug: string): string {
  return `{"type":"orderbook_update","channel":"orderbook","market_id":${JSON.stringify(marketId)},"source":${JSON.stringify(slug)},"ready":true,"yes":`;
}

/**
 * The orderbook_update of a ready book as JSON text, written straight from the book's level arrays
 * (no level copies, no intermediate objects): the YES side as the sides stand (complemented when
 * they are the NO book's), the NO side the other way round, or empty for a YES-only venue. With
 * `text`, unchanged sides reuse their last text.
 */
export function bookJson(head: string, s: MarketSides, depth: number, yesOnly: boolean, text?: BookText): string {
  const c = s.complement;
  const yes = `{"bids":${sideJson(text?.bids, s.bids, depth, c)},"asks":${sideJson(text?.asks, s.asks, depth, c)}}`;
  const no = yesOnly ? '{"bids":[],"asks":[]}' : `{"bids":${sideJson(text?.asks, s.asks, depth, !c)},"asks":${sideJson(text?.bids, s.bids, depth, !c)}}`;
  return `${head}${yes},"no":${no}}`;
}

function sideJson(text: SideText | undefined, side: BookSide, depth: number, complement: boolean): string {
  return text ? text.levels(side, depth, complement) : levelsJson(side, depth, complement);
}
