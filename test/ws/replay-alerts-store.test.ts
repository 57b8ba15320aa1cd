import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMPTY, Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fanoutFlow } from '../../pipelines/fanout.js';
import { walletFlow } from '../../pipelines/signals.js';
import { KeyStore } from '../../src/access/keys.js';
import { loadPlans } from '../../src/access/plans.js';
import { captureSettings } from '../../src/capture/index.js';
import { loadConfig } from '../../src/config/load.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer } from '../../src/server/http.js';
import { AlertEngine, type Alert } from '../../src/signals/alerts.js';
import { WalletLedger } from '../../src/signals/wallets.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { WsHub } from '../../src/ws/hub.js';
import { checkServerMessage } from '../contract/ws.js';
import { connectWs, refusals, type Msg, type WsClient } from '../support/ws-client.js';
import { addr, book, buy, cond, entry, market, yesTok } from '../signals/events.js';

/**
 * The alert channels of a WebSocket replay against the alert engine's LMDB store, on the hub
 * alone (no capture: a replay of only alert channels needs none): the wallet ledger raises a few
 * thousand alerts from hand-built venue_b trades (test/signals/events.ts) while a live client
 * listens; the store keeps the newest `persistLimit` of them. A replay sends the stored ones of its
 * window as the live client got them, a page at a time, says which were pruned, and refuses an
 * alert channel the plan's alert endpoints do not include (here a dev plan without fade-finder).
 */
const config = loadConfig({ env: {} });
const dir = mkdtempSync(join(tmpdir(), 'cb-ws-replay-alerts-'));
const T0 = Date.UTC(2026, 10, 22, 12);
const H = 120_000;
const PERSIST = 600;
let clock = T0;
let persistence: Persistence;
let http: HttpServer;
let hub: WsHub;
let state: EngineState;
let ledger: WalletLedger;
let alerts: AlertEngine;
const flows = new Subscription();
let url: string;
const keys: Record<string, string> = {};
const problems: string[] = [];
/** What a live smart_money subscriber got, as the alerts were raised. */
let live: Msg[] = [];

const connect = (key: string): Promise<WsClient> => connectWs(url, key, (m) => problems.push(...checkServerMessage(m)));

const apply = (...evs: NormalizedEvent[]): void => {
  for (const e of evs) {
    clock = Math.max(clock, e.localTimestamp);
    applyEvent(state, e);
  }
};
let markets = 0;
const newMarket = (): { id: string; k: number } => {
  const k = ++markets;
  const id = cond('d').slice(0, 60) + k.toString(16).padStart(6, '0');
  apply(market(id, k, clock), book(id, yesTok(k), 39, 41, clock));
  return { id, k };
};
const comparable = (m: Msg): Msg => {
  const { seq: _s, epoch: _e, ts: _t, ...rest } = m;
  return rest;
};
const isAlert = (m: Msg): boolean => m['type'] === 'smart_money' || m['type'] === 'fade_finder';
/** Stored alerts, oldest first, through the engine's own paged read. */
const storedAll = (): Alert[] => {
  const out: Alert[] = [];
  let cursor: number | undefined;
  do {
    const p = alerts.stored({ from: 0, to: Number.MAX_SAFE_INTEGER, cursor, limit: 100 });
    out.push(...p.alerts);
    cursor = p.cursor;
  } while (cursor !== undefined);
  return out;
};

beforeAll(async () => {
  persistence = new Persistence(dir);
  state = new EngineState(config.venues);
  const ks = new KeyStore(persistence.db('keys'));
  const plans = loadPlans();
  // A dev plan whose fade-finder endpoint is blocked: so is its fade_finder channel, live and replayed.
  const blocked = { ...plans, dev: { ...plans.dev, blocked: [...plans.dev.blocked, 'fade_finder'] } };
  for (const p of ['dev', 'enterprise'] as const) keys[p] = ks.create(p).key;
  ledger = new WalletLedger(state, persistence, { now: () => clock, advanceMs: 0 });
  alerts = new AlertEngine(ledger, persistence, { persistLimit: PERSIST, cooldownMs: 0 });
  http = new HttpServer(log);
  hub = new WsHub({
    ...{ http, path: '/api/v2/ws', state, venues: new VenueDirectory(config), keys: ks, plans: blocked, log, alerts: true },
    replay: { config, source: { capture: undefined, settings: captureSettings(config), now: () => clock }, maxConcurrent: 2, alerts },
  });
  flows.add(walletFlow(state, ledger, alerts));
  flows.add(fanoutFlow(EMPTY, state, hub, undefined, alerts));
  url = `ws://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2/ws`;
  const l = await connect(keys['enterprise']!);
  l.send({ type: 'subscribe', channel: 'smart_money' });
  await l.next((m) => m['type'] === 'subscribed');

  const smart = addr('a');
  const fader = addr('c');
  // Five scored entries each: the smart wallet's went its way, the fader's against it.
  for (const [wallet, good] of [
    [smart, true],
    [fader, false],
  ] as const)
    for (let i = 0; i < 5; i++, clock += H, ledger.advance(clock)) {
      const m = newMarket();
      apply(...entry(m.id, m.k, wallet, good, clock));
    }
  // Past the store's bound: the oldest alerts are pruned (a thousand at a time past persistLimit).
  const m = newMarket();
  for (let i = 0; i < 1_100; i++) {
    clock += 1_000;
    apply(buy({ marketId: m.id, n: m.k, wallet: smart, outcome: 'yes', cents: 41, size: 100, ts: clock }));
    apply(buy({ marketId: m.id, n: m.k, wallet: fader, outcome: 'no', cents: 59, size: 100, ts: clock }));
  }
  await alerts.flushed();
  // The last smart_money alert (the last alert is the fader's fade).
  await l.next((x) => x['alert_id'] === String(alerts.seq - 1));
  live = l.all.filter(isAlert);
  l.ws.close();
});

