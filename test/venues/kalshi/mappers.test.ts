import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { VenueConfig } from '../../../src/config/schema.js';
import type { NormalizedEvent } from '../../../src/core/types.js';
import { parseFrame } from '../../../src/venues/common/frames.js';
import { KalshiMapper, kalshiStatus, mapRestOrderbooks } from '../../../src/venues/kalshi/mappers.js';
import { kalshiOrderbooksSchema } from '../../../src/venues/kalshi/raw.js';

const venue: VenueConfig = loadConfig({ env: {} }).venues.find((v) => v.protocol === 'kalshi')!;
const L = 1_700_000_000_000;
const DIR = 'test/fixtures/kalshi/';
const fixture = (name: string): unknown => JSON.parse(readFileSync(DIR + name, 'utf8')) as unknown;
const run = (m: KalshiMapper, raw: unknown, local = L): NormalizedEvent[] => [...m.map(raw, local)];
const fresh = (): KalshiMapper => new KalshiMapper(venue);
const base = { venue: 'venue_a', timestamp: L, localTimestamp: L } as const;

describe('KalshiMapper: WebSocket fixtures (golden)', () => {
  it('orderbook snapshot then delta (spec example): YES perspective, and the example delta drives a size negative', () => {
    const m = fresh();
    const out = run(m, fixture('ws_orderbook_snapshot_then_delta_spec_example.json'));
    expect(out).toEqual([
      {
        type: 'book_snapshot',
        ...base,
        marketId: 'FED-23DEC-T3.00',
        instrument: 'FED-23DEC-T3.00',
        // YES bids 0.22 x 333, 0.08 x 300; NO bids 0.56 x 146 → ask 0.44, 0.54 x 20 → ask 0.46.
        bids: [
          [2200, 333],
          [800, 300],
        ],
        asks: [
          [4400, 146],
          [4600, 20],
        ],
      },
      // The documented delta takes 54 off a YES level at 0.96 that the documented snapshot does
      // not have: the book is reset, not corrupted.
      { type: 'feed', ...base, state: 'gap', detail: 'delta -54.00 at yes 0.9600 leaves size -54', instrument: 'FED-23DEC-T3.00' },
    ]);
    expect(m.takeResync()).toEqual([{ sid: 2, tickers: ['FED-23DEC-T3.00'] }]);
    expect(m.hasBook('FED-23DEC-T3.00')).toBe(false);
    expect(m.stats.gaps).toBe(1);
  });

  it('ticker (spec example)', () => {
    expect(run(fresh(), fixture('ws_ticker_spec_example.json'))).toEqual([
      {
        type: 'quote',
        venue: 'venue_a',
        timestamp: 1669149841000,
        localTimestamp: L,
        marketId: 'FED-23DEC-T3.00',
        yesBid: 4500,
        yesAsk: 5300,
        lastPrice: 4800,
        volume: 33896,
        openInterest: 20422,
      },
    ]);
  });

  it('ticker capture with legacy fields: yes_ask 1.0000 and price 0 are "none", zero volume is a real 0', () => {
    const q = (marketId: string, f: Record<string, number | undefined>): Record<string, unknown> => {
      const o: Record<string, unknown> = { type: 'quote', venue: 'venue_a', timestamp: 1770897976000, localTimestamp: L, marketId };
      for (const [k, v] of Object.entries(f)) if (v !== undefined) o[k] = v;
      return o;
    };
    expect(run(fresh(), fixture('ws_ticker_capture_2026-02-12.json'))).toEqual([
      q('KXXRP-26FEB1317-B1.3899500', { yesBid: 400, yesAsk: 9500, lastPrice: 1400, volume: 13446, openInterest: 892 }),
      q('KXETHD-26FEB1217-T1819.99', { yesBid: 9800, lastPrice: 9700, volume: 1170, openInterest: 314 }),
      q('KXETHD-26FEB1217-T1779.99', { yesBid: 9700, volume: 0, openInterest: 0 }),
      q('KXETHMINMON-ETH-26FEB28-175000', { yesBid: 3700, yesAsk: 4200, lastPrice: 4100, volume: 108588, openInterest: 43484 }),
      q('KXETHD-26FEB1317-T1899.99', { yesBid: 8000, yesAsk: 8600, lastPrice: 7600, volume: 34518, openInterest: 14920 }),
      q('KXSOLD-26FEB1317-T73.9999', { yesBid: 8900, yesAsk: 9700, lastPrice: 8300, volume: 4, openInterest: 4 }),
      q('KXETHD-26FEB1317-T1539.99', { yesBid: 9800, lastPrice: 9500, volume: 4, openInterest: 2 }),
      q('KXETHD-26FEB1317-T1579.99', { yesBid: 1800, lastPrice: 9900, volume: 10002, openInterest: 10002 }),
      q('KXETHD-26FEB1317-T1619.99', { yesBid: 1800, volume: 0, openInterest: 0 }),
      q('KXBTCD-26FEB1217-T72749.99', { yesBid: 200, yesAsk: 700, volume: 0, openInterest: 0 }),
    ]);
  });

  it('legacy ticker_v2: last price only (its volumes are deltas)', () => {
    expect(run(fresh(), fixture('ws_ticker_v2_legacy_docs_example.json'))).toEqual([
      { type: 'quote', venue: 'venue_a', timestamp: 1669149841000, localTimestamp: L, marketId: 'FED-23DEC-T3.00', lastPrice: 4800 },
    ]);
  });

  it('trade (spec example)', () => {
    expect(run(fresh(), fixture('ws_trade_spec_example.json'))).toEqual([
      {
        type: 'trade',
        venue: 'venue_a',
        timestamp: 1669149841000,
        localTimestamp: L,
        marketId: 'HIGHNY-22DEC23-B53.5',
        instrument: 'HIGHNY-22DEC23-B53.5',
        tradeId: 'd91bc706-ee49-470d-82d8-11418bda6fed',
        price: 3600,
        yesPrice: 3600,
        size: 136,
        side: 'sell',
        takerSide: 'no',
      },
    ]);
  });

  it('market_lifecycle_v2 channel: created → market; structure/metadata/event frames counted, not emitted', () => {
    const m = fresh();
    expect(run(m, fixture('ws_market_lifecycle_v2_spec_examples.json'))).toEqual([
      {
        type: 'market',
        ...base,
        marketId: 'INXD-23SEP14-B4487',
        title: 'S&P 500 closes up by 0.02% or more',
        eventTitle: 'S&P 500 daily return on Sep 14',
        eventId: 'INXD-23SEP14',
        seriesId: 'INXD',
        outcome: 'S&P 500 closes up 0.02%+',
        status: 'active',
        openTime: 1694635200000,
        closeTime: 1694721600000,
        url: 'https://kalshi.com/markets/inxd/inxd-23sep14/inxd-23sep14-b4487',
        yesInstrument: 'INXD-23SEP14-B4487',
        extra: {
          rules_primary: 'The S&P 500 index level at 4:00 PM ET...',
          rules_secondary: '',
          open_time: '2023-09-13T20:00:00.000Z',
          close_time: '2023-09-14T20:00:00.000Z',
          expected_expiration_time: '2023-09-14T20:00:00.000Z',
          can_close_early: true,
          price_level_structure: 'linear_cent',
          combo: false,
          strike_type: 'greater',
          floor_strike: 4487,
        },
      },
    ]);
    expect(m.stats.ignored).toBe(6);
    expect(m.stats.gaps).toBe(0);
    expect(m.stats.malformedTotal).toBe(0);
  });

  it('control responses: acks yield nothing, errors become feed errors', () => {
    const m = fresh();
    const err = (detail: string): Record<string, unknown> => ({ type: 'feed', ...base, state: 'error', detail });
    expect(run(m, fixture('ws_control_responses_spec_examples.json'))).toEqual([
      err('code 7: Unknown subscription ID (command 123)'),
      err('code 8: Unknown channel name (command 124)'),
      err('code 2: Params required (command 125)'),
      err('code 9: Authentication required (command 126)'),
      err('code 14: Market Ticker required (command 127)'),
    ]);
    expect(m.stats.ignored).toBe(4);
    expect(m.stats.malformedTotal).toBe(0);
  });

  it('demo capture in arrival order: the ok ack used seq 108 of sid 1, so a seq 1 on sid 1 is a gap; an empty snapshot is an empty book', () => {
    const m = fresh();
    expect(run(m, fixture('ws_demo_capture_control_and_edge_frames_2026-08-27.json'))).toEqual([
      { type: 'feed', ...base, state: 'error', detail: 'code 8: Unknown channel name (command 3)' },
      { type: 'feed', ...base, state: 'gap', detail: 'sid 1: seq expected 109, got 1', instrument: 'sid:1' },
      { type: 'book_snapshot', ...base, marketId: 'KXBTCD-25AUG2617-T112999.99', instrument: 'KXBTCD-25AUG2617-T112999.99', bids: [], asks: [] },
    ]);
    expect(m.hasBook('KXBTCD-25AUG2617-T112999.99')).toBe(true);
  });
});

