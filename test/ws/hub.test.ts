import { EMPTY } from 'rxjs';
import { fanoutFlow } from '../../pipelines/fanout.js';
import { Turn } from '../../src/pipeline/turn.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KeyStore } from '../../src/access/keys.js';
import { loadPlans } from '../../src/access/plans.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer } from '../../src/server/http.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { checkServerMessage } from '../contract/ws.js';
import { WsHub } from '../../src/ws/hub.js';
import { takeMessage } from '../support/messages.js';

const config = loadConfig({ env: {} });
const dir = mkdtempSync(join(tmpdir(), 'cb-ws-'));
let persistence: Persistence;
let http: HttpServer;
let hub: WsHub;
let state: EngineState;
let url: string;
const keys: Record<string, string> = {};
const T = Date.now();
const apply = (...evs: NormalizedEvent[]): void => {
  for (const e of evs) applyEvent(state, e);
};
const levels = (n: number, from: number, step: number): [number, number][] => Array.from({ length: n }, (_, i) => [from + i * step, 100 + i]);

/** The fan-out's turn (flushed on setImmediate as in the service; a test may flush it itself). */
const turn = new Turn();

beforeAll(async () => {
  persistence = new Persistence(dir);
  state = new EngineState(config.venues);
  const ks = new KeyStore(persistence.db('keys'));
  for (const p of ['free', 'dev', 'enterprise'] as const) keys[p] = ks.create(p).key;
  http = new HttpServer(log);
  hub = new WsHub(
    { http, path: '/api/v2/ws', state, venues: new VenueDirectory(config), keys: ks, plans: loadPlans(), log },
    {
      coalesceBytes: 64 * 1024,
      dropBytes: 1024 * 1024,
      stallMs: 1000,
    },
  );
  fanoutFlow(EMPTY, state, hub, undefined, undefined, turn);
  const port = await http.listen('127.0.0.1', 0);
  url = `ws://127.0.0.1:${port}/api/v2/ws`;
  const base = { timestamp: T, localTimestamp: T };
  apply(
    {
      ...base,
      venue: 'venue_a',
      type: 'market',
      marketId: 'KXNFLGAME-26NOV23NESEA-SEA',
      eventId: 'KXNFLGAME-26NOV23NESEA',
      title: 'New England at Seattle Winner?',
      status: 'active',
    },
    {
      ...base,
      venue: 'venue_a',
      type: 'book_snapshot',
      marketId: 'KXNFLGAME-26NOV23NESEA-SEA',
      instrument: 'KXNFLGAME-26NOV23NESEA-SEA',
      bids: [[5500, 10]],
      asks: [[5700, 20]],
    },
    { ...base, venue: 'venue_h', type: 'market', marketId: 'venue_h_987', title: 'Seattle Seahawks', status: 'active', yesInstrument: '987' },
    { ...base, venue: 'venue_h', type: 'book_snapshot', marketId: 'venue_h_987', instrument: '987', bids: levels(20, 3000, -100), asks: levels(20, 3100, 100) },
  );
});
/** WebSocket messages of this file that disagree with the document (none expected). */
const contractProblems: string[] = [];

afterAll(async () => {
  expect(contractProblems).toEqual([]);
  hub.close();
  http.close();
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Client {
  ws: WebSocket;
  msgs: Record<string, unknown>[];
  next(pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  send(m: unknown): void;
}

async function connect(key: string | undefined, headers = true): Promise<Client> {
  const ws = new WebSocket(headers || !key ? url : `${url}?api_key=${key}`, { headers: headers && key ? { 'x-api-key': key } : {} });
  const msgs: Record<string, unknown>[] = [];
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString()) as Record<string, unknown>;
    // Every server message must agree with its schema in the OpenAPI document (issue 15).
    contractProblems.push(...checkServerMessage(m));
    msgs.push(m);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const c: Client = {
    ws,
    msgs,
    next: (pred) => takeMessage(msgs, pred),
    send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
  };
  await c.next((m) => m['type'] === 'welcome');
  return c;
}

describe('WebSocket authentication (spec 6 rule 5)', () => {
  // A missing key opens the connection for an in-band login (test/ws/login.test.ts).
  it('refuses a bad key at the upgrade with 401 and the reason', async () => {
    for (const [key, code] of [['pmx_' + 'x'.repeat(32), 'auth.invalid_key']] as const) {
      const ws = new WebSocket(url, { headers: key ? { 'x-api-key': key } : {} });
      const res = await new Promise<{ status: number; body: string }>((resolve) => {
        ws.on('unexpected-response', (_req, r) => {
          let body = '';
          r.on('data', (d: Buffer) => (body += d.toString()));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        });
      });
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body)).toMatchObject({ success: false, code });
    }
  });

  it('accepts the api_key query parameter', async () => {
    const c = await connect(keys['dev'], false);
    c.send({ type: 'subscribe', channel: 'prices', market_ids: ['venue_a:KXNFLGAME-26NOV23NESEA-SEA'] });
    expect(await c.next((m) => m['type'] === 'subscribed')).toMatchObject({ channel: 'prices' });
    c.ws.close();
  });
});

