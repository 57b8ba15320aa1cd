import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRecording } from '../../src/cli/capture.js';
import { normalizeFrames } from '../../src/cli/normalize.js';
import { captureBatches, replayCommand } from '../../src/cli/replay.js';
import { buildCore, buildHttp } from '../../src/compose.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config, Protocol } from '../../src/config/schema.js';
import { log } from '../../src/core/log.js';
import type { BookSnapshot, NormalizedEvent } from '../../src/core/types.js';
import { Persistence } from '../../src/persist/store.js';
import type { ReplayInput, ReplayItem } from '../../src/replay/input.js';
import { replay, type BookLine, type ReplayRooms } from '../../src/replay/run.js';

/**
 * Real recordings in (issue 28): `crossbook capture import` (importRecording, what the command runs) turns recorded venue
 * frames of test/fixtures into capture segments of a fresh DATA_DIR; the service's HTTP layer on that
 * DATA_DIR serves them over GET /api/v2/replay, `crossbook replay` runs them through the whole
 * pipeline, and /orderbook on the replayed state serves the books the recordings end with.
 */

const FIX = join(__dirname, '../fixtures');
/** Import order; each file at its own receive time (--at), a second apart, a minute ago (inside retention). */
const RECORDINGS: readonly (readonly [Protocol, string])[] = [
  ['kalshi', 'kalshi/rest_markets_orderbooks_KXNEXTDNCCHAIR-45_2026-09-13.json'],
  ['kalshi', 'kalshi/ws_ticker_capture_2026-02-12.json'],
  ['polymarket', 'polymarket/ws_price_change_burst_capture_2026-09-29.json'],
];
const T = Math.floor(Date.now() / 1000) * 1000 - 60_000;
const TO = T + RECORDINGS.length * 1000;
const KALSHI_MARKET = 'KXNEXTDNCCHAIR-45-BWIK';
const POLY_TOKEN = '76670567130917723816490572615540605537878462672464291990940067659127658071111';