const RAD_RULES_PRIMARY =
  "If Rafal Adach wins the Grzegorz Sawicki vs Rafal Adach men's professional TT Elite Series table tennis match originally scheduled for Sep 13, 2026 at 11:10 AM EDT, then the market resolves to Yes.";
const GSA_RULES_PRIMARY =
  "If Grzegorz Sawicki wins the Grzegorz Sawicki vs Rafal Adach men's professional TT Elite Series table tennis match originally scheduled for Sep 13, 2026 at 11:10 AM EDT, then the market resolves to Yes.";
const TT_RULES_SECONDARY =
  'If the match is postponed but begins within 48 hours of its originally scheduled start time, the market will remain open and resolve based on the official final result. If the match is cancelled or postponed more than 48 hours from its originally scheduled start, all markets will resolve to $0.50.\n\nKalshi is not affiliated, associated, authorized, endorsed by, or in any way officially connected with the Governing League. All trademarks, logos, and brand names are the property of their respective owners.';

describe('KalshiMapper: REST fixtures (golden)', () => {
  it('GET /markets page → market upserts', () => {
    const tt = (suffix: 'RAD' | 'GSA', title: string, outcome: string, rules: string): Record<string, unknown> => ({
      type: 'market',
      ...base,
      marketId: `KXTTELITEMATCH-26SEP131110GSARAD-${suffix}`,
      title,
      eventId: 'KXTTELITEMATCH-26SEP131110GSARAD',
      seriesId: 'KXTTELITEMATCH',
      outcome,
      status: 'active',
      openTime: 1789283700000,
      closeTime: 1789917000000,
      url: `https://kalshi.com/markets/kxttelitematch/kxttelitematch-26sep131110gsarad/kxttelitematch-26sep131110gsarad-${suffix.toLowerCase()}`,
      yesInstrument: `KXTTELITEMATCH-26SEP131110GSARAD-${suffix}`,
      volume: 0,
      openInterest: 0,
      liquidity: 0,
      extra: {
        venue_status: 'active',
        market_type: 'binary',
        rules_primary: rules,
        rules_secondary: TT_RULES_SECONDARY,
        created_time: '2026-09-13T07:11:10.304627Z',
        open_time: '2026-09-13T07:15:00Z',
        close_time: '2026-09-20T15:10:00Z',
        updated_time: '2026-09-13T07:15:00.301944Z',
        expiration_time: '2026-09-20T15:10:00Z',
        expected_expiration_time: '2026-09-13T18:10:00Z',
        latest_expiration_time: '2026-09-20T15:10:00Z',
        volume_fp: '0.00',
        open_interest_fp: '0.00',
        combo: false,
        can_close_early: true,
        price_level_structure: 'linear_cent',
      },
    });
    expect(run(fresh(), fixture('rest_markets_page_first2_2026-09-13.json'))).toEqual([
      tt('RAD', 'Rafal Adach wins', 'Rafal Adach', RAD_RULES_PRIMARY),
      tt('GSA', 'Grzegorz Sawicki wins', 'Grzegorz Sawicki', GSA_RULES_PRIMARY),
    ]);
  });

  it('GET /series then GET /events/{t}?with_nested_markets → upsert with series category, tags and fees', () => {
    const m = fresh();
    expect(run(m, fixture('rest_series_subset_2026-09-13.json'))).toEqual([]);
    expect(m.seriesInfo('KXELONMARS')?.category).toBe('Politics');
    expect(run(m, fixture('rest_event_with_nested_markets_KXELONMARS-99_2026-09-13.json'))).toEqual([
      {
        type: 'market',
        ...base,
        marketId: 'KXELONMARS-99',
        title: 'Will Elon Musk visit Mars before Aug 1, 2099?',
        eventTitle: 'Will Elon Musk visit Mars in his lifetime?',
        seriesTitle: 'Elon Mars',
        eventId: 'KXELONMARS-99',
        seriesId: 'KXELONMARS',
        outcome: 'Mars',
        category: 'Politics',
        tags: ['International'],
        status: 'active',
        openTime: 1756413900000,
        closeTime: 4089243540000,
        url: 'https://kalshi.com/markets/kxelonmars/kxelonmars-99/kxelonmars-99',
        yesInstrument: 'KXELONMARS-99',
        volume: 118665.05,
        openInterest: 40113.58,
        liquidity: 0,
        extra: {
          venue_status: 'active',
          market_type: 'binary',
          rules_primary: 'If Elon Musk visits Mars before the earlier of his death or Aug 1, 2099, then the market resolves to Yes.',
          rules_secondary: '',
          created_time: '2025-08-28T20:40:16.168768Z',
          open_time: '2025-08-28T20:45:00Z',
          close_time: '2099-08-01T04:59:00Z',
          updated_time: '2026-04-09T09:31:16.616867Z',
          expiration_time: '2099-08-08T15:00:00Z',
          expected_expiration_time: '2099-08-01T15:00:00Z',
          latest_expiration_time: '2099-08-08T15:00:00Z',
          volume_fp: '118665.05',
          open_interest_fp: '40113.58',
          combo: false,
          can_close_early: true,
          price_level_structure: 'linear_cent',
          fee_type: 'quadratic',
          fee_multiplier: 1,
          frequency: 'custom',
        },
      },
    ]);
  });

  it('the same event without the series known: category from the event, no tags or fees', () => {
    const [up] = run(fresh(), fixture('rest_event_with_nested_markets_KXELONMARS-99_2026-09-13.json'));
    expect(up).toMatchObject({ type: 'market', category: 'World', seriesId: 'KXELONMARS' });
    expect(up).not.toHaveProperty('tags');
    expect(up).not.toHaveProperty('seriesTitle');
    expect((up as { extra: Record<string, unknown> }).extra).not.toHaveProperty('fee_type');
  });

  it('GET /markets/orderbooks → snapshots: ascending REST bids become best-first YES bids and asks; sub-penny prices exact', () => {
    const doc = kalshiOrderbooksSchema.parse(fixture('rest_markets_orderbooks_KXNEXTDNCCHAIR-45_2026-09-13.json'));
    const out = mapRestOrderbooks(venue, doc, L, L);
    expect(out).toHaveLength(34);
    const snap = (ticker: string, bids: [number, number][], asks: [number, number][]): Record<string, unknown> => ({
      type: 'book_snapshot',
      ...base,
      marketId: ticker,
      instrument: ticker,
      bids,
      asks,
    });
    expect(out[0]).toEqual(
      snap(
        'KXNEXTDNCCHAIR-45-BWIK',
        [],
        [
          [810, 200],
          [4400, 49],
          [4500, 749],
          [4600, 1051],
          [4800, 36],
          [5000, 103.84],
          [5800, 296],
          [8000, 32],
          [8400, 143],
          [8500, 1410.99],
          [9700, 4950],
          [9800, 4230],
          [9900, 2704],
          [9990, 29840],
        ],
      ),
    );
    expect(out[1]).toEqual(snap('KXNEXTDNCCHAIR-45-JKLE', [], [[540, 200]]));
    expect(out[2]).toEqual(
      snap(
        'KXNEXTDNCCHAIR-45-MKEN',
        [],
        [
          [100, 12],
          [430, 4],
          [530, 200],
          [9860, 5000],
          [9880, 50],
          [9900, 1],
        ],
      ),
    );
    expect(out[6]).toEqual(
      snap(
        'KXNEXTDNCCHAIR-45-MOMA',
        [[850, 200]],
        [
          [1800, 200],
          [5000, 45],
          [5200, 14],
          [5900, 364],
          [6100, 716],
          [6800, 291],
          [8600, 200],
          [8700, 1003],
          [9700, 2720],
          [9800, 3910],
          [9900, 1800],
          [9990, 17220],
        ],
      ),
    );
    expect(out[33]).toEqual(
      snap(
        'KXNEXTDNCCHAIR-45-REMA',
        [[100, 37]],
        [
          [860, 200],
          [1000, 3],
          [5200, 335],
          [5300, 241],
          [5800, 141],
          [8400, 200],
          [8500, 415],
          [9900, 50],
        ],
      ),
    );
    // Through map() as a document: the same snapshots.
    expect(run(fresh(), fixture('rest_markets_orderbooks_KXNEXTDNCCHAIR-45_2026-09-13.json'))).toEqual(out);
  });

  it('GET /exchange/status yields nothing', () => {
    const m = fresh();
    expect(run(m, fixture('rest_exchange_status_2026-09-13.json'))).toEqual([]);
    expect(m.stats.malformedTotal).toBe(0);
  });

  it('maps the venue status vocabulary (current and legacy) to ours', () => {
    expect(
      ['initialized', 'unopened', 'active', 'open', 'inactive', 'closed', 'determined', 'disputed', 'amended', 'finalized', 'settled', 'weird'].map(
        kalshiStatus,
      ),
    ).toEqual([
      'initialized',
      'initialized',
      'active',
      'active',
      'closed',
      'closed',
      'determined',
      'determined',
      'determined',
      'finalized',
      'finalized',
      undefined,
    ]);
  });
});

