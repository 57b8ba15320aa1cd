import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFlow } from '../../pipelines/fanout.js';
import { Api } from '../../src/access/api.js';
import { KeyStore } from '../../src/access/keys.js';
import { loadPlans } from '../../src/access/plans.js';
import { QuotaLedger } from '../../src/access/quota.js';
import { loadConfig } from '../../src/config/load.js';
import { VirtualClock } from '../../src/core/clock.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer } from '../../src/server/http.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { WsHub } from '../../src/ws/hub.js';
import { CLOSE } from '../../src/ws/protocol.js';
import { registerWsToken } from '../../src/ws/token-route.js';
import { checkServerMessage } from '../contract/ws.js';
import { takeMessage } from '../support/messages.js';

/**
 * Issues 31 and 33: a connection may open without a key and log in with its first message, or
 * open with a short-lived token; issue 30: a revoked key's open connections are closed, a
 * downgraded key's trimmed. Time (login window, token lifetime) is the hub's clock, a manual one here.
 */
class ManualClock extends VirtualClock {
  constructor() {
    super(Date.UTC(2026, 10, 28, 12));
  }
  /** Moves time on by `ms`, running the timers due by then. */
  advance(ms: number): void {
    this.advanceTo(this.now() + ms);
  }
}

const config = loadConfig({ env: {} });
const dir = mkdtempSync(join(tmpdir(), 'cb-wslogin-'));
const clock = new ManualClock();
const LOGIN_MS = 2_000;
const TOKEN_MS = 60_000;
let persistence: Persistence;
let http: HttpServer;
let hub: WsHub;
let ks: KeyStore;
let base: string;
let url: string;
const keys: Record<string, string> = {};
const contractProblems: string[] = [];
const BOOK = 'venue_h:venue_h_987';

beforeAll(async () => {
  persistence = new Persistence(dir);
  ks = new KeyStore(persistence.db('keys'));
  for (const p of ['free', 'pro'] as const) keys[p] = ks.create(p).key;
  const state = new EngineState(config.venues);
  const T = clock.now();
  applyEvent(state, {
    timestamp: T,
    localTimestamp: T,
    venue: 'venue_h',
    type: 'market',
    marketId: 'venue_h_987',
    title: 'Seattle',
    status: 'active',
    yesInstrument: '987',
  });
  applyEvent(state, {
    timestamp: T,
    localTimestamp: T,
    venue: 'venue_h',
    type: 'book_snapshot',
    marketId: 'venue_h_987',
    instrument: '987',
    bids: [[3000, 5]],
    asks: [[3100, 5]],
  });
  http = new HttpServer(log);
  const api = new Api(http, '/api/v2', ks, new QuotaLedger(undefined), loadPlans());
  hub = new WsHub(
    { http, path: '/api/v2/ws', state, venues: new VenueDirectory(config), keys: ks, plans: loadPlans(), log, clock },
    { authTimeoutMs: LOGIN_MS, tokenTtlMs: TOKEN_MS },
  );
  registerWsToken(api, hub);
  keyFlow(ks, hub);
  const port = await http.listen('127.0.0.1', 0);
  base = `http://127.0.0.1:${port}/api/v2`;
  url = `ws://127.0.0.1:${port}/api/v2/ws`;
});
afterAll(async () => {
  expect(contractProblems).toEqual([]);
  hub.close();
  http.close();
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Client {
  ws: WebSocket;
  next(pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  send(m: unknown): void;
  closed: Promise<{ code: number; reason: string }>;
}

async function open(target: string, headers: Record<string, string> = {}): Promise<Client> {
  const ws = new WebSocket(target, { headers });
  const msgs: Record<string, unknown>[] = [];
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString()) as Record<string, unknown>;
    contractProblems.push(...checkServerMessage(m));
    msgs.push(m);
  });
  const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: reason.toString() })));
  await new Promise((r, j) => {
    ws.once('open', r);
    ws.once('error', j);
  });
  return { ws, closed, next: (pred) => takeMessage(msgs, pred), send: (m) => ws.send(JSON.stringify(m)) };
}

