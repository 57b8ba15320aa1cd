import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp.js';
import { describe, expect, it } from 'vitest';
import { normalizeFile, readFrames } from '../../src/cli/normalize.js';
import { loadConfig } from '../../src/config/load.js';

const config = loadConfig({ env: {} });
const fx = (p: string): string => join(__dirname, '../fixtures', p);

function run(protocol: string, file: string, book = false): { out: string[]; err: string[]; code: number } {
  const out: string[] = [];
  const err: string[] = [];
  const code = normalizeFile(
    config,
    protocol,
    file,
    { book },
    (s) => out.push(s),
    (s) => err.push(s),
  );
  return { out, err, code };
}

/** Independent expectation: parse the raw levels with Number and sort best first. */
const cents = (p: string): number => Math.round(Number(p) * 10_000) / 100;

describe('crossbook normalize --book rebuilds real recorded books exactly', () => {
  it('Kalshi REST orderbooks: YES bids, and YES asks = 100 − NO bids, best first', () => {
    const raw = JSON.parse(readFileSync(fx('kalshi/rest_markets_orderbooks_KXNEXTDNCCHAIR-45_2026-09-13.json'), 'utf8')) as {
      orderbooks: { ticker: string; orderbook_fp: { yes_dollars: [string, string][]; no_dollars: [string, string][] } }[];
    };
    const r = run('kalshi', fx('kalshi/rest_markets_orderbooks_KXNEXTDNCCHAIR-45_2026-09-13.json'), true);
    expect(r.code).toBe(0);
    const books = JSON.parse(r.out[0]!) as Record<string, { bids: number[][]; asks: number[][] }>;
    for (const ob of raw.orderbooks) {
      const bids = ob.orderbook_fp.yes_dollars.map(([p, s]) => [cents(p), Number(s)]).sort((a, b) => b[0]! - a[0]!);
      const asks = ob.orderbook_fp.no_dollars.map(([p, s]) => [Math.round((100 - cents(p)) * 100) / 100, Number(s)]).sort((a, b) => a[0]! - b[0]!);
      expect(books[ob.ticker], ob.ticker).toEqual({ bids, asks });
    }
  });

  it('Polymarket book captures: every asset, bids descending, asks ascending', () => {
    for (const file of ['polymarket/ws_book_capture_2026-08-13.json', 'polymarket/ws_book_captures_2026-02-12.json']) {
      const doc = JSON.parse(readFileSync(fx(file), 'utf8')) as unknown;
      const frames = (Array.isArray(doc) ? doc : [doc]) as {
        asset_id: string;
        bids: { price: string; size: string }[];
        asks: { price: string; size: string }[];
      }[];
      const r = run('polymarket', fx(file), true);
      const books = JSON.parse(r.out[0]!) as Record<string, { bids: number[][]; asks: number[][] }>;
      for (const f of frames) {
        const bids = f.bids.map((l) => [cents(l.price), Number(l.size)]).sort((a, b) => b[0]! - a[0]!);
        const asks = f.asks.map((l) => [cents(l.price), Number(l.size)]).sort((a, b) => a[0]! - b[0]!);
        expect(books[f.asset_id], `${file} ${f.asset_id}`).toEqual({ bids, asks });
      }
    }
  });

  it('prints normalized events as JSON lines and reports gaps and malformed frames', () => {
    const r = run('kalshi', fx('kalshi/ws_orderbook_snapshot_then_delta_spec_example.json'));
    const evs = r.out.map((l) => JSON.parse(l) as { type: string; state?: string });
    expect(evs[0]).toMatchObject({
      type: 'book_snapshot',
      instrument: 'FED-23DEC-T3.00',
      bids: [
        [2200, 333],
        [800, 300],
      ],
      asks: [
        [4400, 146],
        [4600, 20],
      ],
    });
    // the docs' made-up delta removes 54 contracts from an empty level: reported, book reset
    expect(evs[1]).toMatchObject({ type: 'feed', state: 'gap' });
    expect(r.err.join('\n')).toMatch(/sequence gaps: 1/);

    const dir = tempDir('cb-norm-');
    const lines = join(dir, 'frames.jsonl');
    writeFileSync(lines, `${readFileSync(fx('kalshi/ws_ticker_spec_example.json'), 'utf8').replace(/\n\s*/g, '')}\n{"type": "ticker", "msg": \n`);
    const j = run('kalshi', lines);
    expect(j.code).toBe(0);
    expect(j.err.join('\n')).toMatch(/malformed frames dropped: json=1/);
  });

  it('refuses an unknown protocol and an unreadable file', () => {
    expect(run('nasdaq', fx('kalshi/ws_ticker_spec_example.json')).code).toBe(2);
    expect(run('kalshi', '/nonexistent/file.json').err[0]).toMatch(/cannot read/);
  });

  it('reads arrays, single documents and JSON lines', () => {
    expect(readFrames('[{"a":1},{"b":2}]')).toEqual([{ a: 1 }, { b: 2 }]);
    expect(readFrames('{\n  "a": 1\n}')).toEqual([{ a: 1 }]);
    expect(readFrames('{"a":1}\n{"b":2}\n')).toEqual(['{"a":1}', '{"b":2}']);
  });
});
