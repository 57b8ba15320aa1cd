/**
 * REST and another client's WebSocket lag while one key does its worst within its plan (issue 30):
 * STORM_CONNS connections of one key each sending STORM_RATE subscribe/unsubscribe messages a
 * second for STORM_IDS order-book ids (storm-client.ts, its own process), against the same
 * service at idle, in one run. The service is `crossbook serve` with its embedded simulator
 * (startTarget); REST is autocannon on /markets?limit=50 from a second key; the other client
 * subscribes to 50 markets' prices with a third key, its lag = receive time − recv_ts. Prints the
 * figures and the storm/idle ratios; BENCHMARKS.md quotes them.
 *
 * Env: STORM_CONNS (25), STORM_RATE (15), STORM_IDS (577), STORM_SECONDS (10), STORM_TICKS (200).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAutocannon } from '../../src/capacity/rest-load.js';
import { createKey, keyWorks, startTarget } from '../../src/capacity/target.js';
import { quantile, WsLoad } from '../../src/capacity/ws-load.js';
import { begin, repoRoot } from '../lib.js';

const CONNS = Number(process.env['STORM_CONNS'] ?? 25);
const RATE = Number(process.env['STORM_RATE'] ?? 15);
const IDS = Number(process.env['STORM_IDS'] ?? 577);
const SECONDS = Number(process.env['STORM_SECONDS'] ?? 10);
const TICKS = Number(process.env['STORM_TICKS'] ?? 200);

begin('WebSocket subscription storm', 'REST and another client under one key doing its worst within its plan');

interface Phase {
  name: string;
  restRequests: number;
  restErrors: number;
  restP99: number;
  wsP99: number;
  cpuPct: number;
}

/** Idle then storm against one service started with `env` (configuration overrides). */
async function run(label: string, env: Readonly<Record<string, string>>): Promise<[Phase, Phase]> {
  const target = await startTarget({ ticksPerSecond: TICKS, env });
  const keyEnv = { ...process.env, DATA_DIR: target.dataDir, LOG_LEVEL: 'warn' };
  const restKey = createKey(target.dataDir, keyEnv);
  const watchKey = createKey(target.dataDir, keyEnv);
  await keyWorks(target.api, restKey);
  await keyWorks(target.api, watchKey);
  const tmp = mkdtempSync(join(tmpdir(), 'crossbook-storm-'));
  try {
    const books: string[] = [];
    const prices: string[] = [];
    for (let cursor: string | undefined, page = 0; books.length < IDS && page < 50; page++) {
      const r = (await (await fetch(`${target.api}/markets?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers: { 'x-api-key': restKey } })).json()) as {
        markets: { platform: string; market_id: string }[];
        next_cursor?: string | null;
      };
      for (const m of r.markets) {
        const id = `${m.platform}:${m.market_id}`;
        if (prices.length < 50) prices.push(id);
        if (m.platform !== 'venue_c' && m.platform !== 'venue_d') books.push(id);
      }
      cursor = r.next_cursor ?? undefined;
      if (!cursor) break;
    }
    const idsFile = join(tmp, 'ids.json');
    writeFileSync(idsFile, JSON.stringify(books.slice(0, IDS)));
    const wsUrl = `${target.url.replace('http', 'ws')}/api/v2/ws`;
    const watcher = new WsLoad(wsUrl, watchKey, 'prices', 'recv_ts');
    await watcher.grow(1, () => prices);
    const phase = async (name: string): Promise<Phase> => {
      watcher.reset();
      await target.sample().catch(() => undefined);
      const rest = await runAutocannon(target.url, ['/api/v2/markets?limit=50'], restKey, 20, SECONDS);
      // A service the storm starves may not answer /metrics within the sample's 30 s: NaN then.
      const s = await target.sample().catch(() => ({ cpuPct: NaN, lagP99Ms: NaN }));
      const out = {
        name: `${label} ${name}`,
        restRequests: rest.requests,
        restErrors: rest.errors,
        restP50: rest.p50,
        restP99: rest.p99,
        restMax: rest.max,
        rps: rest.rps,
        wsP99: quantile(watcher.latencies, 0.99),
        wsN: watcher.latencies.length,
        cpuPct: s.cpuPct,
        lagP99: s.lagP99Ms,
      };
      console.log(JSON.stringify(out));
      return out;
    };
    const idle = await phase('idle');
    const storm = spawn(
      process.execPath,
      ['--import', 'tsx', join(repoRoot(), 'bench/ws/storm-client.ts'), wsUrl, target.key, idsFile, String(CONNS), String(RATE)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    storm.stdout.on('data', (d: Buffer) => process.stdout.write(`${label} storm ${d.toString()}`));
    // The storm's connections open and reach their rate (its first per-second line).
    await new Promise((r) => storm.stdout.once('data', r));
    const under = await phase('storm');
    storm.kill('SIGKILL');
    watcher.close();
    return [idle, under];
  } finally {
    await target.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

const ratio = (label: string, [idle, storm]: [Phase, Phase]): string =>
  `${label}: REST p99 ${idle.restP99} → ${storm.restP99} ms (requests ${idle.restRequests} → ${storm.restRequests}, errors/timeouts ${idle.restErrors} → ${storm.restErrors}) (${(storm.restP99 / Math.max(idle.restP99, 1)).toFixed(2)}×), other client's WS p99 ${idle.wsP99} → ${storm.wsP99} ms (${(storm.wsP99 / Math.max(idle.wsP99, 1)).toFixed(2)}×), service CPU ${idle.cpuPct.toFixed(0)}% → ${storm.cpuPct.toFixed(0)}%`;
// Baseline in the same run: the same service with the key budget out of reach.
const off = await run('no key budget', { CROSSBOOK__websocket__keyIdsPerSecond: '100000000', CROSSBOOK__websocket__keyIdsBurst: '100000000' });
const on = await run('key budget', {});
console.log(ratio('no key budget', off));
console.log(ratio('key budget (default)', on));
