import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startService, type Service } from '../../src/service.js';
import { checkServerMessage } from '../contract/ws.js';
import { acked, connectWs, movingMarkets, refusals, type Msg, type WsClient } from '../support/ws-client.js';

/**
 * SIMULATOR DATA. The alert channels of the WebSocket replay on the real service: the embedded
 * simulator's venue_b wallets trade, the wallet ledger scores them (thresholds lowered so a few
 * seconds of trading raise alerts: a one-second horizon, one scored entry), and the alert engine
 * raises smart_money and fade alerts and stores them. Live clients in both dialects subscribed to
 * smart_money and fade_finder keep what they get; a replay of a window of that session sends the
 * same alert messages (bodies, ts; seqs of its own), alone or among order-book updates, paced,
 * paused and seeked like the rest. Every server message is checked against its schema.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-wsreplay-alerts-'));
const config = loadConfig({
  env: {},
  overrides: {
    dataDir: dir,
    server: { host: '127.0.0.1', port: 0, baseUrl: null },
    sim: { ticksPerSecond: 200, seed: 7, process: 'inline' },
    ingest: { pollMs: 300 },
    signals: {
      wallets: { horizonMs: 1_000, goodMoveUnits: 100, smartMinEntries: 1, smartMinHitRate: 0, fadeMinEntries: 1, fadeMinMissRate: 0 },
      alerts: { smartMinUsd: 0, fadeMinUsd: 0 },
    },
  },
});

type Client = WsClient;

/**
 * Wall ms the window goes on after its third alert (at speed 1, the time a paced replay leaves the
 * test to pause or seek after its first three alerts before the replay completes and forgets its id).
 */
const TAIL = 4_000;

let svc: Service;
let key = '';
const problems: string[] = [];
let received = 0;
const order = new WeakMap<Msg, number>();

beforeAll(async () => {
  svc = await startService(config);
  key = svc.keys.create('enterprise', 'tests').key;
});

afterAll(async () => {
  await svc?.close();
  rmSync(dir, { recursive: true, force: true });
});

const connect = (): Promise<Client> =>
  connectWs(`${svc.url.replace('http', 'ws')}/api/v2/ws`, key, (m) => {
    order.set(m, received++);
    problems.push(...checkServerMessage(m));
  });

const ALERT_TYPES = new Set(['smart_money', 'fade_finder', 'fade_finder_update']);
const isAlert = (m: Msg): boolean => ALERT_TYPES.has(m['type'] as string);
const created = (m: Msg): number => Date.parse(m['created_at'] as string);
/** An alert message without what is the replay's own (its topic's seq, the epoch). */
const comparable = (m: Msg): Msg => {
  const { seq: _s, epoch: _e, ...rest } = m;
  return rest;
};
/** The messages of `c` after `a` and before `b` (by receive order) that `pred` accepts. */
const between = (c: Client, a: Msg | undefined, b: Msg, pred: (m: Msg) => boolean): Msg[] =>
  c.all.filter((m) => (a === undefined || order.get(m)! > order.get(a)!) && order.get(m)! < order.get(b)! && pred(m));
/** Each alert channel's seqs count from 1 (a fade_finder_update repeats its fade_finder's). */
function expectOwnSeqs(got: readonly Msg[]): void {
  for (const ch of ['smart_money', 'fade_finder']) {
    const mine = got.filter((m) => m['type'] === ch);
    expect(mine.map((m) => m['seq'])).toEqual(mine.map((_, i) => i + 1));
  }
  got.forEach((m, i) => {
    if (m['type'] !== 'fade_finder_update') return;
    expect(got[i - 1]).toMatchObject({ type: 'fade_finder', alert_id: m['alert_id'], seq: m['seq'] });
  });
}

let plain: Client;
let hosted: Client;
let from = 0;
let to = 0;
/** What the live clients got in the window, alert messages only. */
let want: Msg[] = [];
let wantHosted: Msg[] = [];