describe('prices channel', () => {
  it('confirms native ids, sends a snapshot, then updates with seq, epoch, ts and source', async () => {
    const c = await connect(keys['dev']);
    c.send({ type: 'subscribe', channel: 'prices', market_ids: ['venue_a:KXNFLGAME-26NOV23NESEA-SEA', 'KXNFLGAME-26NOV23NESEA', 'NOPE'] });
    const sub = await c.next((m) => m['type'] === 'subscribed');
    expect(sub).toMatchObject({ channel: 'prices', market_ids: ['KXNFLGAME-26NOV23NESEA-SEA'], source: 'venue_a', sources: ['venue_a'] });
    const warn = await c.next((m) => m['code'] === 'UNKNOWN_ID');
    expect(warn).toMatchObject({ type: 'warning', market_ids: ['KXNFLGAME-26NOV23NESEA', 'NOPE'] });
    const snap = await c.next((m) => m['type'] === 'price_update');
    expect(snap).toMatchObject({
      snapshot: true,
      market_id: 'KXNFLGAME-26NOV23NESEA-SEA',
      source: 'venue_a',
      yes_bid: 55,
      yes_ask: 57,
      no_bid: 43,
      no_ask: 45,
    });
    apply({
      venue: 'venue_a',
      type: 'book_delta',
      marketId: 'KXNFLGAME-26NOV23NESEA-SEA',
      instrument: 'KXNFLGAME-26NOV23NESEA-SEA',
      changes: [['bid', 5600, 3]],
      timestamp: T,
      localTimestamp: T,
    });
    const u = await c.next((m) => m['type'] === 'price_update');
    expect(u).toMatchObject({ yes_bid: 56, seq: 1, epoch: hub.epoch });
    expect(typeof u['ts']).toBe('number');
    apply({
      venue: 'venue_a',
      type: 'book_delta',
      marketId: 'KXNFLGAME-26NOV23NESEA-SEA',
      instrument: 'KXNFLGAME-26NOV23NESEA-SEA',
      changes: [['bid', 5650, 3]],
      timestamp: T,
      localTimestamp: T,
    });
    expect((await c.next((m) => m['type'] === 'price_update'))['seq']).toBe(2);
    c.ws.close();
  });

  it("carries the venue frame's venue and receive times on updates it caused (venue_ts, recv_ts), not on snapshots", async () => {
    const id = 'KXNFLGAME-26NOV23NESEA-SEA';
    const c = await connect(keys['dev']);
    const h = await connect(keys['dev']);
    c.send({ type: 'subscribe', channel: 'prices', market_ids: [id] });
    c.send({ type: 'subscribe', channel: 'orderbook', market_ids: [id] });
    h.send({ action: 'subscribe', channel: 'prices', market_ids: [id] });
    const snap = await c.next((m) => m['type'] === 'price_update' && m['snapshot'] === true);
    expect(snap).not.toHaveProperty('recv_ts');
    expect(await c.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] === true)).not.toHaveProperty('venue_ts');
    await h.next((m) => m['type'] === 'price_update' && m['snapshot'] === true);
    const published: Record<string, unknown>[] = [];
    const watch = hub.published$.subscribe((p) => published.push({ topic: p.topic, venueTs: p.venueTs, recvTs: p.recvTs }));
    apply({ venue: 'venue_a', type: 'book_delta', marketId: id, instrument: id, changes: [['bid', 5660, 4]], timestamp: T - 250, localTimestamp: T - 5 });
    const book = await c.next((m) => m['type'] === 'orderbook_update');
    const price = await c.next((m) => m['type'] === 'price_update');
    // Published at the turn's flush (conflation), before the client could read it.
    watch.unsubscribe();
    expect(book).toMatchObject({ venue_ts: T - 250, recv_ts: T - 5 });
    expect(price).toMatchObject({ yes_bid: 56.6, venue_ts: T - 250, recv_ts: T - 5 });
    // Cluster edges get the times with the publication, so edge-served messages carry them too.
    expect(published).toContainEqual({ topic: `prices:venue_a:${id}`, venueTs: T - 250, recvTs: T - 5 });
    // The hosted dialect: the times in the envelope, the body under data as before.
    const hosted = await h.next((m) => m['type'] === 'price_update');
    expect(hosted).toMatchObject({ venue_ts: T - 250, recv_ts: T - 5, data: { yes_bid: 56.6 } });
    expect(hosted['data']).not.toHaveProperty('recv_ts');
    // A venue ticker's quote carries its own frame's times.
    apply({ venue: 'venue_a', type: 'quote', marketId: id, lastPrice: 5600, timestamp: T - 40, localTimestamp: T - 2 });
    expect(await c.next((m) => m['type'] === 'price_update')).toMatchObject({ last_price: 56, venue_ts: T - 40, recv_ts: T - 2 });
    // A publication with no venue frame behind it carries neither.
    hub.onBook('venue_a', id);
    expect(await c.next((m) => m['type'] === 'orderbook_update')).not.toHaveProperty('recv_ts');
    c.ws.close();
    h.ws.close();
  });

  it('sends no price_update for a change it would not show (top-of-book size), and no seq gap after it', async () => {
    const id = 'KXNFLGAME-26NOV23NESEA-SEA';
    const c = await connect(keys['dev']);
    c.send({ type: 'subscribe', channel: 'prices', market_ids: [id] });
    c.send({ type: 'subscribe', channel: 'orderbook', market_ids: [id] });
    await c.next((m) => m['type'] === 'price_update' && m['snapshot'] === true);
    await c.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] === true);
    const delta = (price: number, size: number): void =>
      apply({ venue: 'venue_a', type: 'book_delta', marketId: id, instrument: id, changes: [['bid', price, size]], timestamp: T, localTimestamp: T });
    delta(5670, 5);
    const first = await c.next((m) => m['type'] === 'price_update');
    await c.next((m) => m['type'] === 'orderbook_update');
    delta(5670, 9); // the same best bid, another size: the book changes, the price_update would not
    await c.next((m) => m['type'] === 'orderbook_update');
    delta(5680, 1);
    const book = await c.next((m) => m['type'] === 'orderbook_update');
    const next = await c.next((m) => m['type'] === 'price_update');
    expect(next).toMatchObject({ yes_bid: 56.8, seq: (first['seq'] as number) + 1 });
    // Nothing in between: the size-only change sent no price_update.
    expect(c.msgs.filter((m) => m['type'] === 'price_update')).toEqual([]);
    expect(book['seq']).toBeGreaterThan(0);
    c.ws.close();
  });

  it('confirms a subscription across venues once per venue, each with its native ids and source (spec 6 rule 1)', async () => {
    const c = await connect(keys['dev']);
    c.send({ type: 'subscribe', channel: 'prices', market_ids: ['venue_a:KXNFLGAME-26NOV23NESEA-SEA', 'venue_h:venue_h_987'] });
    const first = await c.next((m) => m['type'] === 'subscribed');
    const second = await c.next((m) => m['type'] === 'subscribed');
    expect([first, second].map((m) => [m['source'], m['market_ids']]).sort()).toEqual([
      ['venue_a', ['KXNFLGAME-26NOV23NESEA-SEA']],
      ['venue_h', ['venue_h_987']],
    ]);
    c.send({ type: 'unsubscribe', channel: 'prices', market_ids: ['venue_h_987'] });
    expect(await c.next((m) => m['type'] === 'unsubscribed')).toMatchObject({ market_ids: ['venue_h_987'], source: 'venue_h' });
    c.ws.close();
  });

  it('answers bad JSON, bad messages and unknown channels with codes, and keeps the connection', async () => {
    const c = await connect(keys['dev']);
    c.send('{nope');
    expect(await c.next((m) => m['code'] === 'BAD_JSON')).toMatchObject({ type: 'error' });
    c.send({ type: 'subscribe', channel: 'prices', market_ids: 'x' });
    expect(await c.next((m) => m['code'] === 'BAD_REQUEST')).toMatchObject({ type: 'error' });
    c.send({ type: 'subscribe', channel: 'weather', market_ids: ['x'] });
    const unknown = await c.next((m) => m['code'] === 'UNKNOWN_CHANNEL');
    expect(unknown).toMatchObject({ type: 'warning', channel: 'weather' });
    const listed = String(unknown['message'])
      .replace(/.*channels: /, '')
      .split(', ');
    expect(listed).toEqual([...new Set(listed)]);
    c.send({ type: 'ping' });
    await c.next((m) => m['type'] === 'pong');
    c.ws.close();
  });

  it('limits the subscribe rate and the plan entitlements', async () => {
    const free = await connect(keys['free']);
    free.send({ type: 'subscribe', channel: 'orderbook', market_ids: ['venue_h_987'] });
    expect(await free.next((m) => m['code'] === 'NOT_ENTITLED')).toMatchObject({ type: 'error', channel: 'orderbook' });
    for (let i = 0; i < 25; i++) free.send({ type: 'subscribe', channel: 'prices', market_ids: ['venue_h_987'] });
    expect(await free.next((m) => m['code'] === 'RATE_LIMITED')).toMatchObject({ type: 'error' });
    free.ws.close();
  });
});

