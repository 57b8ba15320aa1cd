/**
 * Server side of the WebSocket fan-out benchmark (bench/ws/fanout.bench.ts), in its own process.
 * Mode `hub`: the real WsHub over an EngineState; a tick loop applies book deltas that move the
 * top of book of random markets (each one a price_update published to its topic). Mode `bare`:
 * uWebSockets.js alone, the same topics and rate, publishing a pre-built message of the same
 * size: the baseline. Prints {"port","key"} when ready; runs until killed.
 */
import { EMPTY } from 'rxjs';
import { fanoutFlow } from '../../pipelines/fanout.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyStore } from '../../src/access/keys.js';
import { loadPlans } from '../../src/access/plans.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer } from '../../src/server/http.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { WsHub } from '../../src/ws/hub.js';

log.level = 'silent';
const mode = process.argv[2] ?? 'hub';
const markets = Number(process.argv[3] ?? 10_000);
const rate = Number(process.argv[4] ?? 10_000);
const id = (i: number): string => `KXBENCH-26NOV22-M${String(i).padStart(6, '0')}`;
const http = new HttpServer(log);
let key = 'none';
let tick: (i: number) => void;

if (mode === 'hub') {
  const config = loadConfig({ env: {} });
  const persistence = new Persistence(mkdtempSync(join(tmpdir(), 'cb-fanout-')));
  const keys = new KeyStore(persistence.db('keys'));
  key = keys.create('enterprise', 'bench').key;
  const state = new EngineState(config.venues);
  const hub = new WsHub({ http, path: '/api/v2/ws', state, venues: new VenueDirectory(config), keys, plans: loadPlans(), log }, { subscribeRate: 1_000_000 });
  fanoutFlow(EMPTY, state, hub, undefined);
  const t = Date.now();
  for (let i = 0; i < markets; i++) {
    applyEvent(state, { type: 'market', venue: 'venue_a', marketId: id(i), title: `Bench ${i}?`, status: 'active', timestamp: t, localTimestamp: t });
    applyEvent(state, {
      type: 'book_snapshot',
      venue: 'venue_a',
      marketId: id(i),
      instrument: id(i),
      bids: [
        [4000, 10],
        [3900, 10],
      ],
      asks: [
        [4200, 10],
        [4300, 10],
      ],
      timestamp: t,
      localTimestamp: t,
    });
  }
  // Per market: alternately add and remove a better bid, so every tick moves the top of book.
  const flip = new Uint8Array(markets);
  tick = (i) => {
    const m = id(i);
    const now = Date.now();
    flip[i] = flip[i]! ^ 1;
    applyEvent(state, {
      type: 'book_delta',
      venue: 'venue_a',
      marketId: m,
      instrument: m,
      changes: [['bid', 4100, flip[i] ? 5 : 0]],
      timestamp: now,
      localTimestamp: now,
    });
  };
} else {
  const app = http.app;
  app.ws('/api/v2/ws', {
    message: (ws, data) => {
      const msg = JSON.parse(Buffer.from(data).toString()) as { market_ids: string[] };
      for (const m of msg.market_ids) ws.subscribe(`prices:venue_a:${m}`);
      ws.send('{"type":"subscribed"}');
    },
  });
  const seq = new Map<string, number>();
  tick = (i) => {
    const topic = `prices:venue_a:${id(i)}`;
    if (app.numSubscribers(topic) === 0) return;
    const s = (seq.get(topic) ?? 0) + 1;
    seq.set(topic, s);
    app.publish(
      topic,
      `{"type":"price_update","channel":"prices","market_id":"${id(i)}","source":"venue_a","yes_bid":41,"yes_ask":42,"no_bid":58,"no_ask":59,"last_price":null,"volume":null,"seq":${s},"epoch":1,"ts":${Date.now()}}`,
    );
  };
}

const port = await http.listen('127.0.0.1', 0);
// Ticks in 1 ms slices so the rate is smooth, not bursty.
let carry = 0;
let n = 0;
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  carry += ((now - last) * rate) / 1000;
  last = now;
  const k = Math.floor(carry);
  carry -= k;
  for (let j = 0; j < k; j++) tick((n++ * 7919) % markets);
}, 1);
process.stdout.write(`${JSON.stringify({ port, key })}\n`);
process.on('SIGINT', () => process.exit(0));