// ---- book state ---------------------------------------------------------------------------------

const snapshot = (sid: number, seq: number, ticker: string, yes: [string, string][], no: [string, string][], id?: number): Record<string, unknown> => {
  const msg: Record<string, unknown> = { market_ticker: ticker, market_id: 'u' };
  if (yes.length) msg['yes_dollars_fp'] = yes;
  if (no.length) msg['no_dollars_fp'] = no;
  return id === undefined ? { type: 'orderbook_snapshot', sid, seq, msg } : { type: 'orderbook_snapshot', id, sid, seq, msg };
};
const delta = (sid: number, seq: number, ticker: string, side: 'yes' | 'no', price: string, d: string): Record<string, unknown> => ({
  type: 'orderbook_delta',
  sid,
  seq,
  msg: { market_ticker: ticker, market_id: 'u', price_dollars: price, delta_fp: d, side, ts_ms: L + seq },
});
const bookDelta = (ticker: string, seq: number, side: 'bid' | 'ask', price: number, size: number): Record<string, unknown> => ({
  type: 'book_delta',
  venue: 'venue_a',
  timestamp: L + seq,
  localTimestamp: L,
  marketId: ticker,
  instrument: ticker,
  changes: [[side, price, size]],
});

describe('KalshiMapper: relative deltas → absolute levels', () => {
  it('adds to, takes from, deletes and creates levels on both sides', () => {
    const m = fresh();
    run(
      m,
      snapshot(
        1,
        1,
        'T',
        [
          ['0.2200', '333.00'],
          ['0.0800', '300.00'],
        ],
        [['0.5400', '20.00']],
      ),
    );
    expect(
      run(m, [
        delta(1, 2, 'T', 'yes', '0.2200', '-33.00'),
        delta(1, 3, 'T', 'no', '0.5400', '5.50'),
        delta(1, 4, 'T', 'yes', '0.2200', '-300.00'),
        delta(1, 5, 'T', 'yes', '0.3050', '10.00'),
        delta(1, 6, 'T', 'no', '0.5400', '-25.50'),
        delta(1, 7, 'T', 'no', '0.9190', '1.25'),
      ]),
    ).toEqual([
      bookDelta('T', 2, 'bid', 2200, 300),
      bookDelta('T', 3, 'ask', 4600, 25.5),
      bookDelta('T', 4, 'bid', 2200, 0),
      bookDelta('T', 5, 'bid', 3050, 10),
      bookDelta('T', 6, 'ask', 4600, 0),
      bookDelta('T', 7, 'ask', 810, 1.25),
    ]);
    expect(m.stats.gaps).toBe(0);
  });

  it('legacy integer-cent snapshot and delta', () => {
    const m = fresh();
    const out = run(m, [
      {
        type: 'orderbook_snapshot',
        sid: 5,
        seq: 1,
        msg: {
          market_ticker: 'OLD',
          market_id: 'x',
          yes: [
            [45, 100],
            [46, 250],
          ],
          no: [[53, 120]],
        },
      },
      {
        type: 'orderbook_delta',
        sid: 5,
        seq: 2,
        msg: { market_ticker: 'OLD', market_id: 'x', price: 46, delta: -50, side: 'yes', ts: '2026-02-14T15:30:00Z' },
      },
    ]);
    expect(out).toEqual([
      {
        type: 'book_snapshot',
        ...base,
        marketId: 'OLD',
        instrument: 'OLD',
        bids: [
          [4600, 250],
          [4500, 100],
        ],
        asks: [[4700, 120]],
      },
      {
        type: 'book_delta',
        venue: 'venue_a',
        timestamp: Date.parse('2026-02-14T15:30:00Z'),
        localTimestamp: L,
        marketId: 'OLD',
        instrument: 'OLD',
        changes: [['bid', 4600, 200]],
      },
    ]);
  });

  it('a delta driving a size negative resets that market only; its deltas are dropped until the snapshot, then resynced', () => {
    const m = fresh();
    run(m, [snapshot(1, 1, 'A', [['0.4000', '10.00']], []), snapshot(1, 2, 'B', [['0.3000', '5.00']], [])]);
    expect(run(m, delta(1, 3, 'A', 'yes', '0.4000', '-11.00'))).toEqual([
      { type: 'feed', ...base, state: 'gap', detail: 'delta -11.00 at yes 0.4000 leaves size -1', instrument: 'A' },
    ]);
    expect(m.takeResync()).toEqual([{ sid: 1, tickers: ['A'] }]);
    expect(m.takeResync()).toEqual([]);
    expect(m.awaiting()).toEqual([{ sid: 1, tickers: ['A'] }]);
    // A's deltas are dropped, B's still apply.
    expect(run(m, [delta(1, 4, 'A', 'yes', '0.4000', '1.00'), delta(1, 5, 'B', 'yes', '0.3000', '1.00')])).toEqual([bookDelta('B', 5, 'bid', 3000, 6)]);
    expect(run(m, snapshot(1, 6, 'A', [['0.4100', '7.00']], [], 99))).toEqual([
      { type: 'book_snapshot', ...base, marketId: 'A', instrument: 'A', bids: [[4100, 7]], asks: [] },
      { type: 'feed', ...base, state: 'resynced', detail: 'snapshot on sid 1', instrument: 'A' },
    ]);
    expect(m.awaiting()).toEqual([]);
    expect(run(m, delta(1, 7, 'A', 'yes', '0.4100', '-7.00'))).toEqual([bookDelta('A', 7, 'bid', 4100, 0)]);
  });

  it('a delta before any snapshot of its market is a gap for that market and asks for a snapshot', () => {
    const m = fresh();
    expect(run(m, delta(3, 1, 'NEW', 'no', '0.6000', '5.00'))).toEqual([
      { type: 'feed', ...base, state: 'gap', detail: 'delta before snapshot', instrument: 'NEW' },
    ]);
    expect(m.takeResync()).toEqual([{ sid: 3, tickers: ['NEW'] }]);
    expect(run(m, delta(3, 2, 'NEW', 'no', '0.6000', '5.00'))).toEqual([]);
    expect(m.stats.ignored).toBe(1);
  });

  it('reset() forgets books and sequences (a reconnect starts from snapshots and fresh sids)', () => {
    const m = fresh();
    run(m, [snapshot(1, 1, 'A', [['0.4000', '10.00']], []), delta(1, 2, 'A', 'yes', '0.4000', '1.00')]);
    m.reset();
    expect(m.hasBook('A')).toBe(false);
    expect(run(m, snapshot(1, 1, 'A', [['0.4000', '3.00']], []))).toEqual([
      { type: 'book_snapshot', ...base, marketId: 'A', instrument: 'A', bids: [[4000, 3]], asks: [] },
    ]);
  });
});

