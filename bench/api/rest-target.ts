/**
 * The server side of bench/api/rest.bench.ts, in its own process so the load generator does not
 * share its event loop: the real API (access layer + data routes, persistence attached) over an
 * EngineState of `MARKETS` markets built through the protocol mappers (bench/build.ts), `TRADES`
 * recent trades and one market with a year of one-minute candles (and their hour/day rollups) in LMDB.
 * Two bare routes serve pre-built bodies as large as the real `/markets?limit=50` and 100-id
 * `/prices/bulk` responses (the baselines). Prints one JSON line (port, key, ids, sizes) when ready.
 */
import { persistChanges } from '../../pipelines/persistence.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from '../../src/access/api.js';
import { KeyStore } from '../../src/access/keys.js';
import { loadPlans } from '../../src/access/plans.js';
import { QuotaLedger } from '../../src/access/quota.js';
import { ApiContext } from '../../src/api/context.js';
import { registerDataRoutes } from '../../src/api/index.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer } from '../../src/server/http.js';
import type { Candle } from '../../src/state/candles.js';
import { buildState, tradeBatches } from '../build.js';
import { rng } from '../lib.js';

log.level = 'silent';
const MARKETS = Number(process.argv[2] ?? 100_000);
const TRADES = Number(process.argv[3] ?? 200_000);
const MINUTES = Number(process.argv[4] ?? 525_600);

const config = loadConfig({ env: {} });
const dir = mkdtempSync(join(tmpdir(), 'cb-bench-rest-'));
const persistence = new Persistence(dir);
const t0 = performance.now();
const built = buildState(config.venues, { markets: MARKETS, levels: 10, seed: 41 });
built.mappers = [];
const state = built.state;
persistChanges(state, persistence);
const buildSec = (performance.now() - t0) / 1000;

// Trades: the generator's ids and prices, re-stamped to the last TRADES × 0.5 s (well inside the
// 48 h default window and the 30-day retention, which would otherwise prune them at start).
const now = Date.now();
let written = 0;
for (const batch of tradeBatches(config.venues, built, TRADES, 10_000, 42)) {
  for (const t of batch) {
    const ts = now - (TRADES - t.seq) * 500 - 1000;
    persistence.appendTrade({ ...t, timestamp: ts, localTimestamp: ts + 3 });
  }
  await persistence.flushed();
  written += batch.length;
}

// A year of one-minute candles for one Kalshi-venue market, a random walk in units.
const venueA = config.venues.find((v) => v.protocol === 'kalshi')!;
const histId = [...state.catalog.venue(venueA.label).keys()][0]!;
const r = rng(43);
const lastMinute = now - (now % 60_000) - 60_000;
let px = 5000;
for (let i = 0; i < MINUTES; i++) {
  const t = lastMinute - (MINUTES - 1 - i) * 60_000;
  const o = px;
  px = Math.max(100, Math.min(9900, px + Math.round((r() - 0.5) * 4) * 100));
  const c: Candle = {
    venue: venueA.label,
    marketId: histId,
    t,
    o,
    h: Math.max(o, px),
    l: Math.min(o, px),
    c: px,
    mid: px,
    volume: Math.floor(r() * 50),
    trades: Math.floor(r() * 5),
  };
  // As the service stores a closed minute: the minute log plus its hour and day rollups.
  persistence.appendCandle(c);
  if (i % 50_000 === 49_999) await persistence.flushed();
}
await persistence.flushed();
const dataSec = (performance.now() - t0) / 1000 - buildSec;

const keys = new KeyStore(persistence.db('keys'));
const quota = new QuotaLedger(persistence.db('quota'));
quota.start();
const { key } = keys.create('enterprise', 'bench');
const http = new HttpServer(log);
const api = new Api(http, '/api/v2', keys, quota, loadPlans());
const ctx = new ApiContext(config, state, persistence);
registerDataRoutes(api, ctx);

// 100 ids with quotes, spread over both venues.
const ids: string[] = [];
const all = [...state.catalog.all()];
for (let i = 0; ids.length < 100 && i < all.length; i += Math.floor(all.length / 150)) {
  const m = all[i]!;
  const q = state.quotes.get(m.venue, m.marketId);
  if (q && (q.yesBid !== undefined || q.yesAsk !== undefined)) ids.push(`${ctx.venues.slugOf(m.venue)}:${m.marketId}`);
}

/** A pre-built JSON body of exactly `bytes` bytes (a padded string field). */
function bodyOf(bytes: number): { status: number; body: string } {
  const shell = JSON.stringify({ data: [], pad: '' });
  return { status: 200, body: JSON.stringify({ data: [], pad: 'x'.repeat(Math.max(0, bytes - shell.length)) }) };
}
let bareMarkets = bodyOf(0);
let bareBulk = bodyOf(0);
let bareHistory = bodyOf(0);
http.get('/bare-markets', () => bareMarkets);
http.get('/bare-bulk', () => bareBulk);
http.get('/bare-history', () => bareHistory);

const port = await http.listen('127.0.0.1', 0);
const base = `http://127.0.0.1:${port}/api/v2`;
const size = async (path: string): Promise<number> => {
  const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text.slice(0, 200)}`);
  return Buffer.byteLength(text);
};
const marketsBytes = await size('/markets?limit=50');
const bulkBytes = await size(`/prices/bulk?ids=${encodeURIComponent(ids.join(','))}`);
const historyBytes = await size(
  `/prices/history?platform=${venueA.slug}&market_id=${encodeURIComponent(histId)}&interval=1h&from=${encodeURIComponent(new Date(Date.now() - 365 * 86_400_000).toISOString())}`,
);
bareMarkets = bodyOf(marketsBytes);
bareBulk = bodyOf(bulkBytes);
bareHistory = bodyOf(historyBytes);

process.stdout.write(
  `${JSON.stringify({
    port,
    key,
    ids,
    marketsBytes,
    bulkBytes,
    markets: state.catalog.size,
    trades: written,
    candles: MINUTES,
    hist: { platform: venueA.slug, marketId: histId },
    buildSec,
    dataSec,
  })}\n`,
);
const stop = (): void => {
  http.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