describe('orderbook and venue_a ticker channels', () => {
  it('streams book updates in cents with empty NO levels on yes-only venues', async () => {
    const c = await connect(keys['dev']);
    c.send({ type: 'subscribe', channel: 'orderbook', market_ids: ['venue_h:venue_h_987'] });
    const snap = await c.next((m) => m['type'] === 'orderbook_update');
    expect(snap).toMatchObject({ snapshot: true, market_id: 'venue_h_987', source: 'venue_h', no: { bids: [], asks: [] } });
    expect((snap['yes'] as { bids: number[][] }).bids[0]).toEqual([30, 100]);
    c.ws.close();
  });

  it('writes a book change as the same orderbook_update a new subscriber gets as its snapshot', async () => {
    const id = 'KXNFLGAME-26NOV23NESEA-SEA';
    const a = await connect(keys['dev']);
    a.send({ type: 'subscribe', channel: 'orderbook', market_ids: [id] });
    await a.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] === true);
    apply({
      venue: 'venue_a',
      type: 'book_delta',
      marketId: id,
      instrument: id,
      changes: [
        ['bid', 5450, 7],
        ['ask', 5900, 3],
      ],
      timestamp: T,
      localTimestamp: T,
    });
    const update = await a.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] === undefined);
    const b = await connect(keys['dev']);
    b.send({ type: 'subscribe', channel: 'orderbook', market_ids: [id] });
    const snap = await b.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] === true);
    const body = ({ seq: _s, epoch: _e, ts: _t, snapshot: _n, venue_ts: _v, recv_ts: _r, ...rest }: Record<string, unknown>): Record<string, unknown> => rest;
    expect(body(update)).toEqual(body(snap));
    expect((update['no'] as { bids: number[][] }).bids).toContainEqual([41, 3]);
    a.ws.close();
    b.ws.close();
  });

  it('writes a market id that JSON escapes (not printable ASCII) through the text path, as it reads', async () => {
    const id = 'KXÉLECTION-26"Q"';
    apply(
      { venue: 'venue_a', type: 'market', marketId: id, title: 'Élection?', status: 'active', timestamp: T, localTimestamp: T },
      { venue: 'venue_a', type: 'book_snapshot', marketId: id, instrument: id, bids: [[4000, 5]], asks: [[4200, 5]], timestamp: T, localTimestamp: T },
    );
    const a = await connect(keys['dev']);
    a.send({ type: 'subscribe', channel: 'orderbook', market_ids: [id] });
    await a.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] === true);
    apply({ venue: 'venue_a', type: 'book_delta', marketId: id, instrument: id, changes: [['bid', 4100, 2]], timestamp: T, localTimestamp: T });
    const update = await a.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] === undefined);
    expect(update).toMatchObject({ market_id: id, source: 'venue_a' });
    expect((update['yes'] as { bids: number[][] }).bids[0]).toEqual([41, 2]);
    a.ws.close();
  });

  it('follows subscribers as they come and go: a second one, a dialect switch, a close, an unsubscribe', async () => {
    const id = 'venue_h_987';
    const delta = (size: number): void =>
      apply({ venue: 'venue_h', type: 'book_delta', marketId: id, instrument: '987', changes: [['bid', 3000, size]], timestamp: T, localTimestamp: T });
    const update = (size: number) => (m: Record<string, unknown>) =>
      m['type'] === 'orderbook_update' && m['snapshot'] === undefined && (m['yes'] as { bids: number[][] }).bids[0]![1] === size;
    const a = await connect(keys['dev']);
    a.send({ type: 'subscribe', channel: 'orderbook', market_ids: [id] });
    await a.next((m) => m['snapshot'] === true);
    delta(201);
    const first = await a.next(update(201));
    const b = await connect(keys['dev']);
    b.send({ action: 'subscribe', channel: 'orderbook', market_ids: [id] });
    await b.next((m) => m['snapshot'] === true);
    delta(202);
    expect(await a.next(update(202))).toMatchObject({ seq: (first['seq'] as number) + 1 });
    expect(await b.next(update(202))).toMatchObject({ seq: (first['seq'] as number) + 1, data: { market_id: id } });
    a.ws.close();
    await new Promise((resolve) => a.ws.once('close', resolve));
    delta(203);
    expect(await b.next(update(203))).toMatchObject({ seq: (first['seq'] as number) + 2 });
    b.send({ action: 'unsubscribe', channel: 'orderbook', market_ids: [id] });
    await b.next((m) => m['type'] === 'unsubscribed');
    const published = hub.published;
    delta(204);
    turn.flush();
    expect(hub.published).toBe(published);
    b.send({ action: 'subscribe', channel: 'orderbook', market_ids: [id] });
    expect(await b.next((m) => m['snapshot'] === true && (m['yes'] as { bids: number[][] }).bids[0]![1] === 204)).toMatchObject({
      seq: (first['seq'] as number) + 2,
    });
    delta(205);
    expect(await b.next(update(205))).toMatchObject({ seq: (first['seq'] as number) + 3 });
    b.ws.close();
  });

  it('sends decimal-dollar tickers on <venue_a>_prices; all-markets needs Enterprise', async () => {
    const c = await connect(keys['dev']);
    c.send({ type: 'subscribe', channel: 'venue_a_prices', market_ids: ['*'] });
    expect(await c.next((m) => m['code'] === 'NOT_ENTITLED')).toBeDefined();
    c.send({ type: 'subscribe', channel: 'venue_a_prices', market_ids: ['KXNFLGAME-26NOV23NESEA-SEA'] });
    await c.next((m) => m['type'] === 'subscribed');
    const e = await connect(keys['enterprise']);
    e.send({ type: 'subscribe', channel: 'venue_a_prices', all: true });
    await e.next((m) => m['type'] === 'subscribed');
    apply({
      venue: 'venue_a',
      type: 'book_delta',
      marketId: 'KXNFLGAME-26NOV23NESEA-SEA',
      instrument: 'KXNFLGAME-26NOV23NESEA-SEA',
      changes: [
        ['ask', 5700, 0],
        ['ask', 5800, 4],
      ],
      timestamp: T,
      localTimestamp: T,
    });
    const t = await c.next((m) => m['type'] === 'ticker' && m['snapshot'] === undefined);
    expect(t).toMatchObject({ market_ticker: 'KXNFLGAME-26NOV23NESEA-SEA', yes_ask_dollars: '0.5800' });
    expect(await e.next((m) => m['type'] === 'ticker')).toMatchObject({ yes_ask_dollars: '0.5800' });
    c.ws.close();
    e.ws.close();
  });

  it('keeps sending a market held on one channel after its other channel is let go, and all-markets tickers for markets nobody names', async () => {
    const id = 'KXNFLGAME-26NOV23NESEA-SEA';
    const ask = (price: number): void =>
      apply({ venue: 'venue_a', type: 'book_delta', marketId: id, instrument: id, changes: [['ask', price, 7]], timestamp: T, localTimestamp: T });
    const p = await connect(keys['dev']);
    const o = await connect(keys['dev']);
    p.send({ type: 'subscribe', channel: 'prices', market_ids: [id] });
    o.send({ type: 'subscribe', channel: 'orderbook', market_ids: [id] });
    await p.next((m) => m['type'] === 'price_update');
    await o.next((m) => m['snapshot'] === true);
    p.send({ type: 'unsubscribe', channel: 'prices', market_ids: [id] });
    await p.next((m) => m['type'] === 'unsubscribed');
    ask(5650);
    expect(await o.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] === undefined)).toMatchObject({ market_id: id });
    o.ws.close();
    p.ws.close();
    // Nobody names the market now: an all-markets ticker subscriber still gets its change.
    const e = await connect(keys['enterprise']);
    e.send({ type: 'subscribe', channel: 'venue_a_prices', all: true });
    await e.next((m) => m['type'] === 'subscribed');
    ask(5640);
    expect(await e.next((m) => m['type'] === 'ticker' && m['snapshot'] === undefined)).toMatchObject({ market_ticker: id, yes_ask_dollars: '0.5640' });
    e.ws.close();
  });

  it('publishes in a turn only the markets changed in it, after a turn that changed more markets of the same venue', async () => {
    // The fan-out's dirty lists are reused from turn to turn (not emptied): what an earlier, larger
    // turn left in them past this turn's markets must not go out again.
    const ids = ['KXCONFLATE-A', 'KXCONFLATE-B', 'KXCONFLATE-C'];
    for (const id of ids)
      apply(
        { venue: 'venue_a', type: 'market', marketId: id, title: `Conflation ${id}?`, status: 'active', timestamp: T, localTimestamp: T },
        { venue: 'venue_a', type: 'book_snapshot', marketId: id, instrument: id, bids: [[4000, 5]], asks: [[4200, 5]], timestamp: T, localTimestamp: T },
      );
    turn.flush();
    const o = await connect(keys['dev']);
    o.send({ type: 'subscribe', channel: 'orderbook', market_ids: ids });
    for (const id of ids) await o.next((m) => m['snapshot'] === true && m['market_id'] === id);
    const bid = (id: string, size: number): void =>
      apply({ venue: 'venue_a', type: 'book_delta', marketId: id, instrument: id, changes: [['bid', 4000, size]], timestamp: T, localTimestamp: T });
    const published = hub.published;
    for (const id of ids) bid(id, 6);
    turn.flush();
    expect(hub.published).toBe(published + 3);
    bid('KXCONFLATE-B', 7);
    turn.flush();
    expect(hub.published).toBe(published + 4);
    const last = await o.next((m) => m['type'] === 'orderbook_update' && (m['yes'] as { bids: number[][] }).bids[0]![1] === 7);
    expect(last).toMatchObject({ market_id: 'KXCONFLATE-B' });
    o.ws.close();
  });

  it('sends nothing for a market id held only on another venue, and goes on for the venue that holds it', async () => {
    const id = 'KXNFLGAME-26NOV23NESEA-SEA';
    const book = (venue: string, price: number): void =>
      apply({ venue, type: 'book_snapshot', marketId: id, instrument: id, bids: [[price, 5]], asks: [[price + 200, 5]], timestamp: T, localTimestamp: T });
    const o = await connect(keys['dev']);
    o.send({ type: 'subscribe', channel: 'orderbook', market_ids: [id] });
    const snap = await o.next((m) => m['snapshot'] === true);
    const published = hub.published;
    book('venue_h', 4000);
    turn.flush();
    expect(hub.published).toBe(published);
    book('venue_a', 5300);
    expect(await o.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] === undefined)).toMatchObject({
      market_id: id,
      source: snap['source'],
      seq: (snap['seq'] as number) + 1,
      yes: { bids: [[53, 5]] },
    });
    o.ws.close();
  });

  it('marks no change while nobody holds a market topic, and publishes again from the snapshot once one subscribes', async () => {
    const id = 'venue_h_987';
    const delta = (size: number): void =>
      apply({ venue: 'venue_h', type: 'book_delta', marketId: id, instrument: '987', changes: [['bid', 3000, size]], timestamp: T, localTimestamp: T });
    // Every client of the tests before has closed (the server sees each close on its own time).
    await vi.waitFor(() => expect(hub.quiet()).toBe(true), { timeout: 30_000, interval: 20 });
    const flushes = turn.flushes;
    const published = hub.published;
    delta(301);
    // Nothing marked: no turn was scheduled (the fan-out is this turn's only flusher here).
    await new Promise((resolve) => setImmediate(resolve));
    expect(turn.flushes).toBe(flushes);
    expect(hub.published).toBe(published);
    const c = await connect(keys['dev']);
    c.send({ type: 'subscribe', channel: 'prices', market_ids: [id] });
    c.send({ type: 'subscribe', channel: 'orderbook', market_ids: [id] });
    const snap = await c.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] === true);
    expect((snap['yes'] as { bids: number[][] }).bids[0]).toEqual([30, 301]);
    const price = await c.next((m) => m['type'] === 'price_update');
    apply({ venue: 'venue_h', type: 'book_delta', marketId: id, instrument: '987', changes: [['bid', 3050, 5]], timestamp: T, localTimestamp: T });
    expect(await c.next((m) => m['type'] === 'orderbook_update' && m['snapshot'] === undefined)).toMatchObject({ seq: (snap['seq'] as number) + 1 });
    expect(await c.next((m) => m['type'] === 'price_update' && m !== price)).toMatchObject({ market_id: id, yes_bid: 30.5 });
    c.ws.close();
  });

  it('warns subscribers when their venue feed is interrupted and when it is ready again', async () => {
    const c = await connect(keys['dev']);
    c.send({ type: 'subscribe', channel: 'prices', market_ids: ['KXNFLGAME-26NOV23NESEA-SEA'] });
    await c.next((m) => m['type'] === 'subscribed');
    hub.onFeedEvent({ type: 'feed', venue: 'venue_a', state: 'disconnected', timestamp: T, localTimestamp: T });
    expect(await c.next((m) => m['code'] === 'FEED_INTERRUPTED')).toMatchObject({ type: 'warning', source: 'venue_a' });
    hub.onFeedEvent({ type: 'feed', venue: 'venue_a', state: 'resynced', timestamp: T, localTimestamp: T });
    expect(await c.next((m) => m['code'] === 'FEED_READY')).toMatchObject({ type: 'ready', source: 'venue_a' });
    c.ws.close();
  });

  it('gives an all-markets ticker subscriber the same recovery signals', async () => {
    const e = await connect(keys['enterprise']);
    e.send({ type: 'subscribe', channel: 'venue_a_prices', all: true });
    await e.next((m) => m['type'] === 'subscribed');
    hub.onFeedEvent({ type: 'feed', venue: 'venue_a', state: 'gap', timestamp: T, localTimestamp: T });
    expect(await e.next((m) => m['code'] === 'FEED_INTERRUPTED')).toMatchObject({ type: 'warning', source: 'venue_a' });
    hub.onFeedEvent({ type: 'feed', venue: 'venue_a', state: 'resynced', timestamp: T, localTimestamp: T });
    expect(await e.next((m) => m['code'] === 'FEED_READY')).toMatchObject({ type: 'ready', source: 'venue_a' });
    e.ws.close();
  });
});