describe('KalshiMapper: sequence numbers', () => {
  it('acks consume seq: subscribed has none, ok (update_subscription) and unsubscribed do', () => {
    const m = fresh();
    const out = run(m, [
      { id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } },
      snapshot(1, 1, 'A', [['0.4000', '10.00']], []),
      delta(1, 2, 'A', 'yes', '0.4000', '1.00'),
      { id: 2, sid: 1, seq: 3, type: 'ok', msg: { market_tickers: ['A', 'B'] } },
      snapshot(1, 4, 'B', [], [['0.5000', '2.00']]),
      delta(1, 5, 'A', 'yes', '0.4000', '1.00'),
      { id: 3, type: 'subscribed', msg: { channel: 'trade', sid: 2 } },
      {
        type: 'trade',
        sid: 2,
        seq: 1,
        msg: {
          trade_id: 't1',
          market_ticker: 'A',
          yes_price_dollars: '0.4000',
          no_price_dollars: '0.6000',
          count_fp: '3.00',
          taker_outcome_side: 'yes',
          ts_ms: L,
        },
      },
      { id: 4, sid: 2, seq: 2, type: 'unsubscribed' },
    ]);
    expect(out.filter((e) => e.type === 'feed')).toEqual([]);
    expect(out.map((e) => e.type)).toEqual(['book_snapshot', 'book_delta', 'book_snapshot', 'book_delta', 'trade']);
    expect(m.stats.gaps).toBe(0);
  });

  it('a skipped seq resets every book of that sid (one gap per market) and leaves other sids alone', () => {
    const m = fresh();
    run(m, [snapshot(1, 1, 'A', [['0.4000', '10.00']], []), snapshot(1, 2, 'B', [['0.3000', '5.00']], []), snapshot(7, 1, 'C', [['0.2000', '5.00']], [])]);
    const detail = 'sid 1: seq expected 3, got 4';
    expect(run(m, delta(1, 4, 'A', 'yes', '0.4000', '1.00'))).toEqual([
      { type: 'feed', ...base, state: 'gap', detail, instrument: 'A' },
      { type: 'feed', ...base, state: 'gap', detail, instrument: 'B' },
    ]);
    expect(m.takeResync()).toEqual([{ sid: 1, tickers: ['A', 'B'] }]);
    expect(m.hasBook('C')).toBe(true);
    expect(run(m, delta(7, 2, 'C', 'yes', '0.2000', '1.00'))).toEqual([bookDelta('C', 2, 'bid', 2000, 6)]);
    // The frame after the gap is the new baseline: seq 5 follows 4.
    expect(run(m, delta(1, 5, 'B', 'yes', '0.3000', '1.00'))).toEqual([]);
    expect(m.stats.gaps).toBe(1);
  });

  it('a step back in seq is a gap too, and a gap on a sid without books is reported for the sid', () => {
    const m = fresh();
    const trade = (seq: number): Record<string, unknown> => ({
      type: 'trade',
      sid: 4,
      seq,
      msg: { trade_id: `t${seq}`, market_ticker: 'A', yes_price_dollars: '0.4000', count_fp: '1.00', taker_side: 'no', ts: 1 },
    });
    const out = run(m, [trade(10), trade(11), trade(11)]);
    expect(out.filter((e) => e.type === 'feed')).toEqual([
      { type: 'feed', ...base, state: 'gap', detail: 'sid 4: seq expected 12, got 11', instrument: 'sid:4' },
    ]);
    expect(out.filter((e) => e.type === 'trade')).toHaveLength(3);
  });
});

