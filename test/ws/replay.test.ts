import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startService, type Service } from '../../src/service.js';
import { checkServerMessage } from '../contract/ws.js';
import { acked, connectWs, movingMarkets as movingMarketsOf, refusals, type Msg, type WsClient } from '../support/ws-client.js';

/**
 * SIMULATOR DATA. The WebSocket replay on the real service: the embedded simulator feeds it, capture
 * on; a live client subscribes to prices, order books and arb of a few markets and keeps what it
 * gets; then a replay of a window of that session over the WebSocket sends the very messages the
 * live client got in it (bodies, venue_ts, recv_ts, send time ts), then replay_completed. Its
 * controls, bad input, the plan gate and the concurrency cap, and live clients served meanwhile.
 * Every server message is checked against its schema in the OpenAPI document.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-wsreplay-'));
const config = loadConfig({
  env: {},
  overrides: {
    dataDir: dir,
    server: { host: '127.0.0.1', port: 0, baseUrl: null },
    sim: { ticksPerSecond: 200, seed: 7, process: 'inline' },
    ingest: { pollMs: 300 },
  },
});

type Client = WsClient;

let svc: Service;
const keys: Record<string, string> = {};
const problems: string[] = [];
/** Receive order across every client of the test. */
let received = 0;
const order = new WeakMap<Msg, number>();

beforeAll(async () => {
  svc = await startService(config);
  for (const p of ['free', 'dev', 'enterprise'] as const) keys[p] = svc.keys.create(p, 'tests').key;
});

afterAll(async () => {
  await svc?.close();
  rmSync(dir, { recursive: true, force: true });
});

const connect = (key: string): Promise<Client> =>
  connectWs(`${svc.url.replace('http', 'ws')}/api/v2/ws`, key, (m) => {
    order.set(m, received++);
    problems.push(...checkServerMessage(m));
  });

const STREAMED = new Set(['price_update', 'orderbook_update', 'arb', 'ev', 'arb_expired', 'ev_expired']);
/** A streamed message without what differs between two subscriptions of it (its topic's seq, the epoch). */
const comparable = (m: Msg): Msg => {
  const { seq: _s, epoch: _e, ...rest } = m;
  return rest;
};
const isUpdate = (m: Msg): boolean => STREAMED.has(m['type'] as string) && m['snapshot'] !== true;

const movingMarkets = (n: number): Promise<string[]> => movingMarketsOf(svc, n);

let ids: string[] = [];
let live: Client;
let from = 0;
let to = 0;