describe('subscription limit', () => {
  it('counts market subscriptions only: not feed-status topics, not a market subscribed twice', async () => {
    const base = { timestamp: T, localTimestamp: T };
    const ids = Array.from({ length: 50 }, (_, i) => `venue_h_5${String(i).padStart(2, '0')}`);
    apply(...ids.map((id): NormalizedEvent => ({ ...base, venue: 'venue_h', type: 'market', marketId: id, title: id, status: 'active' })));
    const free = await connect(keys['free']); // 50 subscriptions per connection
    free.send({ type: 'subscribe', channel: 'prices', market_ids: ids.slice(0, 25) });
    expect((await free.next((m) => m['type'] === 'subscribed'))['market_ids']).toHaveLength(25);
    free.send({ type: 'subscribe', channel: 'prices', market_ids: ids.slice(0, 5) });
    expect((await free.next((m) => m['type'] === 'subscribed'))['market_ids']).toHaveLength(5);
    free.send({ type: 'subscribe', channel: 'prices', market_ids: ids.slice(25) });
    expect((await free.next((m) => m['type'] === 'subscribed'))['market_ids']).toHaveLength(25);
    free.send({ type: 'subscribe', channel: 'prices', market_ids: ['venue_h_987'] });
    expect(await free.next((m) => m['code'] === 'SUBSCRIPTION_LIMIT')).toMatchObject({ type: 'error', message: expect.stringContaining('(50 in use)') });
    free.ws.close();
  });
});