describe('KalshiMapper: bad input is counted and never corrupts a book', () => {
  it('truncated JSON through the feed parse path is counted as json and yields nothing', () => {
    const m = fresh();
    const text = '{"type":"orderbook_delta","sid":1,"seq":2,"msg":{"market_ticker":"A","price_dollars":"0.40';
    expect(parseFrame(text, m.stats)).toBeUndefined();
    expect(parseFrame('not json', m.stats)).toBeUndefined();
    expect(m.stats.malformed.get('json')).toBe(2);
    expect(parseFrame('{"type":"ok"}', m.stats)).toEqual({ type: 'ok' });
  });

  it('wrong field types without a seq: dropped and counted, books untouched', () => {
    const m = fresh();
    run(m, snapshot(1, 1, 'A', [['0.4000', '10.00']], []));
    const bad = [
      { type: 'ticker', sid: 1, msg: { market_ticker: 'A', yes_bid_dollars: 45 } },
      { type: 'ticker', sid: 1, msg: { market_ticker: 'A', yes_bid_dollars: '0.45.0' } },
      { type: 'trade', sid: 9, msg: { trade_id: 1, market_ticker: 'A', yes_price_dollars: '0.4', count_fp: '1' } },
      { type: 'trade', sid: 9, msg: { trade_id: 'x', market_ticker: 'A', yes_price_dollars: '1.5', count_fp: '1' } },
      { type: 'orderbook_delta', sid: '1', seq: '2', msg: { market_ticker: 7, price_dollars: 0.5, delta_fp: -3, side: 'maybe' } },
      { type: 'market_lifecycle_v2', sid: 'x', msg: { market_ticker: 'A', event_type: 5 } },
      { type: 'error', msg: { code: 'x' } },
      { type: 'subscribed', msg: {} },
      { type: 'brand_new_channel', sid: 1, msg: {} },
      42,
      'str',
      null,
      { no_type: true },
    ];
    expect(run(m, bad)).toEqual([]);
    expect(m.stats.malformedTotal).toBe(12);
    expect(m.stats.unknown.get('brand_new_channel')).toBe(1);
    expect(m.hasBook('A')).toBe(true);
    // The book continues exactly where it was: seq 2 is still the next one.
    expect(run(m, delta(1, 2, 'A', 'yes', '0.4000', '-4.00'))).toEqual([bookDelta('A', 2, 'bid', 4000, 6)]);
  });

  it('a malformed orderbook frame that used up a seq resets its market', () => {
    const m = fresh();
    run(m, snapshot(1, 1, 'A', [['0.4000', '10.00']], []));
    const out = run(m, { type: 'orderbook_delta', sid: 1, seq: 2, msg: { market_ticker: 'A', price_dollars: '0.4000', delta_fp: 5, side: 'yes' } });
    expect(out).toEqual([{ type: 'feed', ...base, state: 'gap', detail: 'malformed orderbook_delta', instrument: 'A' }]);
    expect(m.hasBook('A')).toBe(false);
    expect(m.stats.malformed.get('orderbook_delta')).toBe(1);
  });

  it('a delta with a price outside the book range resets its market', () => {
    const m = fresh();
    run(m, snapshot(1, 1, 'A', [['0.4000', '10.00']], []));
    expect(run(m, delta(1, 2, 'A', 'yes', '1.0000', '5.00'))).toEqual([{ type: 'feed', ...base, state: 'gap', detail: 'malformed delta', instrument: 'A' }]);
  });

  it('a snapshot with an invalid level is not applied and the market waits for a good one', () => {
    const m = fresh();
    run(m, snapshot(1, 1, 'A', [['0.4000', '10.00']], []));
    expect(run(m, snapshot(1, 2, 'A', [['1.5000', '1.00']], []))).toEqual([
      { type: 'feed', ...base, state: 'gap', detail: 'malformed snapshot', instrument: 'A' },
    ]);
    expect(run(m, snapshot(1, 3, 'A', [['0.4000', '-1.00']], []))).toEqual([
      { type: 'feed', ...base, state: 'gap', detail: 'malformed snapshot', instrument: 'A' },
    ]);
    expect(m.hasBook('A')).toBe(false);
    expect(m.takeResync()).toEqual([{ sid: 1, tickers: ['A'] }]);
  });

  it('REST documents with bad markets: the bad market is counted, the good one kept', () => {
    const m = fresh();
    const page = fixture('rest_markets_page_first2_2026-09-13.json') as { markets: Record<string, unknown>[] };
    page.markets[0]!['status'] = 7;
    const out = run(m, page);
    expect(out.map((e) => (e as { marketId: string }).marketId)).toEqual(['KXTTELITEMATCH-26SEP131110GSARAD-GSA']);
    expect(m.stats.malformed.get('rest_market')).toBe(1);
    expect(run(m, { markets: 'nope' })).toEqual([]);
    expect(m.stats.malformed.get('rest_markets')).toBe(1);
  });
});

