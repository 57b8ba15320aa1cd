import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { VenueConfig } from '../../../src/config/schema.js';
import { OrderBook } from '../../../src/core/book.js';
import type { Level, MarketUpsert, NormalizedEvent } from '../../../src/core/types.js';
import {
  clobBookToSnapshot,
  dataTradeToTrade,
  gammaMarketToUpsert,
  gammaStatus,
  PolymarketMapper,
  SUSPECT_FRAMES,
  SUSPECT_MS,
} from '../../../src/venues/polymarket/mappers.js';
import {
  clobBookSchema,
  dataTradesResponseSchema,
  gammaEventsResponseSchema,
  gammaMarketSchema,
  gammaMarketsResponseSchema,
  isObject,
  isWsBestBidAsk,
  isWsBook,
  isWsLastTradePrice,
  isWsMarketResolved,
  isWsNewMarket,
  isWsPriceChange,
  isWsTickSizeChange,
} from '../../../src/venues/polymarket/raw.js';

const DIR = 'test/fixtures/polymarket';
const fixture = (name: string): unknown => JSON.parse(readFileSync(`${DIR}/${name}`, 'utf8'));
const venue: VenueConfig = loadConfig({ env: {} }).venues.find((v) => v.protocol === 'polymarket')!;
const LOCAL = 1_700_000_000_000;
const mapper = (opts?: ConstructorParameters<typeof PolymarketMapper>[2]): PolymarketMapper => new PolymarketMapper(venue, undefined, opts);
const run = (m: PolymarketMapper, raw: unknown): NormalizedEvent[] => [...m.map(raw, LOCAL)];
const base = { venue: 'venue_b', localTimestamp: LOCAL };

const DOCS = fixture('ws_market_channel_docs_examples.json') as Record<string, unknown>[];
const docs = (eventType: string): Record<string, unknown> => structuredClone(DOCS.find((f) => f['event_type'] === eventType)!);

/** Test-side oracle for the big captures: float parse is fine for 2–3 decimal test values. */
function oracle(levels: { price: string; size: string }[], descending: boolean): Level[] {
  return levels.map((l): Level => [Math.round(Number(l.price) * 10_000), Number(l.size)]).sort((a, b) => (descending ? b[0] - a[0] : a[0] - b[0]));
}