/** The status and body of an upgrade the server refuses. */
async function refused(target: string): Promise<{ status: number; code: string }> {
  const ws = new WebSocket(target);
  ws.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    ws.on('open', () => reject(new Error('upgrade accepted')));
    ws.on('unexpected-response', (_req, r) => {
      let body = '';
      r.on('data', (d: Buffer) => (body += d.toString()));
      r.on('end', () => resolve({ status: r.statusCode ?? 0, code: (JSON.parse(body) as { code: string }).code }));
    });
  });
}

async function token(key: string | undefined, query = ''): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${base}/ws-token${query}`, { method: 'POST', headers: key ? { 'x-api-key': key } : {} });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe('in-band login', () => {
  it('opens without a key, refuses anything before auth, then answers auth/authenticated and the welcome', async () => {
    const c = await open(url);
    c.send({ type: 'subscribe', channel: 'prices', market_ids: [BOOK] });
    expect(await c.next((m) => m['type'] === 'error')).toMatchObject({ code: 'AUTH_REQUIRED' });
    c.send({ type: 'ping' });
    expect(await c.next((m) => m['type'] === 'error')).toMatchObject({ code: 'AUTH_REQUIRED' });
    c.send({ action: 'auth', api_key: keys['pro'] });
    expect(await c.next((m) => m['type'] === 'auth')).toMatchObject({ status: 'authenticated', plan: 'pro' });
    expect(await c.next((m) => m['type'] === 'welcome')).toMatchObject({ plan: 'pro' });
    // the same key again (a bot that sends auth after a keyed upgrade) is acknowledged again
    c.send({ action: 'auth', api_key: keys['pro'] });
    expect(await c.next((m) => m['type'] === 'auth')).toMatchObject({ status: 'authenticated' });
    c.send({ action: 'auth', api_key: keys['free'] });
    expect(await c.next((m) => m['type'] === 'error')).toMatchObject({ code: 'BAD_REQUEST' });
    // logged in: the hosted dialect's subscribe works as for a keyed upgrade
    c.send({ action: 'subscribe', channel: 'orderbook', market_ids: [BOOK] });
    expect(await c.next((m) => m['type'] === 'orderbook_update')).toMatchObject({ snapshot: true, market_id: 'venue_h_987' });
    c.ws.close();
  });

  it('refuses a bad key in band with AUTH_FAILED and its reason, then closes with 4001', async () => {
    for (const m of [{ action: 'auth', api_key: 'pmx_' + 'x'.repeat(32) }, { type: 'auth' }, { action: 'auth', token: 'wst_nope' }]) {
      const c = await open(url);
      c.send(m);
      const err = await c.next((x) => x['type'] === 'error');
      expect(err['code']).toBe('AUTH_FAILED');
      expect(['auth.invalid_key', 'auth.missing_key', 'auth.invalid_token']).toContain(err['reason']);
      expect((await c.closed).code).toBe(CLOSE.UNAUTHORIZED);
    }
  });

  it('closes a connection that does not log in within the login window with 4002 and a reason', async () => {
    const c = await open(url);
    c.send({ type: 'ping' });
    await c.next((m) => m['code'] === 'AUTH_REQUIRED'); // the server has opened it (and started its window)
    clock.advance(LOGIN_MS - 1);
    c.send({ type: 'ping' });
    await c.next((m) => m['code'] === 'AUTH_REQUIRED'); // still open just before the window ends
    clock.advance(1);
    const closed = await c.closed;
    expect(closed.code).toBe(CLOSE.AUTH_TIMEOUT);
    expect(closed.reason).toMatch(/no login within 2000 ms/);
  });

  it('keeps refusing bad credentials in the URL at the upgrade (spec 6 rule 5)', async () => {
    expect(await refused(`${url}?api_key=pmx_${'y'.repeat(32)}`)).toEqual({ status: 401, code: 'auth.invalid_key' });
    const c = await open(`${url}?api_key=${keys['free']}`);
    expect(await c.next((m) => m['type'] === 'welcome')).toMatchObject({ plan: 'free' });
    c.ws.close();
  });
});

describe('POST /api/v2/ws-token', () => {
  it('issues a single-use token that opens one connection as the key', async () => {
    const t = await token(keys['pro']);
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ token: expect.stringMatching(/^wst_/), expires_in: TOKEN_MS / 1000 });
    expect(Date.parse(String(t.body['expires_at']))).toBe(clock.now() + TOKEN_MS);
    const c = await open(`${url}?token=${String(t.body['token'])}`);
    expect(await c.next((m) => m['type'] === 'welcome')).toMatchObject({ plan: 'pro' });
    expect(await refused(`${url}?token=${String(t.body['token'])}`)).toEqual({ status: 401, code: 'auth.invalid_token' });
    c.ws.close();
  });

  it('refuses an expired, a wrong and a reused token at the upgrade with 401', async () => {
    const t = String((await token(keys['pro'])).body['token']);
    clock.advance(TOKEN_MS);
    expect(await refused(`${url}?token=${t}`)).toEqual({ status: 401, code: 'auth.invalid_token' });
    expect(await refused(`${url}?token=wst_${'A'.repeat(32)}`)).toEqual({ status: 401, code: 'auth.invalid_token' });
  });

  it('needs a key, takes no parameters and answers only POST', async () => {
    expect((await token(undefined)).status).toBe(401);
    expect((await token('pmx_' + 'z'.repeat(32))).body['code']).toBe('auth.invalid_key');
    const bad = await token(keys['pro'], '?ttl=9999');
    expect(bad.status).toBe(400);
    expect(bad.body['error']).toMatch(/ttl/);
    const get = await fetch(`${base}/ws-token`, { headers: { 'x-api-key': keys['pro']! } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});

describe('key changes reach open connections (issue 30)', () => {
  it('closes a revoked key’s subscribed connection with 4003, and its unused tokens open nothing', async () => {
    const key = ks.create('pro').key;
    const t = String((await token(key)).body['token']);
    const c = await open(url, { 'x-api-key': key });
    c.send({ type: 'subscribe', channel: 'orderbook', market_ids: [BOOK] });
    await c.next((m) => m['type'] === 'orderbook_update');
    ks.revoke(key);
    const closed = await c.closed;
    expect(closed).toEqual({ code: CLOSE.KEY_REVOKED, reason: 'API key has been revoked' });
    expect(await refused(`${url}?token=${t}`)).toEqual({ status: 401, code: 'auth.invalid_token' });
    expect(await refused(`${url}?api_key=${key}`)).toEqual({ status: 401, code: 'auth.revoked_key' });
  });

  it('drops what a downgraded plan no longer includes and says so', async () => {
    const { key, record } = ks.create('pro');
    const c = await open(url, { 'x-api-key': key });
    c.send({ type: 'subscribe', channel: 'orderbook', market_ids: [BOOK] });
    c.send({ type: 'subscribe', channel: 'prices', market_ids: [BOOK] });
    await c.next((m) => m['type'] === 'price_update');
    ks.setPlan(record.id, 'free');
    expect(await c.next((m) => m['code'] === 'PLAN_CHANGED')).toMatchObject({
      type: 'warning',
      plan: 'free',
      channels: ['prices'],
      dropped: ['orderbook:venue_h:venue_h_987'],
    });
    c.send({ type: 'subscribe', channel: 'orderbook', market_ids: [BOOK] });
    expect(await c.next((m) => m['type'] === 'error')).toMatchObject({ code: 'NOT_ENTITLED' });
    c.ws.close();
  });
});
