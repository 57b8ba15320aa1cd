import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { VenueConfig } from '../../../src/config/schema.js';
import { parseDollars, parseDollarsAt, parseSize, parseSizeAt } from '../../../src/core/price.js';
import type { NormalizedEvent } from '../../../src/core/types.js';
import { FramePath } from '../../../src/venues/common/frames.js';
import { KalshiMapper } from '../../../src/venues/kalshi/mappers.js';
import { deltaText, scanDelta } from '../../../src/venues/kalshi/scan.js';

/**
 * The in-place read of `orderbook_delta` text frames (KalshiMapper.mapText): for every frame, the
 * frame path with text must end exactly where parsing and mapping the same frame ends (events,
 * counters, books), whether the fast path took the frame or left it to the full one.
 */

const venue: VenueConfig = loadConfig({ env: {} }).venues.find((v) => v.protocol === 'kalshi')!;
const L = 1_700_000_000_000;
const [SNAPSHOT, DELTA] = JSON.parse(readFileSync('test/fixtures/kalshi/ws_orderbook_snapshot_then_delta_spec_example.json', 'utf8')) as [
  Record<string, unknown>,
  { type: string; sid: number; seq: number; msg: Record<string, unknown> },
];
const TICKER = 'FED-23DEC-T3.00';

/** The spec example delta (compact, as the venue sends it) at `seq` with `msg` fields replaced. */
const delta = (seq: number, msg: Record<string, unknown> = {}): string => JSON.stringify({ ...DELTA, seq, msg: { ...DELTA.msg, ...msg } });
/** A delta that adds to the YES level at 0.22 of the example snapshot. */
const add = (seq: number, fp = '5.00'): string => delta(seq, { price_dollars: '0.2200', delta_fp: fp });

interface Run {
  readonly events: NormalizedEvent[];
  readonly mapper: KalshiMapper;
  /** Frames the mapper read in place. */
  fast: number;
}

/** A mapper that has the example snapshot, fed frame by frame through a frame path. */
function path(asText: boolean): { push(text: string): void; run: Run } {
  const mapper = new KalshiMapper(venue);
  const run: Run = { events: [], mapper, fast: 0 };
  const p = new FramePath(mapper, { next: (e) => run.events.push(e) });
  p.push(JSON.stringify(SNAPSHOT), L);
  if (asText) {
    const mapText = mapper.mapText.bind(mapper);
    mapper.mapText = (text, local, emit) => {
      const took = mapText(text, local, emit);
      if (took) run.fast++;
      return took;
    };
  }
  return {
    push: (text) => {
      let parsed: unknown = text;
      if (!asText)
        try {
          parsed = JSON.parse(text);
        } catch {
          // invalid JSON goes in as text, the one way the frame path can count it
        }
      p.push(parsed, L);
    },
    run,
  };
}

/** The state both paths end in: events, counters, the mapper's books and resync requests. */
function outcome(r: Run): unknown {
  const s = r.mapper.stats;
  return {
    events: r.events,
    stats: { frames: s.frames, events: s.events, ignored: s.ignored, gaps: s.gaps, malformed: [...s.malformed], unknown: [...s.unknown] },
    live: r.mapper.hasBook(TICKER),
    resync: r.mapper.takeResync(),
  };
}

function both(frames: readonly string[]): { text: Run; parsed: Run; push(text: string): void } {
  const a = path(true);
  const b = path(false);
  const push = (f: string): void => {
    a.push(f);
    b.push(f);
  };
  for (const f of frames) push(f);
  return { text: a.run, parsed: b.run, push };
}

