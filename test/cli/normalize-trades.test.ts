import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { normalizeFile } from '../../src/cli/normalize.js';
import { loadConfig } from '../../src/config/load.js';

const config = loadConfig({ env: {} });
const fx = (p: string): string => join(__dirname, '../fixtures', p);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function run(file: string, markets?: string): { out: Record<string, unknown>[]; err: string[]; code: number } {
  const out: string[] = [];
  const err: string[] = [];
  const code = normalizeFile(
    config,
    'polymarket',
    file,
    { markets },
    (s) => out.push(s),
    (s) => err.push(s),
  );
  return { out: out.map((l) => JSON.parse(l) as Record<string, unknown>), err, code };
}

/** The real frames (ssmd capture, 2026-02-12): ten `last_trade_price` of three tokens, no market list. */
const TRADES = fx('polymarket/ws_last_trade_price_captures_2026-02-12.json');
const RAW = JSON.parse(readFileSync(TRADES, 'utf8')) as { asset_id: string; market: string; price: string; side: string; size: string; timestamp: string }[];
const UNTRACKED = /last_trade_price of a token of no known market: emitted in its own terms, YES\/NO side unknown=(\d+)/;

describe('crossbook normalize --protocol polymarket on real last_trade_price frames', () => {
  it('without a market list: every trade in its token own terms, the YES/NO side marked unknown, and says so on stderr', () => {
    const r = run(TRADES);
    expect(r.code).toBe(0);
    expect(r.out).toHaveLength(RAW.length);
    r.out.forEach((t, i) => {
      const f = RAW[i]!;
      expect(t).toMatchObject({
        type: 'trade',
        venue: 'venue_b',
        marketId: f.market,
        instrument: f.asset_id,
        price: Math.round(Number(f.price) * 10_000),
        size: Number(f.size),
        side: f.side === 'BUY' ? 'buy' : 'sell',
        timestamp: Number(f.timestamp),
        yesPrice: null,
        takerSide: 'unknown',
      });
    });
    expect(r.err.join('\n')).toMatch(UNTRACKED);
    expect(UNTRACKED.exec(r.err.join('\n'))![1]).toBe('10');
  });

  it('with a market list that does not name these tokens (a real Gamma market): the list is read, the trades stay side-unknown', () => {
    const r = run(TRADES, fx('polymarket/gamma_market_btc_updown_5m.json'));
    expect(r.code).toBe(0);
    expect(r.err[0]).toBe('market list: 1 markets learned');
    expect(r.out.filter((t) => t['type'] === 'market')).toEqual([]);
    expect(r.out.every((t) => t['takerSide'] === 'unknown')).toBe(true);
    expect(UNTRACKED.exec(r.err.join('\n'))![1]).toBe('10');
  });

  it('says what was dropped, per reason, and that nothing came out, when nothing did', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cb-normt-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const docs = JSON.parse(readFileSync(fx('polymarket/ws_market_channel_docs_examples.json'), 'utf8')) as Record<string, unknown>[];
    const file = join(dir, 'frames.json');
    writeFileSync(file, JSON.stringify([docs[0], docs.find((d) => d['event_type'] === 'tick_size_change'), { event_type: 'order_book_v9' }, '{"event_type":']));
    const r = run(file);
    expect(r.out).toEqual([]);
    const err = r.err.join('\n');
    expect(err).toMatch(/malformed frames dropped: json=1/);
    expect(err).toMatch(/unknown frames dropped: order_book_v9=1/);
    expect(err).toMatch(/frames ignored \(nothing to map\): 2/);
    expect(err).toMatch(/by reason: subscribe message=1, tick_size_change \(levels unchanged\)=1/);
    expect(err).toMatch(/no events: every frame was dropped or ignored/);
  });

  it('a real book → price_change → book burst: no gap, the leading best price reported as a warning, the book the venue sent', () => {
    const file = fx('polymarket/ws_price_change_burst_capture_2026-09-29.json');
    const r = run(file);
    expect(r.code).toBe(0);
    const err = r.err.join('\n');
    expect(err).not.toMatch(/sequence gaps/);
    expect(err).toMatch(/best_bid\/best_ask ahead of the levels \(a warning; a gap only if it persists\)=1/);
    const frames = JSON.parse(readFileSync(file, 'utf8')) as {
      asset_id?: string;
      bids?: { price: string; size: string }[];
      asks?: { price: string; size: string }[];
    }[];
    const last = frames[frames.length - 1]!;
    const books: string[] = [];
    normalizeFile(
      config,
      'polymarket',
      file,
      { book: true },
      (s) => books.push(s),
      () => undefined,
    );
    const cents = (l: { price: string; size: string }): number[] => [Math.round(Number(l.price) * 10_000) / 100, Number(l.size)];
    expect((JSON.parse(books[0]!) as Record<string, unknown>)[last.asset_id!]).toEqual({
      bids: last.bids!.map(cents).sort((a, b) => b[0]! - a[0]!),
      asks: last.asks!.map(cents).sort((a, b) => a[0]! - b[0]!),
    });
  });
});
