import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMPTY, type Subscription } from 'rxjs';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fanoutFlow } from '../../pipelines/fanout.js';
import { KeyStore } from '../../src/access/keys.js';
import { loadPlans } from '../../src/access/plans.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer } from '../../src/server/http.js';
import { AlertEngine, type Alert } from '../../src/signals/alerts.js';
import { WalletLedger } from '../../src/signals/wallets.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { WsHub } from '../../src/ws/hub.js';
import { takeMessage } from '../support/messages.js';

/**
 * The envelope clients of the hosted API speak: `action` for `type`, `heartbeat` for `ping`,
 * streamed messages with `channel` and a `data` body, errors with `code` and `message`; and the
 * smart_money / fade_finder alert channels fed by the alert engine through the fan-out flow.
 */
const config = loadConfig({ env: {} });
const dir = mkdtempSync(join(tmpdir(), 'cb-ws-env-'));
const T = Date.UTC(2026, 10, 22, 15);
const M = 'KXNFLGAME-26NOV23NESEA-SEA';
let persistence: Persistence;
let http: HttpServer;
let hub: WsHub;
let state: EngineState;
let alerts: AlertEngine;
let flow: Subscription;
let url: string;
const keys: Record<string, string> = {};

beforeAll(async () => {
  persistence = new Persistence(dir);
  state = new EngineState(config.venues);
  const ks = new KeyStore(persistence.db('keys'));
  const plans = loadPlans();
  // A plan whose REST alert endpoints are blocked: its WebSocket alert channels are too.
  const blocked = { ...plans, free: { ...plans.free, blocked: [...plans.free.blocked, 'fade_finder'] } };
  for (const p of ['free', 'dev'] as const) keys[p] = ks.create(p).key;
  http = new HttpServer(log);
  hub = new WsHub({ http, path: '/api/v2/ws', state, venues: new VenueDirectory(config), keys: ks, plans: blocked, log, alerts: true });
  const ledger = new WalletLedger(state, persistence, { log });
  alerts = new AlertEngine(ledger, persistence, { log });
  flow = fanoutFlow(EMPTY, state, hub, undefined, alerts);
  const port = await http.listen('127.0.0.1', 0);
  url = `ws://127.0.0.1:${port}/api/v2/ws`;
  const base = { venue: 'venue_a', timestamp: T, localTimestamp: T } as const;
  applyEvent(state, { ...base, type: 'market', marketId: M, title: 'New England at Seattle Winner?', status: 'active' });
  applyEvent(state, { ...base, type: 'book_snapshot', marketId: M, instrument: M, bids: [[5500, 10]], asks: [[5700, 20]] });
});
afterAll(async () => {
  flow.unsubscribe();
  hub.close();
  http.close();
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Client {
  ws: WebSocket;
  msgs: Record<string, unknown>[];
  welcome: Record<string, unknown>;
  next(pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  send(m: unknown): void;
}

async function connect(key: string): Promise<Client> {
  const ws = new WebSocket(url, { headers: { 'x-api-key': key } });
  const msgs: Record<string, unknown>[] = [];
  ws.on('message', (d) => msgs.push(JSON.parse(d.toString()) as Record<string, unknown>));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const c: Client = {
    ws,
    msgs,
    welcome: {},
    next: (pred) => takeMessage(msgs, pred),
    send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
  };
  c.welcome = await c.next((m) => m['type'] === 'welcome');
  return c;
}

let seq = 0;
const alert = (type: Alert['type']): Alert => ({
  seq: ++seq,
  type,
  venue: 'venue_a',
  marketId: M,
  token: null,
  outcome: 'yes',
  action: 'buy',
  wallet: null,
  price: 5700,
  size: 2000,
  notional: 5700 * 2000,
  tradeId: `t${seq}`,
  tradeTimestamp: T,
  createdAt: T,
  reason: 'test alert',
  figures: { hit_rate: 0.8 },
});

describe('the hosted envelope', () => {
  it('accepts action for type and heartbeat for ping', async () => {
    const c = await connect(keys['dev']!);
    c.send({ action: 'heartbeat' });
    await c.next((m) => m['type'] === 'pong');
    c.send({ type: 'heartbeat' });
    await c.next((m) => m['type'] === 'pong');
    c.send({ action: 'subscribe', channel: 'prices', market_ids: [M] });
    expect(await c.next((m) => m['type'] === 'subscribed')).toMatchObject({ channel: 'prices', market_ids: [M] });
    c.ws.close();
  });

  it('streams messages with their channel and the body again under data, snapshot and updates alike', async () => {
    const c = await connect(keys['dev']!);
    c.send({ action: 'subscribe', channel: 'prices', market_ids: [M] });
    const snap = await c.next((m) => m['type'] === 'price_update');
    expect(snap).toMatchObject({ channel: 'prices', snapshot: true, yes_bid: 55, data: { type: 'price_update', market_id: M, yes_bid: 55, yes_ask: 57 } });
    applyEvent(state, { venue: 'venue_a', type: 'book_delta', marketId: M, instrument: M, changes: [['bid', 5600, 3]], timestamp: T, localTimestamp: T });
    const u = await c.next((m) => m['type'] === 'price_update' && m['snapshot'] === undefined);
    expect(u).toMatchObject({ channel: 'prices', yes_bid: 56, data: { channel: 'prices', market_id: M, source: 'venue_a', yes_bid: 56 } });
    expect(typeof u['seq']).toBe('number');
    c.ws.close();
  });

  it('keeps the lean messages for a connection that speaks type, and adds data once it speaks action', async () => {
    const c = await connect(keys['dev']!);
    c.send({ type: 'subscribe', channel: 'prices', market_ids: [M] });
    const snap = await c.next((m) => m['type'] === 'price_update');
    expect(snap).toMatchObject({ channel: 'prices', snapshot: true });
    expect(snap).not.toHaveProperty('data');
    const delta = (price: number): void =>
      applyEvent(state, { venue: 'venue_a', type: 'book_delta', marketId: M, instrument: M, changes: [['bid', price, 2]], timestamp: T, localTimestamp: T });
    delta(5610);
    expect(await c.next((m) => m['type'] === 'price_update')).not.toHaveProperty('data');
    c.send({ action: 'heartbeat' });
    await c.next((m) => m['type'] === 'pong');
    delta(5620);
    expect(await c.next((m) => m['type'] === 'price_update')).toMatchObject({ yes_bid: 56.2, data: { yes_bid: 56.2 } });
    c.ws.close();
  });

  it('answers an unknown action, a disagreeing type and a bad channel with a code and a message', async () => {
    const c = await connect(keys['dev']!);
    c.send({ action: 'subscribe_all', channel: 'prices' });
    expect(await c.next((m) => m['code'] === 'BAD_REQUEST')).toMatchObject({
      type: 'error',
      message: expect.stringContaining('unknown action "subscribe_all"'),
    });
    c.send({ type: 'subscribe', action: 'unsubscribe', channel: 'prices', market_ids: [M] });
    expect(await c.next((m) => m['code'] === 'BAD_REQUEST')).toMatchObject({ type: 'error', message: expect.stringContaining('type and action disagree') });
    c.send({ channel: 'prices' });
    expect(await c.next((m) => m['code'] === 'BAD_REQUEST')).toMatchObject({ message: expect.stringContaining('type: missing') });
    c.send({ action: 'subscribe', channel: 'whale_watch' });
    const unknown = await c.next((m) => m['code'] === 'UNKNOWN_CHANNEL');
    expect(unknown).toMatchObject({ type: 'warning', channel: 'whale_watch', message: expect.stringContaining('smart_money, fade_finder') });
    c.send({ action: 'subscribe', channel: 'smart_money', market_ids: [M] });
    expect(await c.next((m) => m['code'] === 'BAD_REQUEST')).toMatchObject({ channel: 'smart_money', message: expect.stringContaining('no market_ids') });
    c.ws.close();
  });
});

describe('smart_money and fade_finder channels', () => {
  it('streams the alert engine alerts of each feed to its subscribers, in the /alerts record form', async () => {
    const c = await connect(keys['dev']!);
    c.send({ action: 'subscribe', channel: 'smart_money' });
    expect(await c.next((m) => m['type'] === 'subscribed')).toMatchObject({ channel: 'smart_money', market_ids: ['*'] });
    c.send({ action: 'subscribe', channel: 'fade_finder', market_ids: ['*'] });
    expect(await c.next((m) => m['type'] === 'subscribed')).toMatchObject({ channel: 'fade_finder' });
    alerts.alerts$.next(alert('insider'));
    alerts.alerts$.next(alert('fade'));
    const sm = await c.next((m) => m['channel'] === 'smart_money' && m['type'] !== 'subscribed');
    expect(sm).toMatchObject({
      type: 'smart_money',
      alert_type: 'insider',
      platform: 'venue_a',
      market_id: M,
      title: 'New England at Seattle Winner?',
      price: 57,
      amount_usd: 1140,
      data: { channel: 'smart_money', alert_type: 'insider', alert_id: String(seq - 1) },
    });
    expect(await c.next((m) => m['channel'] === 'fade_finder' && m['type'] !== 'subscribed')).toMatchObject({
      type: 'fade_finder',
      alert_type: 'fade',
      data: { alert_id: String(seq) },
    });
    c.send({ action: 'unsubscribe', channel: 'smart_money' });
    await c.next((m) => m['type'] === 'unsubscribed');
    alerts.alerts$.next(alert('smart_money'));
    alerts.alerts$.next(alert('fade'));
    // the fade alert published after the smart_money one arrives; the smart_money one does not
    await c.next((m) => m['type'] === 'fade_finder' && (m['data'] as { alert_id: string }).alert_id === String(seq));
    expect(c.msgs.filter((m) => m['type'] === 'smart_money')).toEqual([]);
    c.ws.close();
  });

  it('has the entitlement of the REST alert endpoints: the welcome lists them, a blocked group is refused', async () => {
    const free = await connect(keys['free']!);
    expect(free.welcome['channels']).toEqual(['prices', 'smart_money']);
    free.send({ action: 'subscribe', channel: 'smart_money' });
    expect(await free.next((m) => m['type'] === 'subscribed')).toMatchObject({ channel: 'smart_money' });
    free.send({ action: 'subscribe', channel: 'fade_finder' });
    expect(await free.next((m) => m['code'] === 'NOT_ENTITLED')).toMatchObject({ type: 'error', channel: 'fade_finder', message: expect.any(String) });
    free.ws.close();
  });
});
