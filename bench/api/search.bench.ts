/**
 * `/search` latency over ~100,000 priced markets (issue 5 target: p99 under 15 ms). The state is
 * the simulator world at scale 185 (every venue's listings as the `market` + `book_snapshot`
 * events their adapters would emit), matched by the real MatchingService, served by the real access
 * stack + matching routes in a child process (this script run with argument `target`). This process
 * drives `/search` with autocannon at 10 connections, one run per query, against a bare route that
 * serves a pre-built body of the same size as the largest answer (the baseline).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { begin, record, type Row } from '../lib.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 4);
const SCALE = Number(process.env['SCALE'] ?? 185);
const QUERIES = ['Bitcoin', 'Fed', 'NFL', 'Chiefs', 'Kansas City', 'Lakers', 'JD Vance', 'Gavin Newsom', 'Team Liquid', 'election'];

interface TargetInfo {
  port: number;
  key: string;
  markets: number;
  priced: number;
  groups: number;
  sizes: Record<string, number>;
  totals: Record<string, number>;
  buildSec: number;
  matchSec: number;
}

async function target(): Promise<void> {
  const [
    { Api },
    { KeyStore },
    { loadPlans },
    { QuotaLedger },
    { ApiContext },
    { registerMatching },
    { VenueDirectory },
    { loadConfig },
    { log },
    { MatchingService },
    { Persistence },
    { HttpServer },
    { createWorld },
    { applyEvent, EngineState },
    { apiMarketId },
  ] = await Promise.all([
    import('../../src/access/api.js'),
    import('../../src/access/keys.js'),
    import('../../src/access/plans.js'),
    import('../../src/access/quota.js'),
    import('../../src/api/context.js'),
    import('../../src/api/matching.js'),
    import('../../src/venues/directory.js'),
    import('../../src/config/load.js'),
    import('../../src/core/log.js'),
    import('../../src/matching/service.js'),
    import('../../src/persist/store.js'),
    import('../../src/server/http.js'),
    import('../../src/sim/world.js'),
    import('../../src/state/engine.js'),
    import('../../src/venues/protocol.js'),
  ]);
  log.level = 'silent';
  const config = loadConfig({ env: {} });
  const t0 = performance.now();
  const world = createWorld({ seed: 1, venues: config.venues, scale: SCALE });
  const state = new EngineState(config.venues);
  const now = Date.now();
  let markets = 0;
  for (const v of config.venues) {
    for (const l of world.listings(v.label)) {
      const marketId = apiMarketId(v, l.id);
      const poly = v.protocol === 'polymarket';
      // The book key: the listing's native id (for polymarket the brief's choice, the condition id).
      const yes = l.id;
      applyEvent(state, {
        type: 'market',
        venue: v.label,
        marketId,
        title: l.title,
        eventTitle: l.eventTitle,
        seriesTitle: l.seriesTitle,
        outcome: l.outcome,
        category: l.category,
        tags: l.tags,
        status: l.status,
        openTime: l.openTime,
        closeTime: l.closeTime,
        yesInstrument: yes,
        volume: l.volume,
        ...(poly && l.ids['slug'] ? { extra: { slug: l.ids['slug'] } } : {}),
        timestamp: now,
        localTimestamp: now,
      });
      applyEvent(state, {
        type: 'book_snapshot',
        venue: v.label,
        marketId,
        instrument: yes,
        bids: l.book.bids.levels(),
        asks: l.book.asks.levels(),
        timestamp: now,
        localTimestamp: now,
      });
      markets++;
    }
  }
  const buildSec = (performance.now() - t0) / 1000;
  const dir = mkdtempSync(join(tmpdir(), 'cb-bench-search-'));
  const persistence = new Persistence(dir);
  const keys = new KeyStore(persistence.db('keys'));
  const quota = new QuotaLedger(persistence.db('quota'));
  quota.start();
  const { key } = keys.create('enterprise', 'bench');
  const http = new HttpServer(log);
  const api = new Api(http, '/api/v2', keys, quota, loadPlans());
  const ctx = new ApiContext(config, state, persistence);
  const m0 = performance.now();
  const matching = new MatchingService(state, new VenueDirectory(config), undefined);
  const matchSec = (performance.now() - m0) / 1000;
  registerMatching(api, ctx, matching);
  let bare = { status: 200, body: '{}' };
  http.get('/bare-search', () => bare);
  const port = await http.listen('127.0.0.1', 0);
  const sizes: Record<string, number> = {};
  const totals: Record<string, number> = {};
  for (const q of QUERIES) {
    const res = await fetch(`http://127.0.0.1:${port}/api/v2/search?q=${encodeURIComponent(q)}`, { headers: { 'x-api-key': key } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`search ${q}: ${res.status} ${text.slice(0, 200)}`);
    sizes[q] = Buffer.byteLength(text);
    totals[q] = (JSON.parse(text) as { _meta: { total_count: number } })._meta.total_count;
  }
  const biggest = Math.max(...Object.values(sizes));
  const shell = JSON.stringify({ events: [], pad: '' }).length;
  bare = { status: 200, body: JSON.stringify({ events: [], pad: 'x'.repeat(biggest - shell) }) };
  let priced = 0;
  for (const m of state.catalog.all()) {
    const q = state.quotes.get(m.venue, m.marketId);
    if (q && (q.yesBid !== undefined || q.yesAsk !== undefined)) priced++;
  }
  const info: TargetInfo = { port, key, markets, priced, groups: [...matching.served()].length, sizes, totals, buildSec, matchSec };
  process.stdout.write(`${JSON.stringify(info)}\n`);
  const stop = (): void => {
    http.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

async function main(): Promise<void> {
  begin(
    '/search over 100,000 markets',
    `Latency of /api/v2/search over the simulator world at scale ${SCALE} (every venue, books and quotes), matched by the real MatchingService, against a bare route serving a pre-built body as large as the largest answer. Server in a child process; autocannon in this one.`,
  );
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'target'], { stdio: ['ignore', 'pipe', 'inherit'] });
  process.once('exit', () => child.kill('SIGKILL'));
  // SIGTERM lets the target delete its temporary data dir; SIGKILL if it has not exited in 3 s.
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([gone, new Promise((r) => (timer = setTimeout(r, 3000)))]);
    clearTimeout(timer);
    child.kill('SIGKILL');
  };
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (c) => reject(new Error(`target exited ${c}`)));
    });
    const t = JSON.parse(line) as TargetInfo;
    const base = `http://127.0.0.1:${t.port}`;
    const h = { 'x-api-key': t.key };
    const run = async (url: string, headers: Record<string, string>): Promise<{ rps: number; p50: number; p99: number; bad: number }> => {
      const r = await autocannon({ url, connections: 10, duration: SECONDS, headers, pipelining: 1 });
      return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, bad: r.errors + r.non2xx + r.timeouts };
    };
    await autocannon({ url: `${base}/api/v2/search?q=Bitcoin`, connections: 10, duration: 1, headers: h });
    const biggest = Math.max(...Object.values(t.sizes));
    const b = await run(`${base}/bare-search`, {});
    const rows: Row[] = [{ label: `bare ${biggest}-byte body`, baseline: true, rps: b.rps, p50: b.p50, p99: b.p99 }];
    let bad = b.bad;
    let worst = 0;
    for (const q of QUERIES) {
      const r = await run(`${base}/api/v2/search?q=${encodeURIComponent(q)}`, h);
      bad += r.bad;
      worst = Math.max(worst, r.p99);
      rows.push({ label: `q=${q}`, hits: t.totals[q], bytes: t.sizes[q], rps: r.rps, p50: r.p50, p99: r.p99 });
    }
    record(
      {
        title: `/search, 10 connections, ${SECONDS} s per query`,
        columns: [
          { key: 'hits', title: 'events found' },
          { key: 'bytes', title: 'body bytes' },
          { key: 'rps', title: 'req/s', digits: 0 },
          { key: 'p50', title: 'p50 ms', digits: 1 },
          { key: 'p99', title: 'p99 ms', digits: 1 },
        ],
        ratio: { metric: 'rps', title: 'vs bare' },
        target: { text: '/search p99 < 15 ms', met: worst < 15 },
        interpretation: `Over ${t.markets.toLocaleString('en-US')} markets (${t.priced.toLocaleString('en-US')} with a price), the worst query's p99 is ${worst.toFixed(1)} ms against ${b.p99.toFixed(1)} ms for the bare body.`,
        notes: [
          `World built in ${t.buildSec.toFixed(1)} s; MatchingService indexed it in ${t.matchSec.toFixed(1)} s (${t.groups.toLocaleString('en-US')} cross-venue groups).`,
          ...(bad ? [`${bad} errors, timeouts or non-2xx responses`] : []),
        ],
      },
      rows,
    );
  } finally {
    await kill();
  }
}

if (process.argv[2] === 'target') await target();
else await main();
