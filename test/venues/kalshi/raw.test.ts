import { constants, generateKeyPairSync, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { kalshiAuthHeaders } from '../../../src/venues/kalshi/feed.js';
import {
  isWsFrame,
  isWsMarketLifecycle,
  isWsOrderbookDelta,
  isWsOrderbookSnapshot,
  isWsTicker,
  isWsTrade,
  kalshiEventResponseSchema,
  kalshiExchangeStatusSchema,
  kalshiMarketSchema,
  kalshiMarketsPageSchema,
  kalshiOrderbooksSchema,
  kalshiSeriesListSchema,
  wsCommandSchema,
  wsServerFrameSchema,
} from '../../../src/venues/kalshi/raw.js';

const DIR = 'test/fixtures/kalshi/';
const fixture = (name: string): unknown => JSON.parse(readFileSync(DIR + name, 'utf8')) as unknown;
const frames = (name: string): unknown[] => {
  const f = fixture(name);
  return Array.isArray(f) ? f : [f];
};

const WS_SERVER_FIXTURES = [
  'ws_control_responses_spec_examples.json',
  'ws_demo_capture_control_and_edge_frames_2026-08-27.json',
  'ws_market_lifecycle_v2_spec_examples.json',
  'ws_orderbook_snapshot_then_delta_spec_example.json',
  'ws_ticker_capture_2026-02-12.json',
  'ws_ticker_spec_example.json',
  'ws_ticker_v2_legacy_docs_example.json',
  'ws_trade_spec_example.json',
];

describe('Kalshi zod wire schemas over the fixtures', () => {
  it.each(WS_SERVER_FIXTURES)('every server frame of %s matches a frame schema', (name) => {
    for (const f of frames(name)) {
      const r = wsServerFrameSchema.safeParse(f);
      expect(r.success, JSON.stringify(f).slice(0, 200)).toBe(true);
    }
  });

  it('the spec command examples match the command schema', () => {
    const cmds = frames('ws_commands_spec_examples.json');
    expect(cmds).toHaveLength(15);
    for (const c of cmds) expect(wsCommandSchema.safeParse(c).success).toBe(true);
  });

  it('the hot-path guards accept what the schemas accept', () => {
    const all = WS_SERVER_FIXTURES.flatMap(frames).filter(isWsFrame);
    const count = (g: (f: never) => boolean): number => all.filter((f) => g(f as never)).length;
    expect(count(isWsOrderbookSnapshot)).toBe(2);
    expect(count(isWsOrderbookDelta)).toBe(1);
    expect(count(isWsTicker)).toBe(11);
    expect(count(isWsTrade)).toBe(1);
    expect(count(isWsMarketLifecycle)).toBe(4);
  });

  it('REST: markets page, event with nested markets, series, orderbooks, exchange status', () => {
    const page = kalshiMarketsPageSchema.parse(fixture('rest_markets_page_first2_2026-09-13.json'));
    expect(page.markets).toHaveLength(2);
    expect(page.cursor).toBe('CgwIypWZ1QYQoMuM_wESHUtYTkNBQUZUT1RBTC0yNlNFUDE5Q09MT05XLTUz');

    const ev = kalshiEventResponseSchema.parse(fixture('rest_event_with_nested_markets_KXELONMARS-99_2026-09-13.json'));
    expect(ev.markets).toEqual([]);
    expect(ev.event.markets).toHaveLength(1);
    expect(kalshiMarketSchema.parse(ev.event.markets![0]).ticker).toBe('KXELONMARS-99');

    const series = kalshiSeriesListSchema.parse(fixture('rest_series_subset_2026-09-13.json'));
    expect(series.series?.map((s) => [s.ticker, s.category, s.frequency])).toEqual([
      ['KXINX', 'Financials', 'daily'],
      ['KXELONMARS', 'Politics', 'custom'],
      ['KXBTCD', 'Crypto', 'hourly'],
      ['KXNEXTDNCCHAIR', 'Elections', 'one_off'],
    ]);

    const books = kalshiOrderbooksSchema.parse(fixture('rest_markets_orderbooks_KXNEXTDNCCHAIR-45_2026-09-13.json'));
    expect(books.orderbooks).toHaveLength(34);

    const status = kalshiExchangeStatusSchema.parse(fixture('rest_exchange_status_2026-09-13.json'));
    expect(status.trading_active).toBe(true);
    expect(status.exchange_index_statuses).toHaveLength(4);
  });

  it('REST schemas reject wrong types', () => {
    expect(kalshiMarketSchema.safeParse({ ticker: 'A', event_ticker: 'E', status: 3 }).success).toBe(false);
    expect(kalshiOrderbooksSchema.safeParse({ orderbooks: [{ ticker: 'A', orderbook_fp: { yes_dollars: [[0.5, '1.00']] } }] }).success).toBe(false);
    expect(kalshiSeriesListSchema.safeParse({ series: [{ ticker: 'X' }] }).success).toBe(false);
  });
});

describe('kalshiAuthHeaders', () => {
  it('is undefined without a key', () => {
    expect(kalshiAuthHeaders('wss://x/trade-api/ws/v2', {})).toBeUndefined();
    expect(kalshiAuthHeaders('wss://x/trade-api/ws/v2', { KALSHI_API_KEY_ID: 'k' })).toBeUndefined();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('signs timestamp + GET + path with RSA-PSS SHA-256, afresh on every read', () => {
    // The timestamp is read from Date: a fake clock moved by 5 ms between the reads, not a 5 ms sleep.
    vi.useFakeTimers({ toFake: ['Date'] });
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const h = kalshiAuthHeaders('wss://api.example/trade-api/ws/v2', { KALSHI_API_KEY_ID: 'key-1', KALSHI_PRIVATE_KEY: pem })!;
    const check = (copy: Record<string, string>): void => {
      expect(copy['KALSHI-ACCESS-KEY']).toBe('key-1');
      const ok = verify(
        'sha256',
        Buffer.from(`${copy['KALSHI-ACCESS-TIMESTAMP']}GET/trade-api/ws/v2`),
        { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
        Buffer.from(copy['KALSHI-ACCESS-SIGNATURE']!, 'base64'),
      );
      expect(ok).toBe(true);
    };
    // The ws client copies the headers with a spread, as here.
    const first = { ...h };
    check(first);
    vi.advanceTimersByTime(5);
    const second = { ...h };
    check(second);
    expect(second['KALSHI-ACCESS-TIMESTAMP']).not.toBe(first['KALSHI-ACCESS-TIMESTAMP']);
  });
});
