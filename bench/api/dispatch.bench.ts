/**
 * The request path's JavaScript alone (issue 34): `HttpServer.dispatch` of the real router, access
 * layer and routes (as `npm start` composes them, over a state filled with a few markets and books,
 * no venue), driven in one process by stand-ins for uWS's request and response that hand out fresh
 * strings per call as uWS does (url, query, header names and values) and drop what is written. No
 * socket, no kernel, no ingest: what the service's own code costs per request when it runs hot, the
 * part the bare route of bench/api/live.bench.ts does not run. Under live ingest the same code costs
 * several times as much (its objects and code leave the caches between wrk's batches): this bench
 * says whether a change removes work, live.bench what that is worth on the port.
 *
 * /trades reads a log of 150 trades (its page is 100 rows, as under live ingest).
 *
 * Env: DISPATCH_N (requests per round, 200,000), DISPATCH_ROUNDS (7), DISPATCH_ONLY (substrings of
 * the endpoint names). Prints ns per request per endpoint (the median and the lowest round).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type * as UWS from 'uWebSockets.js';
import { buildCore, buildHttp } from '../../src/compose.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { Persistence } from '../../src/persist/store.js';
import { applyEvent } from '../../src/state/engine.js';
import { begin } from '../lib.js';

const N = Number(process.env['DISPATCH_N'] ?? 200_000);
const ROUNDS = Number(process.env['DISPATCH_ROUNDS'] ?? 7);
const ONLY = (process.env['DISPATCH_ONLY'] ?? '').split(',');
/** Trades in the log: more than a page, so /trades?limit=100 lists 100 and has more. */
const TRADES = 150;

/**
 * Distinct copies of a string, handed out in turn: uWS makes a new one-byte string per call, so the
 * path never sees the string it saw last as the same object (copying per call here would cost more
 * than the path measured).
 */
function copies(s: string): () => string {
  const all = Array.from({ length: 64 }, () => Buffer.from(s, 'latin1').toString('latin1'));
  let i = 0;
  return () => all[(i = (i + 1) & 63)]!;
}

/** What the fake response was given, so the answer can be checked once. */
let status = '';
let bodyBytes = 0;

const res = {
  writeStatus(s: unknown) {
    status = typeof s === 'string' ? s.slice(0, 3) : Buffer.from(s as Uint8Array).toString('latin1', 0, 3);
    return res;
  },
  writeHeader() {
    return res;
  },
  end(body?: string | Uint8Array) {
    bodyBytes = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    return res;
  },
  endWithoutBody() {
    return res;
  },
  onAborted() {
    return res;
  },
  cork(f: () => void) {
    f();
    return res;
  },
  getRemoteAddressAsText() {
    return Buffer.from('127.0.0.1').buffer;
  },
};

function reqOf(url: string, query: string, key: string): UWS.HttpRequest {
  const [u, q, k, host, hostName, keyName] = [copies(url), copies(query), copies(key), copies('127.0.0.1:8080'), copies('host'), copies('x-api-key')];
  return {
    getUrl: u,
    getQuery: q,
    getMethod: () => 'get',
    getHeader: (name: string) => (name === 'x-api-key' ? k() : name === 'host' ? host() : ''),
    forEach(cb: (k: string, v: string) => void) {
      cb(hostName(), host());
      cb(keyName(), k());
    },
  } as unknown as UWS.HttpRequest;
}

async function main(): Promise<void> {
  const config = loadConfig({ env: {} });
  const dir = mkdtempSync(join(tmpdir(), 'cb-dispatch-'));
  const core = buildCore(config, { persistence: new Persistence(dir), log });
  const { http } = buildHttp(core);
  // Front off, as npm start runs it: the router checks framing with its header walk.
  (http as unknown as { checkFraming: boolean }).checkFraming = true;
  const { key } = core.keys.create('enterprise', 'bench');
  const T = Date.now();
  const ids: string[] = [];
  for (let i = 0; i < 200; i++) {
    const marketId = `KXBENCH-26DEC01-T${i}`;
    const evs: NormalizedEvent[] = [
      { timestamp: T, localTimestamp: T, venue: 'venue_a', type: 'market', marketId, title: `Bench market ${i}?`, status: 'active', closeTime: T + 86_400_000 },
      {
        timestamp: T,
        localTimestamp: T,
        venue: 'venue_a',
        type: 'book_snapshot',
        marketId,
        instrument: marketId,
        bids: Array.from({ length: 10 }, (_, j): [number, number] => [4000 - j * 100, 10 + j]),
        asks: Array.from({ length: 10 }, (_, j): [number, number] => [4100 + j * 100, 20 + j]),
      },
    ];
    for (const e of evs) applyEvent(core.state, e);
    ids.push(encodeURIComponent(`venue_a:${marketId}`));
  }
  // Trades in the default window, appended to the log as the persistence flow appends them, so
  // /trades?limit=100 serves a full page (~27 KB of rows) as it does under live ingest, not an empty one.
  for (let i = 0; i < TRADES; i++) {
    const t = T - (TRADES - i) * 1000;
    const stored = core.state.trades.add({
      type: 'trade',
      venue: 'venue_a',
      marketId: `KXBENCH-26DEC01-T${i % 200}`,
      tradeId: `bench-${i}`,
      price: 4000 + (i % 50) * 10,
      yesPrice: 4000 + (i % 50) * 10,
      size: 1 + (i % 40),
      side: 'buy',
      takerSide: i % 2 === 0 ? 'yes' : 'no',
      timestamp: t,
      localTimestamp: t,
    });
    if (stored) core.persistence.appendTrade(stored);
  }
  await core.persistence.flushed();
  const endpoints: [string, string, string][] = [
    ['/markets?limit=50', '/api/v2/markets', 'limit=50'],
    ['/prices/bulk (100 ids)', '/api/v2/prices/bulk', `ids=${ids.slice(0, 100).join(',')}`],
    ['/orderbook', '/api/v2/orderbook', 'platform=venue_a&market_id=KXBENCH-26DEC01-T7'],
    ['/trades?limit=100', '/api/v2/trades', 'limit=100'],
  ];
  const dispatch = (http as unknown as { dispatch(res: unknown, req: UWS.HttpRequest, method: string): void }).dispatch.bind(http);
  begin('REST request path in one process (dispatch)', `${N.toLocaleString('en-US')} requests a round, ${ROUNDS} rounds, medians`);
  for (const [name, url, query] of endpoints) {
    if (!ONLY.some((o) => name.includes(o))) continue;
    const req = reqOf(url, query, key);
    dispatch(res, req, 'get');
    if (status !== '200') throw new Error(`${name}: status ${status}`);
    const ns: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      for (let i = 0; i < N; i++) dispatch(res, req, 'get');
      ns.push(((performance.now() - t0) * 1e6) / N);
    }
    ns.sort((a, b) => a - b);
    console.log(`${name}: ${ns[ns.length >> 1]!.toFixed(0)} ns per request (lowest round ${ns[0]!.toFixed(0)}; ${bodyBytes} bytes)`);
  }
  http.close();
  await core.persistence.close();
  rmSync(dir, { recursive: true, force: true });
}

await main();
// The core's timers (quota flush, persistence) would keep the process up.
process.exit(0);
