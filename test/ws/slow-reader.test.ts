import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KeyStore } from '../../src/access/keys.js';
import { loadPlans } from '../../src/access/plans.js';
import { RawWebSocket } from '../../src/capacity/raw-ws.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer } from '../../src/server/http.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { WsHub } from '../../src/ws/hub.js';
import { CLOSE } from '../../src/ws/protocol.js';

/**
 * Issue 30: a client that stops reading is cut with close code 4008 and a reason (README), not
 * dropped without a close frame; and RFC 6455 §5.1: an unmasked client frame. Raw clients
 * (src/capacity/raw-ws.ts) so the test controls reading and framing.
 */
const config = loadConfig({ env: {} });
const dir = mkdtempSync(join(tmpdir(), 'cb-wsslow-'));
let persistence: Persistence;
let http: HttpServer;
let hub: WsHub;
let state: EngineState;
let url: string;
let key: string;
const MARKETS = 40;

beforeAll(async () => {
  persistence = new Persistence(dir);
  const ks = new KeyStore(persistence.db('keys'));
  key = ks.create('pro').key;
  state = new EngineState(config.venues);
  const T = Date.now();
  for (let i = 0; i < MARKETS; i++) {
    const id = `venue_h_${i}`;
    applyEvent(state, {
      timestamp: T,
      localTimestamp: T,
      venue: 'venue_h',
      type: 'market',
      marketId: id,
      title: `M${i}`,
      status: 'active',
      yesInstrument: `${i}`,
    });
    applyEvent(state, {
      timestamp: T,
      localTimestamp: T,
      venue: 'venue_h',
      type: 'book_snapshot',
      marketId: id,
      instrument: `${i}`,
      bids: levels(20, 3000),
      asks: levels(20, 5000),
    });
  }
  http = new HttpServer(log);
  hub = new WsHub(
    { http, path: '/api/v2/ws', state, venues: new VenueDirectory(config), keys: ks, plans: loadPlans(), log },
    { coalesceBytes: 64 * 1024, dropBytes: 4 * 1024 * 1024, stallMs: 2_000 },
  );
  url = `ws://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2/ws`;
});
afterAll(async () => {
  hub.close();
  http.close();
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

function levels(n: number, from: number): [number, number][] {
  return Array.from({ length: n }, (_, i) => [from + i * 10, 100 + i]);
}

interface Raw {
  ws: RawWebSocket;
  received: string[];
  opened: Promise<void>;
  closed: Promise<string>;
}

function raw(): Raw {
  const received: string[] = [];
  let opened!: () => void;
  let closed!: (r: string) => void;
  const o = new Promise<void>((r) => (opened = r));
  const c = new Promise<string>((r) => (closed = r));
  const ws = new RawWebSocket(url, { 'x-api-key': key }, (d, s, e) => received.push(d.toString('utf8', s, e)), opened, closed);
  return { ws, received, opened: o, closed: c };
}

/** Changes every subscribed book once and lets the hub publish it (a turn of the event loop). */
async function pump(round: number): Promise<void> {
  const T = Date.now();
  for (let i = 0; i < MARKETS; i++) {
    applyEvent(state, {
      timestamp: T,
      localTimestamp: T,
      venue: 'venue_h',
      type: 'book_delta',
      marketId: `venue_h_${i}`,
      instrument: `${i}`,
      changes: [['bid', 3000, 100 + (round % 50)]],
    });
    hub.onBook('venue_h', `venue_h_${i}`);
  }
  await new Promise((r) => setImmediate(r));
}

describe('a client that stops reading', () => {
  it('is closed with 4008 and a reason, which it reads after what it had not read', async () => {
    const c = raw();
    await c.opened;
    c.ws.send(JSON.stringify({ type: 'subscribe', channel: 'orderbook', market_ids: Array.from({ length: MARKETS }, (_, i) => `venue_h_${i}`) }));
    await vi.waitFor(() => expect(c.received.filter((m) => m.includes('"snapshot":true')).length).toBe(MARKETS), { timeout: 30_000, interval: 10 });
    c.ws.pause();
    // Updates go on until the hub moves the client to coalesced catch-up (it retains the latest
    // message of its topics): the first bound. Then nothing more is sent to it.
    for (let round = 0; hub.retainedTopics === 0; round++) await pump(round);
    // Coalescing past dropBytes, or for stallMs without reading: the hub decides to close it with
    // 4008. If uWS's buffer has room for the close frame it ends the connection now; if the buffer
    // is at uWS's cap (a fast pump can fill it before a sweep sees it), the close waits for the
    // client to read, and one that still reads nothing for stallMs more is cut without a close
    // frame. This client reads again as soon as the hub has decided, so it gets the close frame
    // either way.
    await vi.waitFor(() => expect(hub.dropped).toBeGreaterThan(0), { timeout: 30_000, interval: 10 });
    c.ws.resume();
    const reason = await c.closed;
    // uWS runs the close handler at end(), so the hub lets the connection go.
    await vi.waitFor(() => expect(hub.connections()).toBe(0), { timeout: 30_000, interval: 10 });
    // Either bound may cut it, by how much was in flight when it stopped: past dropBytes, or not
    // catching up within stallMs. Both are 4008 with their reason.
    expect(reason).toMatch(
      new RegExp(`^closed by the server: ${CLOSE.BACKPRESSURE} backpressure(: client stopped reading| limit exceeded: client is not reading)`),
    );
    // what it had not read came first, then the close frame
    expect(c.received.length).toBeGreaterThan(MARKETS + 1);
  });
});

describe('RFC 6455 §5.1: a client frame without a mask', () => {
  // uWS 20.30 fails the connection in its C++ frame parser: the TCP connection is closed at once,
  // without the optional 1002 close frame, and no JS handler sees the frame (README "WebSocket").
  for (const [name, op] of [
    ['text', 0x1],
    ['ping', 0x9],
  ] as const)
    it(`closes the connection on an unmasked ${name} frame, and answers nothing sent after it`, async () => {
      const c = raw();
      await c.opened;
      await vi.waitFor(() => expect(c.received.some((m) => m.includes('"welcome"'))).toBe(true), { timeout: 30_000, interval: 10 });
      const before = hub.connections();
      c.ws.sendFrame(op, Buffer.from(JSON.stringify({ type: 'ping' })), false);
      c.ws.send(JSON.stringify({ type: 'ping' }));
      expect(await c.closed).toBe('socket closed');
      expect(c.received.filter((m) => m.includes('"pong"'))).toEqual([]);
      await vi.waitFor(() => expect(hub.connections()).toBe(before - 1), { timeout: 30_000, interval: 10 });
    });
});