let dir: string;
let config: Config;
/** What `crossbook normalize` makes of each file, in import order: what every path below must give again. */
let expected: NormalizedEvent[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cb-import-service-'));
  config = { ...loadConfig({ env: {} }), dataDir: dir };
  expected = [];
  for (const [i, [protocol, file]] of RECORDINGS.entries()) {
    await importRecording(config, dir, join(FIX, file), { protocol, at: T + i * 1000 });
    const doc = JSON.parse(readFileSync(join(FIX, file), 'utf8')) as unknown;
    expected.push(...normalizeFrames(config, protocol, Array.isArray(doc) ? doc : [doc]).events);
  }
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * An event without its receive time (normalize stamps its own; the import stamped --at), nor its
 * venue time where the venue gave none and it is the receive time (Kalshi's REST books).
 */
const bare = (e: object): Record<string, unknown> => {
  const { localTimestamp, ...rest } = JSON.parse(JSON.stringify(e)) as Record<string, unknown>;
  if (rest['timestamp'] === localTimestamp) delete rest['timestamp'];
  return rest;
};

/** The last snapshot a recording gives an instrument: the book it ends with (the burst's closing `book` rebuilds exactly). */
const lastSnapshot = (instrument: string): BookSnapshot =>
  expected.filter((e): e is BookSnapshot => e.type === 'book_snapshot' && e.instrument === instrument).at(-1)!;

describe('real recordings in: capture import → replay → REST', () => {
  it('GET /api/v2/replay on the service over the imported DATA_DIR streams the events `normalize` gives for the files', async () => {
    const core = buildCore(config, { persistence: new Persistence(dir), log });
    const { http } = buildHttp(core);
    try {
      const base = `http://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2`;
      const headers = { 'x-api-key': core.keys.create('enterprise', 'tests').key };
      const get = async (q: string): Promise<Record<string, unknown>[]> => {
        const r = await fetch(`${base}/replay?${q}`, { headers });
        expect(r.status).toBe(200);
        return (await r.text())
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      };
      const lines = await get(`from=${new Date(T).toISOString()}&to=${TO}`);
      expect(lines.at(-1)).toEqual({ type: 'end', count: expected.length });
      const events = lines.slice(0, -1);
      expect(events.map(({ seq: _s, recv_ts: _r, platform: _p, market_id: _m, ...e }) => bare(e))).toEqual(expected.map(bare));
      // Receive times are the import's, one file a second.
      expect([...new Set(events.map((e) => e['recv_ts']))]).toEqual(RECORDINGS.map((_, i) => T + i * 1000));
      // Filters select on the imported events as on captured ones.
      const poly = config.venues.find((v) => v.protocol === 'polymarket')!;
      const books = await get(`from=${T}&to=${TO}&platform=${poly.slug}&types=book`);
      expect(books.length - 1).toBe(expected.filter((e) => e.venue === poly.label && e.type.startsWith('book_')).length);
    } finally {
      http.close();
      await core.capture?.close();
      await core.persistence.close();
    }
  });

  it('`crossbook replay` of the imported window runs them through the pipeline: the books are those the recordings end with', async () => {
    const out = join(dir, 'replay-out');
    const r = await replayCommand(config, { from: String(T), to: String(TO), out }, log);
    expect(r.events).toBe(expected.length);
    const books = readFileSync(join(out, 'books.ndjson'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as BookLine);
    for (const instrument of [KALSHI_MARKET, POLY_TOKEN]) {
      const want = lastSnapshot(instrument);
      expect(books.find((b) => b.instrument === instrument)).toMatchObject({ ready: true, bids: want.bids, asks: want.asks });
    }
    // Every book of the Kalshi REST document is there, as the document gives it.
    expect(books.filter((b) => b.venue === lastSnapshot(KALSHI_MARKET).venue)).toHaveLength(34);
  });

  it('/orderbook on the replayed state serves them; a Polymarket market whose catalog was not recorded is a 404 by condition id', async () => {
    const kalshi = config.venues.find((v) => v.protocol === 'kalshi')!;
    const poly = config.venues.find((v) => v.protocol === 'polymarket')!;
    let rooms: ReplayRooms | undefined;
    const answers: Record<string, { status: number; body: Record<string, unknown> }> = {};
    // After the last item, while the replay's rooms are up: the HTTP layer of the service over them.
    async function* thenAsk(items: ReplayInput): AsyncGenerator<ReplayItem | readonly ReplayItem[]> {
      yield* items;
      const { http } = buildHttp(rooms!.core, rooms!.domain);
      try {
        const base = `http://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2`;
        const headers = { 'x-api-key': rooms!.core.keys.create('enterprise', 'tests').key };
        for (const [name, q] of [
          ['kalshi', `platform=${kalshi.slug}&market_id=${KALSHI_MARKET}`],
          ['token', `platform=${poly.slug}&market_id=${POLY_TOKEN}`],
          ['condition', `platform=${poly.slug}&market_id=${lastSnapshot(POLY_TOKEN).marketId}`],
        ] as const) {
          const r = await fetch(`${base}/orderbook?${q}`, { headers });
          answers[name] = { status: r.status, body: (await r.json()) as Record<string, unknown> };
        }
      } finally {
        http.close();
      }
    }
    await replay({ config, items: thenAsk(captureBatches(config, { from: T, to: TO }, log)), onWired: (r) => (rooms = r), log });
    const cents = (ls: readonly (readonly [number, number])[]): { price: number; size: number }[] => ls.map(([p, s]) => ({ price: p / 100, size: s }));
    for (const [name, instrument] of [
      ['kalshi', KALSHI_MARKET],
      ['token', POLY_TOKEN],
    ] as const) {
      const want = lastSnapshot(instrument);
      expect(answers[name]).toMatchObject({ status: 200, body: { ready: true, yes: { bids: cents(want.bids), asks: cents(want.asks) } } });
    }
    expect(answers['condition']).toMatchObject({ status: 404, body: { error: expect.stringContaining(`no ${poly.label} market`) as unknown } });
  });
});