describe('polymarket WS frames (docs examples)', () => {
  it('maps every documented frame to its exact events', () => {
    const m = mapper();
    expect(run(m, DOCS)).toEqual([
      {
        type: 'book_snapshot',
        ...base,
        timestamp: 123456789000,
        marketId: '0xbd31dc8a20211944f6b70f31557f1001557b59905b7738480ca09bd4532f84af',
        instrument: '65818619657568813474341868652308942079804919287380422192892211131408793125422',
        // ".48"-style prices; the docs list bids ascending (best last) and asks ascending (best first).
        bids: [
          [5000, 15],
          [4900, 20],
          [4800, 30],
        ],
        asks: [
          [5200, 25],
          [5300, 60],
          [5400, 10],
        ],
      },
      // price_change: one delta per asset; the NO token's mirrored entry is its own instrument's change.
      {
        type: 'book_delta',
        ...base,
        timestamp: 1757908892351,
        marketId: '0x5f65177b394277fd294cd75650044e32ba009a95022d88a0c1d565897d72f8f1',
        instrument: '71321045679252212594626385532706912750332728571942532289631379312455583992563',
        changes: [['bid', 5000, 200]],
      },
      {
        type: 'book_delta',
        ...base,
        timestamp: 1757908892351,
        marketId: '0x5f65177b394277fd294cd75650044e32ba009a95022d88a0c1d565897d72f8f1',
        instrument: '52114319501245915516055106046884209969926127482827954674443846427813813222426',
        changes: [['ask', 5000, 200]],
      },
      // tick_size_change and best_bid_ask: ignored on purpose; last_trade_price: untracked asset.
      {
        type: 'market',
        ...base,
        timestamp: 1766790415550,
        marketId: '0x311d0c4b6671ab54af4970c06fcf58662516f5168997bdda209ec3db5aa6b0c1',
        title: 'Will NVIDIA (NVDA) close above $240 end of January?',
        eventTitle: 'Will NVIDIA (NVDA) close above ___ end of January?',
        eventId: '125819',
        status: 'active',
        url: 'https://polymarket.com/event/nvda-above-in-january-2026/nvda-above-240-on-january-30-2026',
        yesInstrument: '76043073756653678226373981964075571318267289248134717369284518995922789326425',
        noInstrument: '31690934263385727664202099278545688007799199447969475608906331829650099442770',
        extra: {
          slug: 'nvda-above-240-on-january-30-2026',
          eventSlug: 'nvda-above-in-january-2026',
          gammaId: '1031769',
          outcomes: ['Yes', 'No'],
        },
      },
      {
        type: 'market_status',
        ...base,
        timestamp: 1766790415550,
        marketId: '0x311d0c4b6671ab54af4970c06fcf58662516f5168997bdda209ec3db5aa6b0c1',
        status: 'finalized',
        result: 'yes',
        settlementValue: 10_000,
      },
    ]);
    // The subscribe message (element 0), tick_size_change and best_bid_ask are ignored;
    // last_trade_price on an asset the mapper has never seen cannot be given a YES price.
    expect(m.stats.ignored).toBe(3);
    expect(m.stats.unknown.get('last_trade_price(untracked asset)')).toBe(1);
    expect(m.stats.malformedTotal).toBe(0);
    expect(m.stats.frames).toBe(1);
    expect(m.stats.events).toBe(5);
  });

  it('maps last_trade_price to a trade once the token is known, YES and NO side', () => {
    const ltp = docs('last_trade_price');
    const asset = '114122071509644379678018727908709560226618148003371446110114509806601493071694';
    const market = '0x6a67b9d828d53862160e470329ffea5246f338ecfffdf2cab45211ec578b0347';
    const learn = (m: PolymarketMapper, yes: string, no: string): void =>
      m.learn({
        type: 'market',
        ...base,
        timestamp: LOCAL,
        marketId: market,
        title: 't',
        status: 'active',
        yesInstrument: yes,
        noInstrument: no,
        extra: { outcomes: ['Yes', 'No'] },
      });

    const asYes = mapper();
    learn(asYes, asset, 'other');
    expect(run(asYes, ltp)).toEqual([
      {
        type: 'trade',
        ...base,
        timestamp: 1750428146322,
        marketId: market,
        instrument: asset,
        tradeId: `${asset}:1750428146322:BUY:0.456:219.217767`,
        price: 4560,
        yesPrice: 4560,
        size: 219.217767,
        side: 'buy',
        takerSide: 'yes',
        outcome: 'Yes',
      },
    ]);

    const asNo = mapper();
    learn(asNo, 'other', asset);
    const [t] = run(asNo, ltp);
    expect(t).toMatchObject({ type: 'trade', price: 4560, yesPrice: 5440, side: 'buy', takerSide: 'no', outcome: 'No' });

    // A feed that takes trades from the data-api gets only the last price, YES perspective.
    const quoting = mapper({ lastTradeAs: 'quote' });
    learn(quoting, 'other', asset);
    expect(run(quoting, ltp)).toEqual([{ type: 'quote', ...base, timestamp: 1750428146322, marketId: market, lastPrice: 5440 }]);
  });

  it('maps the legacy price_change format (root asset_id, changes[])', () => {
    const legacy = {
      asset_id: '71321045679252212594626385532706912750332728571942532289631379312455583992563',
      changes: [{ price: '0.4', side: 'SELL', size: '3300' }],
      event_type: 'price_change',
      market: '0x5f65177b394277fd294cd75650044e32ba009a95022d88a0c1d565897d72f8f1',
      timestamp: '1729084877448',
      hash: '3cd4d61e042c81560c9037ece0c61f3b1a8fbbdd',
    };
    expect(run(mapper(), legacy)).toEqual([
      {
        type: 'book_delta',
        ...base,
        timestamp: 1729084877448,
        marketId: legacy.market,
        instrument: legacy.asset_id,
        changes: [['ask', 4000, 3300]],
      },
    ]);
  });

  it('learns tokens from new_market and prices later trades of them', () => {
    const m = mapper();
    run(m, docs('new_market'));
    expect(m.token('76043073756653678226373981964075571318267289248134717369284518995922789326425')).toEqual({
      asset: '76043073756653678226373981964075571318267289248134717369284518995922789326425',
      marketId: '0x311d0c4b6671ab54af4970c06fcf58662516f5168997bdda209ec3db5aa6b0c1',
      side: 'yes',
      outcome: 'Yes',
    });
    expect(m.token('31690934263385727664202099278545688007799199447969475608906331829650099442770')?.side).toBe('no');
  });

  it('keeps a token learned again unchanged as it was (one record, the first strings), and a changed one under its first id', () => {
    const raw = fixture('ws_book_capture_2026-08-13.json') as { asset_id: string; market: string };
    const m = mapper();
    const upsert = (outcomes: string[]): MarketUpsert => ({
      type: 'market',
      ...base,
      timestamp: LOCAL,
      marketId: raw.market,
      title: 't',
      status: 'active',
      // A fresh string each time, as each catalog walk parses: equal in value, not the same copy.
      yesInstrument: [...raw.asset_id].join(''),
      noInstrument: 'n',
      extra: { outcomes },
    });
    m.learn(upsert(['Yes', 'No']));
    const first = m.token(raw.asset_id);
    m.learn(upsert(['Yes', 'No']));
    expect(m.token(raw.asset_id)).toBe(first);
    m.learn(upsert(['Up', 'Down']));
    expect(m.token(raw.asset_id)).not.toBe(first);
    expect(m.token(raw.asset_id)).toEqual({ asset: raw.asset_id, marketId: raw.market, side: 'yes', outcome: 'Up' });
    // The book of a known token and of an unknown one: the same events as the frame names them.
    const [snap] = run(m, raw);
    expect(snap).toMatchObject({ type: 'book_snapshot', instrument: raw.asset_id, marketId: raw.market });
    const [other] = run(mapper(), raw);
    expect(other).toEqual(snap);
  });

  it('market_resolved with the NO token winning gives result no', () => {
    const f = docs('market_resolved');
    f['winning_asset_id'] = (f['assets_ids'] as string[])[1];
    const [s] = run(mapper(), f);
    expect(s).toMatchObject({ type: 'market_status', status: 'finalized', result: 'no', settlementValue: 0 });
  });

  it('every documented frame passes its guard', () => {
    const guards: Record<string, (m: Record<string, unknown>) => boolean> = {
      book: isWsBook,
      price_change: isWsPriceChange,
      tick_size_change: isWsTickSizeChange,
      last_trade_price: isWsLastTradePrice,
      best_bid_ask: isWsBestBidAsk,
      new_market: isWsNewMarket,
      market_resolved: isWsMarketResolved,
    };
    const seen = new Set<string>();
    for (const f of DOCS.slice(1)) {
      const t = String(f['event_type']);
      expect(guards[t]!(f), t).toBe(true);
      seen.add(t);
    }
    expect([...seen].sort()).toEqual(Object.keys(guards).sort());
  });
});