describe('backpressure', () => {
  it('coalesces then drops a client that stops reading, while another keeps receiving', async () => {
    const slow = await connect(keys['enterprise']);
    const fast = await connect(keys['enterprise']);
    for (const c of [slow, fast]) {
      c.send({ type: 'subscribe', channel: 'orderbook', market_ids: ['venue_h_987'] });
      await c.next((m) => m['type'] === 'orderbook_update');
    }
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      slow.ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    // Nobody coalesces: no topic's latest message is kept (each publish is garbage at once).
    expect(hub.retainedTopics).toBe(0);
    slow.ws.pause();
    let fastCount = 0;
    let maxRetained = 0;
    fast.ws.on('message', () => fastCount++);
    // ~900-byte book messages; enough to fill the kernel buffers and both of our bounds
    for (let round = 0; round < 60; round++) {
      // Once the hub has decided to drop the slow client it reads again, to learn why: a close the
      // hub holds for room in uWS's buffer (the pump can fill it to its cap between two sweeps)
      // goes out when the client reads, and a client that reads nothing for stallMs more is cut
      // without a close frame, which the rest of this pump could outlast on a loaded machine.
      if (hub.dropped > 0) slow.ws.resume();
      for (let i = 0; i < 500; i++) {
        const size = 100 + ((round * 500 + i) % 50);
        apply({
          venue: 'venue_h',
          type: 'book_delta',
          marketId: 'venue_h_987',
          instrument: '987',
          changes: [['bid', 3000, size]],
          timestamp: T,
          localTimestamp: T,
        });
        // Each delta its own turn (a message per delta): the bytes it takes to fill both bounds.
        turn.flush();
        // Read after every publish, not once a round: the topic's latest message is kept from the
        // first publish after the sweep coalesces the client until the sweep that drops it, and on a
        // loaded machine (a round longer than the sweep's 100 ms) both can fall between two rounds.
        maxRetained = Math.max(maxRetained, hub.retainedTopics);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(maxRetained).toBe(1); // while it coalesced: its one topic's latest message, nothing else
    // Timeouts here are failure guards sized for a loaded machine, not speed checks.
    await vi.waitFor(() => expect(hub.dropped).toBeGreaterThanOrEqual(1), { timeout: 30_000, interval: 50 });
    // The slow client learns why when it reads again: the close frame comes after its backlog.
    slow.ws.resume();
    const r = await Promise.race([closed, new Promise<undefined>((res) => setTimeout(() => res(undefined), 30_000))]);
    expect(r).toMatchObject({ code: 4008, reason: expect.stringMatching(/backpressure/) });
    expect(slow.msgs.some((m) => m['code'] === 'COALESCED')).toBe(true);
    // The reading client is never cut and ends on the book's latest state. How many of the 30,000
    // messages it sees depends on how fast this machine lets it read: one that falls behind is
    // coalesced too (only its latest message per topic kept), which is the contract, not a failure.
    apply({
      venue: 'venue_h',
      type: 'book_delta',
      marketId: 'venue_h_987',
      instrument: '987',
      changes: [['bid', 3000, 7777]],
      timestamp: T,
      localTimestamp: T,
    });
    turn.flush();
    await fast.next((m) => m['type'] === 'orderbook_update' && JSON.stringify(m).includes('7777'));
    expect(fast.ws.readyState).toBe(WebSocket.OPEN);
    expect(fastCount).toBeGreaterThan(0);
    expect(hub.retainedTopics).toBe(0); // the coalescing client is gone, and with it what was kept for it
    fast.ws.close();
  });
});
