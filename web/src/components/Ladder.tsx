import { cents, size } from '../format.js';
import { NumTh } from './NumTh.js';

import type { Book, Level } from '../book.js';

export type { Book, Level } from '../book.js';

/** Levels drawn per side: a fixed count, so the ladder keeps its height as the book moves. */
const DEPTH = 10;

/**
 * One side of a market's book as a ladder: asks above (best at the bottom), the spread, bids below
 * (best at the top), prices in cents. Empty slots keep the rows in place.
 */
export function Ladder({ label, book }: { label: string; book: Book }) {
  const asks = pad(book.asks.slice(0, DEPTH)).reverse();
  const bids = pad(book.bids.slice(0, DEPTH));
  const bestBid = book.bids[0]?.[0];
  const bestAsk = book.asks[0]?.[0];
  const max = Math.max(1, ...book.asks.slice(0, DEPTH).map((l) => l[1]), ...book.bids.slice(0, DEPTH).map((l) => l[1]));
  return (
    <table class="ladder" aria-label={`${label} order book`}>
      <caption>{label}</caption>
      <thead>
        <tr>
          <NumTh>Price</NumTh>
          <NumTh>Size</NumTh>
        </tr>
      </thead>
      <tbody>
        {asks.map((l, i) => (
          <LevelRow key={`a${i}`} side="ask" level={l} max={max} />
        ))}
        <tr class="spread">
          <td colSpan={2}>spread {bestBid !== undefined && bestAsk !== undefined ? cents(Math.round((bestAsk - bestBid) * 100) / 100) : '—'}</td>
        </tr>
        {bids.map((l, i) => (
          <LevelRow key={`b${i}`} side="bid" level={l} max={max} />
        ))}
      </tbody>
    </table>
  );
}

function LevelRow({ side, level, max }: { side: 'bid' | 'ask'; level: Level | undefined; max: number }) {
  if (!level)
    return (
      <tr class={`lvl ${side} blank`}>
        <td class="num">&nbsp;</td>
        <td class="num" />
      </tr>
    );
  return (
    <tr class={`lvl ${side}`} data-price={level[0]}>
      <td class="num">{cents(level[0])}</td>
      <td class="num depth" style={{ '--w': `${Math.round((level[1] / max) * 100)}%` }}>
        {size(level[1])}
      </td>
    </tr>
  );
}

function pad(levels: readonly Level[]): (Level | undefined)[] {
  const out: (Level | undefined)[] = [...levels];
  while (out.length < DEPTH) out.push(undefined);
  return out;
}