describe('WebSocket replay of smart_money and fade_finder', () => {
  it('sends the alerts the live channels sent in the window, the same bodies and ts in the same order, then replay_completed', async () => {
    plain = await connect();
    hosted = await connect();
    for (const ch of ['smart_money', 'fade_finder']) {
      plain.send({ type: 'subscribe', channel: ch });
      hosted.send({ action: 'subscribe', channel: ch });
    }
    for (const c of [plain, hosted]) for (let i = 0; i < 2; i++) await c.next((m) => m['type'] === 'subscribed');
    // A window that starts after both clients subscribed and holds a few alerts of each channel.
    const first = await Promise.all([plain, hosted].map((c) => c.next(isAlert)));
    from = Math.max(...first.map(created)) + 1;
    const inWindow = (m: Msg): boolean => isAlert(m) && created(m) >= from && created(m) <= to;
    const seen = (type: string): Msg[] => plain.all.filter((m) => m['type'] === type && created(m) >= from);
    await vi.waitFor(() => expect(Math.min(seen('smart_money').length, seen('fade_finder').length)).toBeGreaterThanOrEqual(4), {
      timeout: 90_000,
      interval: 50,
    });
    // It goes on for TAIL ms after its third alert: the paced replays below pause and seek after
    // their first alerts, and a window whose alerts came in one burst at its end would be over by then.
    const third = [...seen('smart_money'), ...seen('fade_finder')].map(created).sort((a, b) => a - b)[2]!;
    to = Math.max(from + 4_000, third + TAIL, ...seen('smart_money').slice(0, 4).map(created), ...seen('fade_finder').slice(0, 4).map(created));
    // Both clients have seen the whole window once each got an alert raised after it.
    for (const c of [plain, hosted])
      await vi.waitFor(() => expect(c.all.some((m) => isAlert(m) && created(m) > to)).toBe(true), { timeout: 90_000, interval: 50 });
    want = plain.all.filter(inWindow);
    wantHosted = hosted.all.filter(inWindow);
    for (const type of ALERT_TYPES) expect(wantHosted.filter((m) => m['type'] === type).length, type).toBeGreaterThan(0);
    expect(want.filter((m) => m['type'] === 'fade_finder_update')).toEqual([]);
    // Live sent each alert when it raised it: ts is its creation time.
    expect(want.every((m) => m['ts'] === created(m))).toBe(true);

    const c = await connect();
    c.send({ type: 'replay', channels: ['smart_money', 'fade_finder'], from, to, speed: 'max' });
    const started = await c.next((m) => m['type'] === 'replay_started');
    expect(started).toMatchObject({ from, to, channels: ['smart_money', 'fade_finder'], market_ids: [], epoch: from });
    const done = await c.next((m) => m['type'] === 'replay_completed');
    const got = between(c, started, done, isAlert);
    expect(got.map(comparable)).toEqual(want.map(comparable));
    expect(got.every((m) => m['epoch'] === from)).toBe(true);
    expectOwnSeqs(got);
    expect(done).toMatchObject({ replay_id: started['replay_id'], messages: got.length, events: 0 });
    expect(c.all.filter((m) => m['type'] === 'warning')).toEqual([]);
    expect(problems).toEqual([]);
    c.ws.close();
  });

  it('in the hosted dialect, with each fade alert again as fade_finder_update right after it', async () => {
    const c = await connect();
    c.send({ action: 'replay', channels: ['fade_finder', 'smart_money'], market_ids: ['*'], from, to: new Date(to).toISOString(), speed: 'max' });
    const started = await c.next((m) => m['type'] === 'replay_started');
    const done = await c.next((m) => m['type'] === 'replay_completed');
    const got = between(c, started, done, isAlert);
    expect(got.map(comparable)).toEqual(wantHosted.map(comparable));
    expect(got.every((m) => m['epoch'] === from && m['data'] !== undefined)).toBe(true);
    expectOwnSeqs(got);
    expect(problems).toEqual([]);
    c.ws.close();
  });

  it('among the pipeline replay of order books: each alert in its place by time, after the snapshots', async () => {
    // The alerts' own markets (their books moved with the trades behind them) and the busiest now.
    const ids = [...new Set([...want.map((m) => `${m['platform'] as string}:${m['market_id'] as string}`), ...(await movingMarkets(svc, 10))])];
    await svc.capture!.flush();
    const c = await connect();
    c.send({ type: 'replay', channels: ['orderbook', 'smart_money', 'fade_finder'], market_ids: ids, from, to, speed: 'max' });
    const started = await c.next((m) => m['type'] === 'replay_started');
    const done = await c.next((m) => m['type'] === 'replay_completed');
    const streamed = between(c, started, done, (m) => isAlert(m) || m['type'] === 'orderbook_update');
    const got = streamed.filter(isAlert);
    expect(got.map(comparable)).toEqual(want.map(comparable));
    const snaps = streamed.filter((m) => m['snapshot'] === true);
    expect(snaps.length).toBeGreaterThan(0);
    expect(order.get(snaps[snaps.length - 1]!)!).toBeLessThan(order.get(got[0]!)!);
    // Updates and alerts go out in the order live sent them: send times never go back.
    const updates = streamed.filter((m) => m['type'] === 'orderbook_update' && m['snapshot'] !== true);
    expect(updates.length).toBeGreaterThan(0);
    expect(updates.some((u) => (u['ts'] as number) < created(got[got.length - 1]!))).toBe(true);
    const times = streamed.filter((m) => m['snapshot'] !== true).map((m) => m['ts'] as number);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect((done['counts'] as Record<string, number>)['smart_money']).toBe(got.filter((m) => m['channel'] === 'smart_money').length);
    expect(done['events']).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    c.ws.close();
  });

  it('pauses, seeks back (sent again from there) and forward (skipped to there), each under its new epoch', async () => {
    const c = await connect();
    c.send({ type: 'replay', channels: ['smart_money', 'fade_finder'], from, to, speed: 1 });
    const started = await c.next((m) => m['type'] === 'replay_started');
    const id = started['replay_id'];
    // Let three alerts through, then pause and go back to the second's time.
    for (let i = 0; i < 3; i++) await c.next(isAlert);
    c.send({ type: 'replay_pause', replay_id: id });
    const paused = await acked(c, 'replay_paused');
    const back = created(want[1]!);
    expect(paused['position']).toBeGreaterThanOrEqual(created(want[2]!));
    c.send({ type: 'replay_seek', replay_id: id, at: back });
    expect(await acked(c, 'replay_seeked')).toMatchObject({ position: back, epoch: back });
    c.send({ type: 'replay_resume', replay_id: id });
    const resumed = await acked(c, 'replay_resumed');
    // Paused, nothing went out after the pause: the first alert after the resume is the new epoch's.
    const again = await c.next((m) => isAlert(m) && order.get(m)! > order.get(resumed)!);
    expect(again['epoch']).toBe(back);
    expect(comparable(again)).toEqual(comparable(want.find((m) => created(m) >= back)!));
    // Forward, to the last alert's time: what lies between is not sent.
    const fwd = created(want[want.length - 1]!);
    c.send({ type: 'replay_seek', replay_id: id, at: fwd });
    const seekedFwd = await acked(c, 'replay_seeked', (m) => m['position'] === fwd);
    const done = await c.next((m) => m['type'] === 'replay_completed');
    const afterBack = between(c, resumed, seekedFwd, (m) => isAlert(m) && m['epoch'] === back);
    expect(afterBack.map(comparable)).toEqual(
      want
        .filter((m) => created(m) >= back)
        .slice(0, afterBack.length)
        .map(comparable),
    );
    expectOwnSeqs(afterBack);
    const afterFwd = between(c, seekedFwd, done, isAlert);
    expect(afterFwd.map(comparable)).toEqual(want.filter((m) => created(m) >= fwd).map(comparable));
    expect(afterFwd.every((m) => m['epoch'] === fwd)).toBe(true);
    expectOwnSeqs(afterFwd);
    // Nothing of the epoch before the forward seek came after its acknowledgment.
    expect(between(c, seekedFwd, done, (m) => isAlert(m) && m['epoch'] !== fwd)).toEqual([]);
    expect(problems).toEqual([]);
    c.ws.close();
  });

  it('a seek forward in a replay with order books: the alerts from there, after the snapshots of the new epoch', async () => {
    const ids = await movingMarkets(svc, 5);
    const c = await connect();
    c.send({ type: 'replay', channels: ['orderbook', 'smart_money', 'fade_finder'], market_ids: ids, from, to, speed: 1 });
    const started = await c.next((m) => m['type'] === 'replay_started');
    await c.next(isAlert);
    const at = created(want[Math.floor(want.length / 2)]!);
    c.send({ type: 'replay_seek', replay_id: started['replay_id'], at });
    const seeked = await acked(c, 'replay_seeked');
    const done = await c.next((m) => m['type'] === 'replay_completed');
    const after = between(c, seeked, done, (m) => isAlert(m) || m['type'] === 'orderbook_update');
    const alerts = after.filter(isAlert);
    // Alerts of the old epoch may have been on their way; from the new epoch's first message on, all are the new epoch's.
    const firstNew = after.findIndex((m) => m['epoch'] === at);
    expect(after.slice(firstNew).every((m) => m['epoch'] === at)).toBe(true);
    const fresh = alerts.filter((m) => m['epoch'] === at);
    expect(fresh.map(comparable)).toEqual(want.filter((m) => created(m) >= at).map(comparable));
    expectOwnSeqs(fresh);
    const snaps = after.filter((m) => m['snapshot'] === true && m['epoch'] === at);
    expect(snaps.length).toBeGreaterThan(0);
    expect(order.get(snaps[snaps.length - 1]!)!).toBeLessThan(order.get(fresh[0]!)!);
    expect(problems).toEqual([]);
    c.ws.close();
  });

  it('refuses market ids on alert channels alone and channels that cannot be replayed, with clear errors', async () => {
    const c = await connect();
    const refused = refusals(c);
    const ok = { type: 'replay', channels: ['fade_finder'], from, to, speed: 'max' };
    await refused({ ...ok, market_ids: ['venue_b:0xabc'] }, 'BAD_REQUEST', /fade_finder streams every alert of its feed: send no market_ids \(or \["\*"\]\)/);
    await refused({ ...ok, market_ids: ['*', 'x'] }, 'BAD_REQUEST', /streams every alert/);
    // arb and ev take no market ids either: with an alert channel, ids other than ["*"] are refused.
    await refused({ ...ok, channels: ['fade_finder', 'arb'], market_ids: ['1', '2'] }, 'BAD_REQUEST', /streams every alert/);
    await refused(
      { ...ok, channels: ['fade_finder', 'whale_watch'] },
      'BAD_REQUEST',
      /cannot be replayed \(channels: prices, orderbook, arb, ev, live_games, smart_money, fade_finder/,
    );
    await refused({ ...ok, channels: ['fade_finder_update'] }, 'BAD_REQUEST', /cannot be replayed/);
    expect(problems).toEqual([]);
    c.ws.close();
    plain.ws.close();
    hosted.ws.close();
  });
});