afterAll(async () => {
  flows.unsubscribe();
  hub?.close();
  http?.close();
  await alerts?.close();
  await ledger?.close();
  await persistence?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('WebSocket replay of the alert channels, from the alert store', () => {
  it('sends the stored alerts of the window as live sent them, a page at a time, and warns of the pruned ones', async () => {
    const kept = storedAll();
    const oldest = alerts.oldestStored()!;
    expect(oldest.seq).toBeGreaterThan(1);
    expect(kept[0]).toEqual(oldest);
    expect(kept.length).toBeGreaterThan(3 * 256);
    const c = await connect(keys['enterprise']!);
    c.send({ type: 'replay', channels: ['smart_money'], from: T0, to: clock, speed: 'max' });
    const started = await c.next((m) => m['type'] === 'replay_started');
    expect(started).toMatchObject({ channels: ['smart_money'], market_ids: [], from: T0, to: clock, epoch: T0 });
    const warned = await c.next((m) => m['type'] === 'warning');
    expect(warned).toMatchObject({ code: 'REPLAY_ALERTS_PRUNED', replay_id: started['replay_id'], channels: ['smart_money'], retained_from: oldest.createdAt });
    expect(warned['message']).toMatch(/no longer stored/);
    const done = await c.next((m) => m['type'] === 'replay_completed');
    const got = c.all.filter(isAlert);
    // What live sent of the alerts still stored, in the same order; seqs of the replay's own.
    const want = live.filter((m) => Number(m['alert_id']) >= oldest.seq);
    expect(want.length).toBe(kept.filter((a) => a.type !== 'fade').length);
    expect(got.map(comparable)).toEqual(want.map(comparable));
    expect(got.map((m) => m['seq'])).toEqual(got.map((_, i) => i + 1));
    expect(got.every((m) => m['epoch'] === T0 && m['ts'] === Date.parse(m['created_at'] as string))).toBe(true);
    expect(done).toMatchObject({ messages: got.length, counts: { smart_money: got.length }, events: 0 });
    expect(problems).toEqual([]);
    c.ws.close();
  });

  it('a window inside the store starts at its first alert and ends at its last, on both channels, with no warning', async () => {
    const kept = storedAll();
    const from = kept[300]!.createdAt;
    const to = kept[kept.length - 200]!.createdAt;
    const c = await connect(keys['enterprise']!);
    c.send({ type: 'replay', channels: ['fade_finder', 'smart_money'], market_ids: ['*'], from, to, speed: 'max' });
    await c.next((m) => m['type'] === 'replay_started');
    await c.next((m) => m['type'] === 'replay_completed');
    const got = c.all.filter(isAlert);
    const want = kept.filter((a) => a.createdAt >= from && a.createdAt <= to);
    expect(got.map((m) => m['alert_id'])).toEqual(want.map((a) => String(a.seq)));
    for (const ch of ['smart_money', 'fade_finder']) {
      const mine = got.filter((m) => m['channel'] === ch);
      expect(mine.length).toBeGreaterThan(0);
      expect(mine.map((m) => m['seq'])).toEqual(mine.map((_, i) => i + 1));
    }
    expect(c.all.filter((m) => m['type'] === 'warning')).toEqual([]);
    expect(problems).toEqual([]);
    c.ws.close();
  });

  it('refuses an alert channel the plan does not include, market ids on alert channels, and a pipeline channel without capture', async () => {
    const dev = await connect(keys['dev']!);
    const refused = refusals(dev);
    const ok = { type: 'replay', channels: ['smart_money'], from: T0, to: clock, speed: 'max' };
    await refused({ ...ok, channels: ['fade_finder'] }, 'NOT_ENTITLED', /dev plan does not include the fade_finder channel/);
    await refused({ ...ok, channels: ['smart_money', 'fade_finder'] }, 'NOT_ENTITLED', /fade_finder/);
    await refused(
      { ...ok, market_ids: ['KXNFLGAME-26NOV23NESEA-SEA'] },
      'BAD_REQUEST',
      /smart_money streams every alert of its feed: send no market_ids \(or \["\*"\]\)/,
    );
    await refused({ ...ok, channels: ['smart_money', 'orderbook'], market_ids: ['x'] }, 'REPLAY_OUTSIDE_RETENTION', /capture is turned off/);
    // The channel the plan includes replays.
    dev.send(ok);
    await dev.next((m) => m['type'] === 'replay_started');
    await dev.next((m) => m['type'] === 'replay_completed');
    expect(dev.all.filter(isAlert).length).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    dev.ws.close();
  });
});
