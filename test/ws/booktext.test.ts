import { describe, expect, it } from 'vitest';
import { OrderBook } from '../../src/core/book.js';
import type { Level } from '../../src/core/types.js';
import { PAYOUT, roundSize, toCents } from '../../src/core/price.js';
import { loadConfig } from '../../src/config/load.js';
import type { QuoteRecord } from '../../src/state/quotes.js';
import { quotePrices } from '../../src/views/market.js';
import { centsText, NumText, plainAscii, priceBytes, readBytes, readJson, sizeText, TextBytes } from '../../src/ws/booktext.js';
import { priceBody } from '../../src/ws/hub.js';

describe('orderbook_update text (src/ws/booktext.ts)', () => {
  it('writes every price in 0..PAYOUT units as String(toCents(units)), and any other number as String does', () => {
    for (let u = 0; u <= PAYOUT; u++) expect(centsText(u)).toBe(String(toCents(u)));
    for (const u of [-1, PAYOUT + 1, 12.5, 1e21]) expect(centsText(u)).toBe(String(toCents(u)));
  });

  it('writes sizes as String does: integers, millionths, and numbers that are neither', () => {
    const sizes = [0, 1, 7, 300, 2 ** 31, 2 ** 53, 0.5, 0.01, 0.000001, 12.34, 1234.5, 999_999_999.999999, 1e9 + 0.5, 1e21, -54.25, 0.1 + 0.2, 1e-7, 1 / 3];
    // The sizes the mappers produce: parsed wire strings rounded to millionths, and sums of them.
    let x = 0.37;
    for (let i = 0; i < 20_000; i++) {
      x = (x * 7919 + 0.137) % 1;
      sizes.push(roundSize(x * 10 ** (i % 9)), roundSize(Math.floor(x * 1e6) / 100));
    }
    for (const s of sizes) expect(sizeText(s)).toBe(String(s));
    const w = new TextBytes();
    for (const s of [...sizes, -0, -1, 2 ** 53 + 2, NaN, Infinity]) {
      w.reset();
      w.size(s);
      expect(w.view().toString('latin1')).toBe(String(s));
      w.reset();
      w.num(s);
      expect(w.view().toString('latin1')).toBe(String(s));
    }
  });

  it('writes integers as String does, below and above 2^31 and with zeros inside, and again from a slot as they repeat and change', () => {
    const w = new TextBytes();
    const slot = new NumText();
    const edges = [
      0,
      9,
      10,
      99_999_999,
      100_000_000,
      100_000_005,
      2 ** 31 - 1,
      2 ** 31,
      1_795_953_600_000,
      1_795_953_600_007,
      1e15 + 3,
      Number.MAX_SAFE_INTEGER,
    ];
    let x = 0.29;
    const next = (): number => (x = (x * 7919 + 0.113) % 1);
    const seeded = Array.from({ length: 2_000 }, () => Math.floor(next() * 10 ** Math.floor(next() * 16)));
    for (const n of [...edges, ...seeded, ...seeded.slice(0, 50).flatMap((n) => [n, n, n + 1])]) {
      w.reset();
      w.num(n);
      w.char(44);
      w.numVia(slot, n);
      expect(w.view().toString('latin1')).toBe(`${n},${n}`);
    }
  });

  it('writes the whole message as JSON.stringify would, from the YES book and from the NO book, at any depth', () => {
    const book = new OrderBook('KX-"1"');
    book.snapshot(
      [
        [5450, 10.25],
        [5400, 300],
        [5305, 0.000001],
      ],
      [[5795, 12.5]],
      0,
    );
    const cents = (levels: Level[], flip: boolean): [number, number][] => levels.map(([p, z]) => [toCents(flip ? PAYOUT - p : p), z]);
    const bids = book.bids.levels();
    const asks = book.asks.levels();
    const head = { type: 'orderbook_update', channel: 'orderbook', market_id: 'KX-"1"', source: 'venue_a', ready: true };
    expect(readJson('KX-"1"', 'venue_a', { book, complement: false }, 20, false)).toBe(
      JSON.stringify({ ...head, yes: { bids: cents(bids, false), asks: cents(asks, false) }, no: { bids: cents(asks, true), asks: cents(bids, true) } }),
    );
    // Read as a market's NO book: its asks are the YES bids, complemented; two levels a side, YES only.
    expect(readJson('KX-"1"', 'venue_a', { book, complement: true }, 2, true)).toBe(
      JSON.stringify({ ...head, yes: { bids: cents(asks, true).slice(0, 2), asks: cents(bids, true).slice(0, 2) }, no: { bids: [], asks: [] } }),
    );
  });

  it('writes the same message as bytes as readJson writes as text, over seeded books of every shape', () => {
    let x = 0.41;
    const next = (): number => (x = (x * 7919 + 0.173) % 1);
    const w = new TextBytes();
    for (let k = 0; k < 300; k++) {
      const book = new OrderBook(`KX-${k}`);
      book.snapshot([], [], 0);
      for (let i = Math.floor(next() * 25); i > 0; i--)
        book.apply([['bid', 1 + Math.floor(next() * 4999), roundSize(next() * 10 ** Math.floor(next() * 7))]], 0);
      for (let i = Math.floor(next() * 25); i > 0; i--) book.apply([['ask', 5000 + Math.floor(next() * 4999), Math.floor(next() * 5000)]], 0);
      const read = { book, complement: k % 3 === 0 };
      const depth = k % 4 === 0 ? 3 : 20;
      const yesOnly = k % 5 === 0;
      w.reset();
      readBytes(w, `KX-${k}`, 'venue_a', read, depth, yesOnly);
      expect(`${w.view().toString('latin1')}}`).toBe(readJson(`KX-${k}`, 'venue_a', read, depth, yesOnly));
    }
  });

  it('writes a book as readJson does after every change, snapshot, reset and depth', () => {
    let x = 0.57;
    const next = (): number => (x = (x * 7919 + 0.229) % 1);
    const w = new TextBytes();
    const books = [new OrderBook('KX-A'), new OrderBook('KX-B')];
    for (const b of books) b.snapshot([[4000, 10]], [[6000, 2.5]], 0);
    for (let k = 0; k < 3_000; k++) {
      const b = books[k % 2]!;
      const r = next();
      if (r < 0.01) b.reset();
      else if (r < 0.03) b.snapshot([[1000 + Math.floor(next() * 3000), 1]], [[5000 + Math.floor(next() * 3000), 3]], k);
      else if (b.ready) {
        const bid = next() < 0.5;
        const price = bid ? 1 + Math.floor(next() * 4998) : 5000 + Math.floor(next() * 4999);
        b.apply([[bid ? 'bid' : 'ask', price, next() < 0.3 ? 0 : roundSize(next() * 10 ** Math.floor(next() * 5))]], k);
      }
      // Every third message reads the book as a market's NO book.
      const read = { book: b, complement: k % 3 === 0 };
      const depth = k % 7 === 0 ? 3 : 20;
      // Now and then a YES-only message, which writes one form of a side's text and leaves the other for later.
      const yesOnly = k % 11 === 0;
      w.reset();
      readBytes(w, b.instrument, 'venue_a', read, depth, yesOnly);
      expect(`${w.view().toString('latin1')}}`).toBe(readJson(b.instrument, 'venue_a', read, depth, yesOnly));
    }
  });

  it('takes only ids whose JSON is the id in quotes as plain ASCII', () => {
    for (const id of ['KXBTC-25DEC31-T100000', '0xabc', 'a b~', '']) expect(plainAscii(id)).toBe(true);
    for (const id of ['KX-"1"', 'a\\b', 'é', 'tab\t', '\u2028', '\ud800']) expect(plainAscii(id)).toBe(false);
  });

  it("writes a price_update as bytes as JSON.stringify writes the hub's body, on every venue, with missing fields as null", () => {
    const w = new TextBytes();
    let x = 0.29;
    const next = (): number => (x = (x * 7919 + 0.311) % 1);
    const maybe = (v: number): number | undefined => (next() < 0.2 ? undefined : v);
    for (const v of loadConfig({ env: {} }).venues)
      for (let k = 0; k < 200; k++) {
        const bid = Math.floor(next() * 9000) + 1;
        const q: QuoteRecord = {
          venue: v.label,
          marketId: `M-${k}`,
          yesBid: maybe(bid),
          yesAsk: maybe(bid + 1 + Math.floor(next() * 500)),
          lastPrice: maybe(Math.floor(next() * 10_000)),
          volume: maybe(k % 3 === 0 ? roundSize(next() * 1e6) : Math.floor(next() * 1e7)),
          fromBook: true,
          updatedAt: 0,
          version: 1,
        };
        w.reset();
        priceBytes(w, q.marketId, v.slug, quotePrices(v, q), q.volume);
        expect(`${w.view().toString('latin1')}}`).toBe(JSON.stringify(priceBody(v, q, false)));
      }
  });
});