describe('polymarket book captures', () => {
  it('puts the capture of 2026-08-13 best first (bids came ascending, asks descending)', () => {
    const raw = fixture('ws_book_capture_2026-08-13.json') as { bids: { price: string; size: string }[]; asks: { price: string; size: string }[] };
    const [snap, ...rest] = run(mapper(), raw);
    expect(rest).toEqual([]);
    expect(snap).toMatchObject({
      type: 'book_snapshot',
      ...base,
      timestamp: 1786604072222,
      marketId: '0x6bd56627aa21311850825edb27e53434a0e17a4f782be0086bc07f71eee00d0d',
      instrument: '350977769852917329387037893294763093471844346281449484439085576212613048126',
    });
    if (snap?.type !== 'book_snapshot') throw new Error('not a snapshot');
    expect(snap.bids).toEqual([
      [700, 182528.55],
      [600, 219685.67],
      [500, 507106.18],
      [400, 171213.7],
      [300, 37268.67],
      [200, 70281.2],
      [100, 3149725.72],
    ]);
    expect(snap.asks.length).toBe(57);
    expect(snap.asks.slice(0, 3)).toEqual([
      [800, 228198.28],
      [900, 153220.41],
      [1000, 93315.63],
    ]);
    expect(snap.asks[56]).toEqual([9900, 156606.14]);
    expect(snap.asks).toEqual(oracle(raw.asks, false));
  });

  it('maps all ten captures of 2026-02-12, including 0.001 ticks and an empty ask side', () => {
    const frames = fixture('ws_book_captures_2026-02-12.json') as {
      asset_id: string;
      market: string;
      timestamp: string;
      bids: { price: string; size: string }[];
      asks: { price: string; size: string }[];
    }[];
    const m = mapper();
    const out = run(m, frames);
    expect(out).toEqual(
      frames.map((f) => ({
        type: 'book_snapshot',
        ...base,
        timestamp: Number(f.timestamp),
        marketId: f.market,
        instrument: f.asset_id,
        bids: oracle(f.bids, true),
        asks: oracle(f.asks, false),
      })),
    );
    const empty = out[1];
    expect(empty).toMatchObject({ instrument: '111086561580667630845628749804357173374402698866574035090156847883075747810801', asks: [] });
    if (empty?.type !== 'book_snapshot') throw new Error('not a snapshot');
    expect(empty.bids[0]).toEqual([9990, 103199.78]); // "0.999": a 0.001 tick
    expect(empty.bids.at(-1)).toEqual([10, 7449.91]);
    expect(m.stats.malformedTotal).toBe(0);
  });

  it('emits the YES token last price of a book once the token is known; "" gives none', () => {
    const raw = fixture('ws_book_capture_2026-08-13.json') as { asset_id: string; market: string };
    const m = mapper();
    m.learn({ type: 'market', ...base, timestamp: LOCAL, marketId: raw.market, title: 't', status: 'active', yesInstrument: raw.asset_id, noInstrument: 'n' });
    expect(run(m, raw).slice(1)).toEqual([{ type: 'quote', ...base, timestamp: 1786604072222, marketId: raw.market, lastPrice: 9200 }]);

    const rest = fixture('rest_book_empty_ask_capture_2026-08-03.json') as { asset_id: string; market: string };
    const m2 = mapper();
    m2.learn({
      type: 'market',
      ...base,
      timestamp: LOCAL,
      marketId: rest.market,
      title: 't',
      status: 'active',
      yesInstrument: rest.asset_id,
      noInstrument: 'n',
    });
    expect(run(m2, rest).map((e) => e.type)).toEqual(['book_snapshot']); // last_trade_price ""
  });
});