describe('WebSocket replay', () => {
  it('sends what the live channels sent in the window, with their venue_ts, recv_ts and ts, then replay_completed', async () => {
    ids = await movingMarkets(20);
    live = await connect(keys['enterprise']!);
    live.send({ type: 'subscribe', channel: 'prices', market_ids: ids });
    live.send({ type: 'subscribe', channel: 'orderbook', market_ids: ids });
    live.send({ type: 'subscribe', channel: 'arb' });
    live.send({ type: 'subscribe', channel: 'ev' });
    // A window that starts after the subscriptions took effect and that the live client has seen whole.
    const first = await live.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] !== true);
    from = (first['ts'] as number) + 1;
    // At least 3 s, and long enough to hold each kind of update (a loaded machine moves the books slower).
    const kinds = ['orderbook_update', 'price_update', 'arb', 'ev'];
    const firstOf = (type: string): Msg | undefined => live.all.find((m) => m['type'] === type && isUpdate(m) && (m['ts'] as number) >= from);
    await vi.waitFor(() => expect(kinds.filter((k) => firstOf(k) === undefined)).toEqual([]), { timeout: 60_000, interval: 50 });
    to = Math.max(from + 3000, ...kinds.map((k) => firstOf(k)!['ts'] as number));
    await vi.waitFor(() => expect(live.all.some((m) => (m['ts'] as number) > to + 200 && m['type'] === 'orderbook_update')).toBe(true), {
      timeout: 30_000,
      interval: 50,
    });
    await svc.capture!.flush();
    const expected = live.all.filter((m) => isUpdate(m) && (m['ts'] as number) >= from && (m['ts'] as number) <= to).map(comparable);
    // The simulator moves each book a few times a second at most: some books, some prices, arb and ev in plenty.
    for (const type of ['orderbook_update', 'price_update', 'arb', 'ev']) expect(expected.filter((m) => m['type'] === type).length, type).toBeGreaterThan(0);

    const c = await connect(keys['enterprise']!);
    c.send({ type: 'replay', channels: ['prices', 'orderbook', 'arb', 'ev'], market_ids: ids, from, to: new Date(to).toISOString(), speed: 'max' });
    const started = await c.next((m) => m['type'] === 'replay_started');
    expect(started).toMatchObject({ from, to, speed: 'max', channels: ['prices', 'orderbook', 'arb', 'ev'] });
    expect((started['market_ids'] as string[]).sort()).toEqual([...ids].sort());
    const done = await c.next((m) => m['type'] === 'replay_completed');
    const got = c.all.filter((m) => order.get(m)! < order.get(done)!);
    // The snapshot of each market at `from`, as a subscriber at that moment would have got it.
    const snaps = got.filter((m) => m['snapshot'] === true);
    expect(snaps.filter((m) => m['type'] === 'orderbook_update').length).toBe(ids.length);
    expect(snaps.every((m) => m['epoch'] === from)).toBe(true);
    // Then every update the live client got in the window: the same bodies and times, in the same order.
    const replayed = got.filter(isUpdate);
    expect(replayed.map(comparable)).toEqual(expected);
    expect(replayed.every((m) => m['epoch'] === from)).toBe(true);
    expect(done).toMatchObject({ replay_id: started['replay_id'], from, to, messages: snaps.length + replayed.length });
    expect((done['counts'] as Record<string, number>)['orderbook']).toBe(got.filter((m) => m['type'] === 'orderbook_update').length);
    expect(problems).toEqual([]);
    c.ws.close();
  });

  it('pauses, resumes, seeks and stops with an acknowledgment each, while live clients keep receiving', async () => {
    const c = await connect(keys['enterprise']!);
    c.send({ type: 'replay', channels: ['orderbook'], market_ids: ids, from, to, speed: 1 });
    const started = await c.next((m) => m['type'] === 'replay_started');
    const id = started['replay_id'];
    const update = await c.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] !== true);
    c.send({ type: 'replay_pause', replay_id: id });
    const paused = await acked(c, 'replay_paused');
    expect(paused['position']).toBeGreaterThanOrEqual(update['recv_ts'] as number);
    // Paused, the live client goes on receiving, and the replay does not move.
    const liveBefore = live.all.length;
    await vi.waitFor(() => expect(live.all.length).toBeGreaterThan(liveBefore + 5), { timeout: 30_000, interval: 20 });
    c.send({ type: 'replay_resume' });
    const resumed = await acked(c, 'replay_resumed');
    expect(resumed).toMatchObject({ replay_id: id, position: paused['position'] });
    // Seek back to the start of the window: a new epoch, the snapshot again, then the updates from there.
    const at = from + 500;
    c.send({ type: 'replay_seek', replay_id: id, at: new Date(at).toISOString() });
    const seeked = await acked(c, 'replay_seeked');
    expect(seeked).toMatchObject({ replay_id: id, position: at, epoch: at });
    const snap = await c.next((m) => m['type'] === 'orderbook_update' && m['epoch'] === at);
    expect(snap['snapshot']).toBe(true);
    const after = await c.next((m) => m['type'] === 'orderbook_update' && m['epoch'] === at && m['snapshot'] !== true);
    expect(after['ts'] as number).toBeGreaterThanOrEqual(at);
    // Live clients were served while the replay ran.
    const liveDuring = live.all.filter((m) => order.get(m)! > order.get(started)! && order.get(m)! < order.get(after)!);
    expect(liveDuring.length).toBeGreaterThan(0);
    c.send({ type: 'replay_stop', replay_id: id });
    expect(await acked(c, 'replay_stopped')).toMatchObject({ replay_id: id });
    // Stopped: its slot is free again and a control of it is refused.
    c.send({ type: 'replay_pause', replay_id: id });
    const unknown = await c.next((m) => m['type'] === 'error');
    expect(unknown).toMatchObject({ code: 'REPLAY_UNKNOWN' });
    expect(problems).toEqual([]);
    c.ws.close();
  });

  it('a seek forward rides on the running pass and sends what a replay started there sends: the same messages, seqs and epoch', async () => {
    const c = await connect(keys['enterprise']!);
    const channels = ['prices', 'orderbook', 'arb', 'ev'];
    c.send({ type: 'replay', channels, market_ids: ids, from, to, speed: 1 });
    const started = await c.next((m) => m['type'] === 'replay_started');
    await c.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] !== true);
    c.send({ type: 'replay_pause', replay_id: started['replay_id'] });
    const paused = await acked(c, 'replay_paused');
    const at = Math.min(to - 300, Math.max((paused['position'] as number) + 1, from + 1500));
    c.send({ type: 'replay_seek', replay_id: started['replay_id'], at });
    const seeked = await acked(c, 'replay_seeked');
    c.send({ type: 'replay_resume', replay_id: started['replay_id'] });
    const done = await c.next((m) => m['type'] === 'replay_completed');
    const got = c.all.filter((m) => STREAMED.has(m['type'] as string) && order.get(m)! > order.get(seeked)! && order.get(m)! < order.get(done)!);
    c.ws.close();

    // The same window from `at`, a pass of its own from the start of the capture.
    const f = await connect(keys['enterprise']!);
    f.send({ type: 'replay', channels, market_ids: ids, from: at, to, speed: 'max' });
    const fresh = await f.next((m) => m['type'] === 'replay_completed');
    const want = f.all.filter((m) => STREAMED.has(m['type'] as string) && order.get(m)! < order.get(fresh)!);
    f.ws.close();
    expect(want.filter((m) => m['snapshot'] === true && m['type'] === 'orderbook_update').length).toBe(ids.length);
    expect(want.some(isUpdate)).toBe(true);
    expect(got).toEqual(want);
    expect(got.every((m) => m['epoch'] === at)).toBe(true);
    // One pass: the seek did not start the capture over (a second pass would add its events).
    expect(done['events']).toBe(fresh['events']);
    expect(problems).toEqual([]);
  });

  it('replays live_games: the live_game and trade messages of the games asked for, as a live subscriber got them', async () => {
    const res = await fetch(`${svc.url}/api/v2/events?event_type=sports&limit=100`, { headers: { 'x-api-key': keys['enterprise']! } });
    const games = ((await res.json()) as { events: { event_id: string }[] }).events.map((e) => e.event_id);
    expect(games.length).toBeGreaterThan(3);
    const g = await connect(keys['enterprise']!);
    g.send({ type: 'subscribe', channel: 'live_games', event_ids: games });
    const subscribed = await g.next((m) => m['type'] === 'subscribed' && m['channel'] === 'live_games');
    const ids = subscribed['event_ids'] as string[];
    const GAME = new Set(['live_game', 'trade']);
    const first = await g.next((m) => GAME.has(m['type'] as string));
    const gFrom = (first['ts'] as number) + 1;
    const inWindow = (m: Msg, a: number, b: number): boolean => GAME.has(m['type'] as string) && (m['ts'] as number) >= a && (m['ts'] as number) <= b;
    await vi.waitFor(() => expect(g.all.filter((m) => inWindow(m, gFrom, Infinity)).length).toBeGreaterThanOrEqual(5), { timeout: 60_000, interval: 50 });
    const gTo = Math.max(gFrom + 2000, ...g.all.filter((m) => inWindow(m, gFrom, Infinity)).map((m) => m['ts'] as number));
    await vi.waitFor(() => expect(g.all.some((m) => GAME.has(m['type'] as string) && (m['ts'] as number) > gTo + 200)).toBe(true), {
      timeout: 30_000,
      interval: 50,
    });
    await svc.capture!.flush();
    const expected = g.all.filter((m) => inWindow(m, gFrom, gTo)).map(comparable);
    expect(expected.length).toBeGreaterThanOrEqual(5);

    const c = await connect(keys['enterprise']!);
    c.send({ type: 'replay', channels: ['live_games'], event_ids: ids, from: gFrom, to: gTo, speed: 'max' });
    const started = await c.next((m) => m['type'] === 'replay_started');
    expect(started).toMatchObject({ channels: ['live_games'], market_ids: [], event_ids: ids });
    const done = await c.next((m) => m['type'] === 'replay_completed');
    const got = c.all.filter((m) => order.get(m)! < order.get(done)! && GAME.has(m['type'] as string));
    expect(got.map(comparable)).toEqual(expected);
    expect(got.every((m) => m['epoch'] === gFrom && m['channel'] === 'live_games')).toBe(true);
    expect((done['counts'] as Record<string, number>)['live_games']).toBe(got.length);
    expect(problems).toEqual([]);
    g.ws.close();
    c.ws.close();
  });

  it('refuses bad input, a plan without replay, and replays past the cap, each with a clear error', async () => {
    const dev = await connect(keys['dev']!);
    const refused = refusals(dev);
    const ok = { type: 'replay', channels: ['orderbook'], market_ids: ids, from, to };
    await refused({ ...ok, from: 'yesterday' }, 'BAD_REQUEST', /from must be ms since the epoch or an ISO 8601 time/);
    await refused({ ...ok, from: to, to: from }, 'BAD_REQUEST', /is after to/);
    await refused({ ...ok, speed: -2 }, 'BAD_REQUEST', /speed/);
    await refused({ ...ok, channels: ['whale_watch'] }, 'BAD_REQUEST', /cannot be replayed \(channels: prices, orderbook, arb, ev, live_games/);
    await refused({ ...ok, channels: ['live_games'] }, 'BAD_REQUEST', /event_ids is required for the live_games channel/);
    await refused({ ...ok, market_ids: [] }, 'BAD_REQUEST', /market_ids is required/);
    const outside = await refused({ ...ok, from: 1_000, to: 2_000 }, 'REPLAY_OUTSIDE_RETENTION', /outside what capture retains/);
    expect(outside['retained_from']).toBeGreaterThan(2_000);
    await refused({ type: 'replay_seek', replay_id: 'r999', at: from }, 'REPLAY_UNKNOWN', /no replay r999/);
    await refused({ type: 'replay_resume' }, 'REPLAY_UNKNOWN', /give replay_id/);
    // The dev plan runs one replay at once per key.
    dev.send({ ...ok, speed: 0.001 });
    const started = await dev.next((m) => m['type'] === 'replay_started');
    await refused(ok, 'REPLAY_LIMIT', /1 replay\(s\) at once per key/);
    await refused({ type: 'replay_seek', at: to + 10_000 }, 'BAD_REQUEST', /outside the replay's window/);
    dev.send({ type: 'replay_stop' });
    await dev.next((m) => m['type'] === 'replay_stopped' && m['replay_id'] === started['replay_id']);
    dev.send(ok);
    await dev.next((m) => m['type'] === 'replay_started');
    dev.ws.close();
    // The free plan does not include replay.
    const free = await connect(keys['free']!);
    free.send(ok);
    const e = await free.next((m) => m['type'] === 'error');
    expect(e).toMatchObject({ code: 'NOT_ENTITLED' });
    expect(e['message']).toMatch(/does not include replay/);
    free.ws.close();
    expect(problems).toEqual([]);
  });
});
