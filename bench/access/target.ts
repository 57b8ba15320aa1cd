/**
 * The server side of bench/access/access.bench.ts, run in its own process so the load generator
 * does not share its event loop: two routes serving the same pre-built /status-sized body, one
 * bare (`/bare`) and one through the whole access layer (`/api/v2/cached`: key check, plan gate,
 * per-second bucket, query validation, monthly quota, rate-limit headers), with the HTTP front
 * off. Prints {"port", "key", "bytes"} on stdout when listening.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { Api } from '../../src/access/api.js';
import { KeyStore } from '../../src/access/keys.js';
import { p } from '../../src/access/params.js';
import { loadPlans } from '../../src/access/plans.js';
import { QuotaLedger } from '../../src/access/quota.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer } from '../../src/server/http.js';

log.level = 'silent';
const persistence = new Persistence(mkdtempSync(join(tmpdir(), 'cb-bench-access-')));
const keys = new KeyStore(persistence.db('keys'));
const quota = new QuotaLedger(persistence.db('quota'));
quota.start();
const { key } = keys.create('enterprise', 'bench');
const http = new HttpServer(log);
const api = new Api(http, '/api/v2', keys, quota, loadPlans());
const platforms: Record<string, unknown> = {};
for (const v of 'abcdefgh')
  platforms[`venue_${v}`] = {
    active_markets: 1234,
    live_markets: 987,
    feed_healthy: true,
    catalog_refreshed_at: new Date().toISOString(),
    catalog_healthy: true,
  };
const body = JSON.stringify({ status: 'ok', platforms, last_updated: new Date().toISOString() });
const reply = { status: 200, body };
http.get('/bare', () => reply);
api.route({ path: '/cached', summary: 'bench', query: z.object({ limit: p.int({ min: 1, max: 100, default: 20 }) }), handler: () => reply });
// Front off: uWS on the port itself, so the figures are the access layer's and not the relay's.
const port = await http.listen('127.0.0.1', 0, 'off');
process.stdout.write(`${JSON.stringify({ port, key, bytes: Buffer.byteLength(body) })}\n`);
process.on('SIGINT', () => process.exit(0));