describe('polymarket REST', () => {
  it('zod schemas accept every REST fixture', () => {
    expect(gammaMarketSchema.safeParse(fixture('gamma_market_btc_updown_5m.json')).success).toBe(true);
    expect(gammaMarketsResponseSchema.safeParse([fixture('gamma_market_btc_updown_5m.json')]).success).toBe(true);
    expect(gammaEventsResponseSchema.safeParse(fixture('gamma_events_democratic_nominee_2028.json')).success).toBe(true);
    expect(clobBookSchema.safeParse(fixture('rest_book_empty_ask_capture_2026-08-03.json')).success).toBe(true);
    expect(dataTradesResponseSchema.safeParse(fixture('data_api_trades_capture_2026-07-02.json')).success).toBe(true);
    expect(dataTradesResponseSchema.safeParse(fixture('data_api_trades_sdk_test_example.json')).success).toBe(true);
  });

  it('zod decodes the JSON-encoded string arrays of Gamma', () => {
    const m = gammaMarketSchema.parse(fixture('gamma_market_btc_updown_5m.json'));
    expect(m.outcomes).toEqual(['Up', 'Down']);
    expect(m.outcomePrices).toEqual(['0.505', '0.495']);
    expect(m.clobTokenIds).toEqual([
      '104239898038807136052399800151408521467737075933964991162589336683346093173875',
      '71183960810705820955071415844881728181970340514894896943812046065452395013351',
    ]);
  });

  it('zod rejects wrong REST shapes', () => {
    const gm = fixture('gamma_market_btc_updown_5m.json') as Record<string, unknown>;
    expect(gammaMarketSchema.safeParse({ ...gm, outcomes: '["Up", "Down"' }).success).toBe(false);
    expect(gammaMarketSchema.safeParse({ ...gm, clobTokenIds: '[1, 2]' }).success).toBe(false);
    expect(gammaMarketSchema.safeParse({ ...gm, conditionId: 7 }).success).toBe(false);
    const book = fixture('rest_book_empty_ask_capture_2026-08-03.json') as Record<string, unknown>;
    expect(clobBookSchema.safeParse({ ...book, timestamp: 1785734468581 }).success).toBe(false);
    const [tr] = fixture('data_api_trades_capture_2026-07-02.json') as Record<string, unknown>[];
    expect(dataTradesResponseSchema.safeParse([{ ...tr, price: '0.765' }]).success).toBe(false);
    expect(dataTradesResponseSchema.safeParse([{ ...tr, side: 'buy' }]).success).toBe(false);
    expect(dataTradesResponseSchema.safeParse([{ ...tr, price: 1.5 }]).success).toBe(false);
  });

  it('maps the Gamma market (named outcomes: outcome = first outcome)', () => {
    const m = gammaMarketSchema.parse(fixture('gamma_market_btc_updown_5m.json'));
    expect(gammaMarketToUpsert(venue, m, undefined, LOCAL)).toEqual({
      type: 'market',
      ...base,
      timestamp: LOCAL,
      marketId: '0x78443f961b9a65869dcb39359de9960165c7e5cbad0904eac7f29cd77872a63b',
      title: 'Bitcoin Up or Down - March 12, 5:20AM-5:25AM ET',
      eventTitle: 'Bitcoin Up or Down - March 12, 5:20AM-5:25AM ET',
      eventId: '260654',
      seriesTitle: 'BTC Up or Down 5m',
      seriesId: '10684',
      outcome: 'Up',
      status: 'active',
      openTime: Date.parse('2026-03-11T09:29:01.328428Z'),
      closeTime: Date.parse('2026-03-12T09:25:00Z'),
      url: 'https://polymarket.com/event/btc-updown-5m-1773307200/btc-updown-5m-1773307200',
      yesInstrument: '104239898038807136052399800151408521467737075933964991162589336683346093173875',
      noInstrument: '71183960810705820955071415844881728181970340514894896943812046065452395013351',
      volume: 9.999997,
      liquidity: 20328.3747,
      extra: {
        slug: 'btc-updown-5m-1773307200',
        eventSlug: 'btc-updown-5m-1773307200',
        gammaId: '1557558',
        questionId: '0x15813764bba41cfb5f99e2e649cfbae7a121a9f8f91ed47ca261aab95e9729de',
        negRisk: false,
        tickSize: 0.01,
        acceptingOrders: true,
        outcomes: ['Up', 'Down'],
      },
    });
  });

  it('maps a Gamma event with its markets (Yes/No markets: outcome = groupItemTitle, tags from the event)', () => {
    const m = mapper();
    const out = run(m, fixture('gamma_events_democratic_nominee_2028.json'));
    const common = {
      type: 'market',
      ...base,
      timestamp: LOCAL,
      eventTitle: 'Democratic Presidential Nominee 2028',
      eventId: '30829',
      tags: ['World Elections', 'Global Elections', 'Elections', 'Politics', 'US Election', 'Earn 4%', 'Primaries'],
      status: 'active',
      closeTime: Date.parse('2028-11-07T00:00:00Z'),
    };
    expect(out).toEqual([
      {
        ...common,
        marketId: '0xc8f1cf5d4f26e0fd9c8fe89f2a7b3263b902cf14fde7bfccef525753bb492e47',
        title: 'Will Stephen A. Smith win the 2028 Democratic presidential nomination?',
        outcome: 'Stephen A. Smith',
        openTime: Date.parse('2025-07-11T18:36:02.893Z'),
        url: 'https://polymarket.com/event/democratic-presidential-nominee-2028/will-stephen-a-smith-win-the-2028-democratic-presidential-nomination-914',
        yesInstrument: '60590045489347122735554346200880179420435533609307820342798544098823516727807',
        noInstrument: '76005700027045000587004110133818166617024719626220722682005164003117993034812',
        volume: 12232699.615479222,
        liquidity: 400500.66675,
        extra: {
          slug: 'will-stephen-a-smith-win-the-2028-democratic-presidential-nomination-914',
          eventSlug: 'democratic-presidential-nominee-2028',
          gammaId: '559657',
          questionId: '0x2c3d7e0eee6f058be3006baabf0d54a07da254ba47fe6e3e095e7990c7814705',
          negRisk: true,
          tickSize: 0.001,
          acceptingOrders: true,
          outcomes: ['Yes', 'No'],
        },
      },
      {
        ...common,
        marketId: '0xe39adea057926dc197fe30a441f57a340b2a232d5a687010f78bba9b6e02620f',
        title: 'Will Gretchen Whitmer win the 2028 Democratic presidential nomination?',
        outcome: 'Gretchen Whitmer',
        openTime: Date.parse('2025-07-11T18:36:05.047Z'),
        url: 'https://polymarket.com/event/democratic-presidential-nominee-2028/will-gretchen-whitmer-win-the-2028-democratic-presidential-nomination-676',
        yesInstrument: '57761428076807364758801249497410455358987881775226117256631754592198558850468',
        noInstrument: '64300336035644500626313522990854070672468621241744347587785777226296613235598',
        volume: 6313171.174692103,
        liquidity: 573479.49303,
        extra: {
          slug: 'will-gretchen-whitmer-win-the-2028-democratic-presidential-nomination-676',
          eventSlug: 'democratic-presidential-nominee-2028',
          gammaId: '559659',
          questionId: '0x2c3d7e0eee6f058be3006baabf0d54a07da254ba47fe6e3e095e7990c7814707',
          negRisk: true,
          tickSize: 0.001,
          acceptingOrders: true,
          outcomes: ['Yes', 'No'],
        },
      },
    ]);
    // Mapping them taught the mapper both tokens of each market.
    expect(m.token('76005700027045000587004110133818166617024719626220722682005164003117993034812')).toEqual({
      asset: '76005700027045000587004110133818166617024719626220722682005164003117993034812',
      marketId: '0xc8f1cf5d4f26e0fd9c8fe89f2a7b3263b902cf14fde7bfccef525753bb492e47',
      side: 'no',
      outcome: 'No',
    });
  });

  it('derives status from active / closed / acceptingOrders / resolution', () => {
    const gm = gammaMarketSchema.parse(fixture('gamma_market_btc_updown_5m.json'));
    expect(gammaStatus(gm)).toEqual({ status: 'active' });
    expect(gammaStatus({ ...gm, acceptingOrders: false, acceptingOrdersTimestamp: null })).toEqual({ status: 'initialized' });
    expect(gammaStatus({ ...gm, acceptingOrders: false })).toEqual({ status: 'closed' });
    expect(gammaStatus({ ...gm, active: false })).toEqual({ status: 'initialized' });
    expect(gammaStatus({ ...gm, closed: true })).toEqual({ status: 'closed' });
    expect(gammaStatus({ ...gm, closed: true, outcomePrices: ['0', '1'] })).toEqual({ status: 'finalized', result: 'no' });
    expect(gammaStatus({ ...gm, closed: true, outcomePrices: ['1', '0'], umaResolutionStatus: 'resolved' })).toEqual({ status: 'finalized', result: 'yes' });
    expect(gammaStatus({ ...gm, closed: true, outcomePrices: ['1', '0'], umaResolutionStatus: 'proposed' })).toEqual({ status: 'determined', result: 'yes' });
  });

  it('maps the CLOB /book capture with an empty ask side', () => {
    const b = clobBookSchema.parse(fixture('rest_book_empty_ask_capture_2026-08-03.json'));
    expect(clobBookToSnapshot(venue, b, LOCAL)).toEqual({
      type: 'book_snapshot',
      ...base,
      timestamp: 1785734468581,
      marketId: '0x9d839bf0aa31324b9848f5b89841b779238a7c07dee2f7fca675d934e8ab5bf2',
      instrument: '72610532355343625199299853218161700546393390326785971247545541945337255643692',
      bids: [
        [20, 6.99],
        [10, 667.12],
      ],
      asks: [],
    });
  });

  it('maps data-api trades (proxyWallet = taker, seconds → ms, float price → units)', () => {
    const trades = dataTradesResponseSchema.parse(fixture('data_api_trades_capture_2026-07-02.json'));
    const common = {
      type: 'trade',
      ...base,
      timestamp: 1783008527000,
      marketId: '0xc5943cca27ce657f519619520b1664829b1209f9a5ef9266be7f2954be1b0260',
      instrument: '110474601866909537724044216141585040787927916157559633438159999666255694855775',
      price: 7650,
      yesPrice: 7650,
      side: 'buy',
      takerSide: 'yes',
      outcome: 'Yes',
    };
    expect(trades.map((t) => dataTradeToTrade(venue, t, LOCAL))).toEqual([
      {
        ...common,
        tradeId: '0x57e94d52987f4f169c0d2eab2f491a45b4a2747132d124d1173b672c9aeed505:0b78974624a9',
        size: 15,
        taker: '0x0f3433d8b7596000bf1046aa822308d93cf67684',
      },
      {
        ...common,
        tradeId: '0x2e34c255aaf68780608cb9b48671f3edd6b4f10377690d97a77763b8fd8d40be:12eeca67eba1',
        size: 10,
        taker: '0x44461806c4fdbfafeae351cfb9b873f7f7f3f12e',
        // the profile shown with the trade; the first trader has none (empty strings → absent)
        takerName: 'NYC-NO.1-Jungle-FanYang',
        takerPseudonym: 'Enchanting-Populist',
      },
    ]);
    const [sdk] = dataTradesResponseSchema.parse(fixture('data_api_trades_sdk_test_example.json'));
    expect(run(mapper(), fixture('data_api_trades_sdk_test_example.json'))).toEqual([
      {
        type: 'trade',
        ...base,
        timestamp: 1703980800000,
        marketId: '0xabcdef1234567890abcdef1234567890abcdef1234567890abcdef1234567890',
        instrument: '0x1111111111111111111111111111111111111111111111111111111111111111',
        tradeId: '0x2222222222222222222222222222222222222222222222222222222222222222:294a38b51266',
        price: 5500,
        yesPrice: 5500,
        size: 50,
        side: 'buy',
        takerSide: 'yes',
        taker: '0x1234567890abcdef1234567890abcdef12345678',
        takerName: 'Trader Name',
        takerPseudonym: 'TraderX',
        outcome: 'Yes',
      },
    ]);
    // The NO token (outcomeIndex 1), sold: the taker ends up on YES; YES price is the complement.
    expect(dataTradeToTrade(venue, { ...sdk!, outcomeIndex: 1, outcome: 'No', side: 'SELL' }, LOCAL)).toMatchObject({
      price: 5500,
      yesPrice: 4500,
      side: 'sell',
      takerSide: 'yes',
    });
  });
});