describe('KalshiMapper.mapText: orderbook_delta read in place', () => {
  it('the plain frames the venue sends are read in place and map as the parsed frames do', () => {
    const frames = [add(3), add(4, '-2.50'), delta(5, { price_dollars: '0.5600', delta_fp: '4.00', side: 'no' }), add(6, '-335.50'), add(7, '1.123456')];
    const { text, parsed } = both(frames);
    expect(text.fast).toBe(frames.length);
    expect(outcome(text)).toEqual(outcome(parsed));
    expect(text.events.slice(-3)).toEqual([
      {
        type: 'book_delta',
        venue: 'venue_a',
        timestamp: 1669149841000,
        localTimestamp: L,
        marketId: TICKER,
        instrument: TICKER,
        changes: [['ask', 4400, 150]],
      },
      // 333 + 5 − 2.5 − 335.5: the level goes, and comes back with a fractional size.
      { type: 'book_delta', venue: 'venue_a', timestamp: 1669149841000, localTimestamp: L, marketId: TICKER, instrument: TICKER, changes: [['bid', 2200, 0]] },
      {
        type: 'book_delta',
        venue: 'venue_a',
        timestamp: 1669149841000,
        localTimestamp: L,
        marketId: TICKER,
        instrument: TICKER,
        changes: [['bid', 2200, 1.123456]],
      },
    ]);
  });

  it('keys in another order, unknown msg keys and no ts are read in place too', () => {
    const reordered = `{"seq":3,"msg":{"side":"yes","delta_fp":"5.00","client_order_id":"abc","price_dollars":"0.2200","n":-1.5,"ts_ms":1669149841000,"market_ticker":"${TICKER}"},"sid":2,"type":"orderbook_delta"}`;
    const { text, parsed } = both([reordered]);
    expect(text.fast).toBe(1);
    expect(outcome(text)).toEqual(outcome(parsed));
  });

  it('every other frame is left to the full path, which ends where parsing and mapping ends', () => {
    const variants = [
      add(3).replace(':', ': '), // whitespace
      add(3).replace(TICKER, 'FED-23DEC-T3\\u002e00'), // an escape (the same ticker once parsed)
      add(3).replace('"side":"yes"', '"side":"yes","side":"no"'), // a key twice: JSON.parse keeps the last
      add(3).replace('"seq":3', '"seq":03'), // not JSON
      add(3).replace(TICKER, 'FED\u0001'), // a control character: not JSON
      add(3).replace('"ts":"', '"ts":"\u0001'), // the same, in a field the fast path does not use
      add(3).replace('"sid":2', '"sid":2.0'), // an integer JSON writes another way
      add(3).replace('"ts_ms":1669149841000', '"ts_ms":1.669149841e12'),
      delta(3, { ts_ms: undefined }), // no ts_ms: the RFC 3339 ts is the time
      delta(3, { ts_ms: null }),
      delta(3, { price_dollars: undefined, price: 22 }), // legacy integer cents
      delta(3, { delta_fp: '0.00', price_dollars: '0.2200' }), // a zero change is ignored
      delta(3, { price_dollars: '1.0000', delta_fp: '5.00' }), // out of the book's range
      delta(3, { price_dollars: '0.2200', delta_fp: '5.0.0' }),
      delta(3, { price_dollars: '0.2200', delta_fp: '' }),
      delta(3, { price_dollars: '0.2200', delta_fp: '5.00', side: 'maybe' }),
      delta(3, { price_dollars: '0.2200', delta_fp: '5.00', market_ticker: '' }),
      delta(3, { price_dollars: '0.2200', delta_fp: '5.00', market_ticker: 'NO-SNAPSHOT' }),
      delta(3, { price_dollars: '0.9600', delta_fp: '-54.00' }), // leaves a negative size
      delta(3, { price_dollars: '0.2200', delta_fp: '-333.50' }), // by less than one contract
      `{"id":7,${add(3).slice(1)}`, // an envelope key the scanner does not know
      add(3).replace('"sid":2', '"sid":9'), // another sid
      add(3).slice(0, -5), // truncated
      `${add(3)} `,
    ];
    for (const v of variants) {
      const { text, parsed, push } = both([v]);
      expect(text.fast, v).toBe(0);
      push(add(4));
      push(add(5));
      expect(outcome(text), v).toEqual(outcome(parsed));
    }
  });

  it('a gap in seq is left to the full path: the sid resets and its deltas wait for a snapshot', () => {
    const { text, parsed } = both([add(3), add(5), add(6)]);
    expect(text.fast).toBe(1);
    expect(outcome(text)).toEqual(outcome(parsed));
    expect(text.mapper.hasBook(TICKER)).toBe(false);
    expect(text.mapper.awaiting()).toEqual([{ sid: 2, tickers: [TICKER] }]);
    text.mapper.reset();
    expect(text.mapper.awaiting()).toEqual([]);
  });

  it('the scanner refuses what JSON.parse would read differently', () => {
    const d = deltaText();
    expect(scanDelta(add(3), d)).toBe(true);
    expect(d).toMatchObject({ sid: 2, seq: 3, ticker: TICKER, yes: true, tsMs: 1669149841000 });
    expect(add(3).slice(d.priceStart, d.priceEnd)).toBe('0.2200');
    expect(add(3).slice(d.deltaStart, d.deltaEnd)).toBe('5.00');
    for (const bad of ['', '{}', '[]', add(3).replace('"sid":2', '"sid":-2'), add(3).replace('"seq":3', '"seq":1234567890123456'), add(3) + '}'])
      expect(scanDelta(bad, d), bad).toBe(false);
  });
});

describe('price parsing in place', () => {
  it('parseDollarsAt and parseSizeAt read a range as parseDollars and parseSize read its slice', () => {
    const sizes = [
      '300.00',
      '-54.00',
      '0',
      '-0.00',
      '1234.5',
      '.5',
      '1.',
      '1.123456',
      '1.1234567',
      '-0.000001',
      '99999999.999999',
      '123456789012345',
      '1e3',
      '',
      '-',
      '.',
      '--1',
      '+1',
      '1.2.3',
      '00012.50',
    ];
    for (const x of sizes) expect(parseSizeAt(`"${x}"`, 1, x.length + 1), x).toBe(parseSize(x));
    const prices = ['0.4800', '.48', '1', '0.5', '0.480000', '0.48001', '1.0000', '', '.', 'x'];
    for (const x of prices) expect(parseDollarsAt(`"${x}"`, 1, x.length + 1), x).toBe(parseDollars(x));
  });
});