describe('KalshiMapper: lifecycle status changes', () => {
  const lc = (seq: number, msg: Record<string, unknown>): Record<string, unknown> => ({ type: 'market_lifecycle_v2', sid: 3, seq, msg });
  const status = (s: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    type: 'market_status',
    ...base,
    marketId: 'M',
    status: s,
    ...extra,
  });

  it('activated, deactivated, close_date_updated, determined, settled', () => {
    const m = fresh();
    expect(
      run(m, [
        lc(1, { market_ticker: 'M', event_type: 'activated' }),
        lc(2, { market_ticker: 'M', event_type: 'deactivated', is_deactivated: true }),
        lc(3, { market_ticker: 'M', event_type: 'activated' }),
        // A close date in the future keeps the known status; one in the past closes the market.
        lc(4, { market_ticker: 'M', event_type: 'close_date_updated', close_ts: L / 1000 + 60 }),
        lc(5, { market_ticker: 'M', event_type: 'close_date_updated', close_ts: L / 1000 - 60 }),
        lc(6, { market_ticker: 'M', event_type: 'determined', result: 'no', settlement_value: '0.0000', determination_ts: 1 }),
        lc(7, { market_ticker: 'M', event_type: 'settled', settled_ts: 2 }),
        lc(8, { market_ticker: 'OTHER', event_type: 'close_date_updated', close_ts: L / 1000 + 60 }),
        lc(9, { market_ticker: 'M', event_type: 'exploded' }),
      ]),
    ).toEqual([
      status('active'),
      status('closed'),
      status('active'),
      status('active', { closeTime: L + 60_000 }),
      status('closed', { closeTime: L - 60_000 }),
      status('determined', { result: 'no', settlementValue: 0 }),
      status('finalized'),
    ]);
    expect(m.stats.unknown.get('market_lifecycle_v2:exploded')).toBe(1);
  });

  it('determined without a settlement value derives it from the result', () => {
    expect(run(fresh(), lc(1, { market_ticker: 'M', event_type: 'determined', result: 'yes' }))).toEqual([
      status('determined', { result: 'yes', settlementValue: 10_000 }),
    ]);
  });
});