describe('polymarket bad input', () => {
  /** A mapper with the docs book applied, and a store that applies its events to real books. */
  function primed(): { m: PolymarketMapper; books: Map<string, OrderBook>; feed: (raw: unknown) => NormalizedEvent[] } {
    const m = mapper();
    const books = new Map<string, OrderBook>();
    const feed = (raw: unknown): NormalizedEvent[] => {
      const out = run(m, raw);
      for (const e of out) {
        if (e.type === 'book_snapshot') {
          const b = books.get(e.instrument) ?? new OrderBook(e.instrument);
          b.snapshot(e.bids, e.asks, e.timestamp);
          books.set(e.instrument, b);
        } else if (e.type === 'book_delta') books.get(e.instrument)?.apply(e.changes, e.timestamp);
        else if (e.type === 'feed' && e.state === 'gap' && e.instrument) books.get(e.instrument)?.reset();
      }
      return out;
    };
    feed(docs('book'));
    return { m, books, feed };
  }
  const ASSET = '65818619657568813474341868652308942079804919287380422192892211131408793125422';
  const MARKET = '0xbd31dc8a20211944f6b70f31557f1001557b59905b7738480ca09bd4532f84af';
  const change = (price: string, size: string, side = 'BUY', extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    market: MARKET,
    price_changes: [{ asset_id: ASSET, price, size, side, ...extra }],
    timestamp: '123456790000',
    event_type: 'price_change',
  });
  const levelsOf = (b: OrderBook | undefined): [Level[], Level[]] => [b!.bids.levels(), b!.asks.levels()];

  it('counts and drops malformed frames without touching the book', () => {
    const { m, books, feed } = primed();
    const before = levelsOf(books.get(ASSET));
    const bad: [unknown, string][] = [
      ['not an object', 'frame'],
      [42, 'frame'],
      [{ ...docs('book'), asset_id: 12345 }, 'book'],
      [{ ...docs('book'), bids: 'none' }, 'book'],
      [{ ...docs('book'), bids: [{ price: '1.5', size: '10' }] }, 'book'],
      [{ ...docs('book'), asks: [{ price: '0.52', size: '-5' }] }, 'book'],
      [{ ...docs('book'), timestamp: 'yesterday' }, 'book'],
      [change('1.5', '10'), 'price_change'],
      [change('0.5', '-10'), 'price_change'],
      [change('0.5', 'ten'), 'price_change'],
      [change('0.5', '10', 'HOLD'), 'price_change'],
      [change('0.50001', '10'), 'price_change'], // finer than a unit
      [{ ...change('0.5', '10'), price_changes: 'x' }, 'price_change'],
      [{ ...docs('last_trade_price'), price: 7 }, 'last_trade_price'],
      [{ ...docs('new_market'), assets_ids: 'x' }, 'new_market'],
      [{ ...docs('market_resolved'), winning_asset_id: 'nobody' }, 'market_resolved'],
    ];
    for (const [raw] of bad) expect(feed(raw)).toEqual([]);
    const kinds: Record<string, number> = {};
    for (const [, k] of bad) kinds[k] = (kinds[k] ?? 0) + 1;
    expect(Object.fromEntries(m.stats.malformed)).toEqual(kinds);
    expect(levelsOf(books.get(ASSET))).toEqual(before);
  });

  it('a frame with one bad entry is dropped whole', () => {
    const { books, feed } = primed();
    const f = change('0.47', '5');
    (f['price_changes'] as unknown[]).push({ asset_id: ASSET, price: '0.46', size: '-1', side: 'BUY' });
    expect(feed(f)).toEqual([]);
    expect(books.get(ASSET)!.bids.get(4700)).toBe(0);
  });

  it('unknown event types are counted, not mapped', () => {
    const m = mapper();
    expect(run(m, { event_type: 'order_book_v9', asset_id: ASSET })).toEqual([]);
    expect(run(m, { event_type: 7 })).toEqual([]);
    expect(run(m, { hello: 'world' })).toEqual([]);
    expect(Object.fromEntries(m.stats.unknown)).toEqual({ order_book_v9: 1, 'event_type:number': 1, 'no event_type': 1 });
  });

  it('truncated JSON never reaches the mapper (the feed counts it); arrays of frames are mapped one by one', () => {
    expect(() => JSON.parse('[{"event_type":"book","asset_id":"')).toThrow();
    const m = mapper();
    const out = run(m, [docs('book'), { event_type: 'book', asset_id: 1 }, docs('tick_size_change')]);
    expect(out.map((e) => e.type)).toEqual(['book_snapshot']);
    expect(m.stats.malformed.get('book')).toBe(1);
    expect(m.stats.ignored).toBe(1);
    expect(run(m, [])).toEqual([]);
  });

  it('size "0" deletes a level; a consistent best_bid passes', () => {
    const { books, feed } = primed();
    const out = feed(change('.50', '0', 'BUY', { best_bid: '0.49', best_ask: '0.52' }));
    expect(out).toEqual([{ type: 'book_delta', ...base, timestamp: 123456790000, marketId: MARKET, instrument: ASSET, changes: [['bid', 5000, 0]] }]);
    expect(books.get(ASSET)!.bids.levels()).toEqual([
      [4900, 20],
      [4800, 30],
    ]);
  });

  it('a best_bid that disagrees with the book is a warning; persisting through later frames, a gap: deltas dropped until a book', () => {
    const { m, books, feed } = primed();
    // The venue says the best bid is still .50 after we removed it: the venue may be ahead of its
    // level updates, so the change is applied and passed on, and the disagreement watched.
    const first = feed(change('.50', '0', 'BUY', { best_bid: '0.5', best_ask: '0.52' }));
    expect(first).toEqual([{ type: 'book_delta', ...base, timestamp: 123456790000, marketId: MARKET, instrument: ASSET, changes: [['bid', 5000, 0]] }]);
    expect(m.bestPriceWarnings).toBe(1);
    for (let i = 1; i < SUSPECT_FRAMES; i++) expect(feed(change('.45', String(i), 'BUY', { best_bid: '0.5' })).map((e) => e.type)).toEqual(['book_delta']);
    // Still there after SUSPECT_FRAMES further frames: an update was lost.
    const out = feed(change('.46', '1', 'BUY', { best_bid: '0.5', best_ask: '0.52' }));
    expect(out).toEqual([
      {
        type: 'feed',
        ...base,
        timestamp: 123456790000,
        state: 'gap',
        instrument: ASSET,
        detail: `best bid 4900 != venue 5000 through ${SUSPECT_FRAMES} frames (0 ms)`,
      },
    ]);
    expect(m.stats.gaps).toBe(1);
    expect(books.get(ASSET)!.ready).toBe(false);
    expect(feed(change('.47', '10', 'BUY', { best_bid: '0.5', best_ask: '0.52' }))).toEqual([]);
    // The server's next book resyncs.
    expect(feed(docs('book')).map((e) => e.type)).toEqual(['book_snapshot']);
    expect(feed(change('.51', '10', 'BUY', { best_bid: '0.51', best_ask: '0.52' })).map((e) => e.type)).toEqual(['book_delta']);
    expect(books.get(ASSET)!.bids.best()).toBe(5100);
  });

  it('a disagreement the next frames resolve is only a warning; one still there SUSPECT_MS later is a gap', () => {
    const { m, books, feed } = primed();
    const at = (ms: number, c: Record<string, unknown>): Record<string, unknown> => ({ ...c, timestamp: String(123456790000 + ms) });
    // The venue reports the post-trade best (.49) before the level it took is removed.
    expect(feed(at(0, change('.47', '5', 'BUY', { best_bid: '0.49' }))).map((e) => e.type)).toEqual(['book_delta']);
    expect(feed(at(1, change('.50', '0', 'BUY', { best_bid: '0.49' }))).map((e) => e.type)).toEqual(['book_delta']);
    expect([m.bestPriceWarnings, m.stats.gaps]).toEqual([1, 0]);
    expect(books.get(ASSET)!.bids.best()).toBe(4900);
    // A new disagreement, and the next frame showing it comes SUSPECT_MS of venue time later.
    expect(feed(at(10, change('.48', '7', 'BUY', { best_bid: '0.5' }))).map((e) => e.type)).toEqual(['book_delta']);
    const late = feed(at(10 + SUSPECT_MS, change('.48', '8', 'BUY', { best_bid: '0.5' })));
    expect(late).toMatchObject([{ type: 'feed', state: 'gap', instrument: ASSET, detail: `best bid 4900 != venue 5000 through 1 frames (${SUSPECT_MS} ms)` }]);
    expect([m.bestPriceWarnings, m.stats.gaps]).toEqual([2, 1]);
  });

  it('reset() forgets the check books but keeps the token table', () => {
    const { m } = primed();
    run(m, docs('new_market'));
    m.reset();
    // Without a check book, a delta is passed on unchecked (the store refuses it until a snapshot).
    expect(run(m, change('.50', '0', 'BUY', { best_bid: '0.5' })).map((e) => e.type)).toEqual(['book_delta']);
    expect(m.token('76043073756653678226373981964075571318267289248134717369284518995922789326425')?.side).toBe('yes');
  });

  it('REST shapes that fail zod are counted as malformed', () => {
    const m = mapper();
    const gm = fixture('gamma_market_btc_updown_5m.json') as Record<string, unknown>;
    expect(run(m, { ...gm, outcomes: 'Up,Down' })).toEqual([]);
    expect(run(m, { ...gm, outcomes: '["A","B","C"]' })).toEqual([]);
    const [tr] = fixture('data_api_trades_capture_2026-07-02.json') as Record<string, unknown>[];
    expect(run(m, { ...tr, size: -3 })).toEqual([]);
    expect(Object.fromEntries(m.stats.malformed)).toEqual({ gamma_market: 2, data_trade: 1 });
  });

  it('map() output for a market upsert can seed learn()', () => {
    const u = run(mapper(), fixture('gamma_market_btc_updown_5m.json'))[0] as MarketUpsert;
    const m = mapper();
    m.learn(u);
    expect(m.token(u.noInstrument!)).toEqual({ asset: u.noInstrument, marketId: u.marketId, side: 'no', outcome: 'Down' });
    expect(isObject(u.extra)).toBe(true);
  });
});
