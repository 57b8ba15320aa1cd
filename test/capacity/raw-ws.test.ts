import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { RawWebSocket } from '../../src/capacity/raw-ws.js';
import { WsLoad } from '../../src/capacity/ws-load.js';

// The load generator's client, and its measurements, against an independent implementation of RFC 6455 (the ws library's server).
let http: Server | undefined;
let wss: WebSocketServer | undefined;

afterEach(async () => {
  for (const c of wss?.clients ?? []) c.terminate();
  wss?.close();
  await new Promise((r) => (http ? http.close(r) : r(undefined)));
  http = undefined;
  wss = undefined;
});

async function server(onConnection: (ws: WebSocket) => void, refuse = false): Promise<string> {
  http = createServer();
  wss = new WebSocketServer({ noServer: true });
  http.on('upgrade', (req, socket, head) => {
    if (refuse || req.headers['x-api-key'] !== 'k1') {
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    wss!.handleUpgrade(req, socket, head, onConnection);
  });
  await new Promise<void>((r) => http!.listen(0, '127.0.0.1', r));
  return `ws://127.0.0.1:${(http.address() as AddressInfo).port}/api/v2/ws?x=1`;
}

interface Seen {
  messages: string[];
  closed: Promise<string>;
  opened: Promise<void>;
  client: RawWebSocket;
}

function client(url: string, key = 'k1'): Seen {
  const messages: string[] = [];
  let onOpen!: () => void;
  let onClose!: (r: string) => void;
  const opened = new Promise<void>((r) => (onOpen = r));
  const closed = new Promise<string>((r) => (onClose = r));
  const c = new RawWebSocket(url, { 'X-API-Key': key }, (d, s, e) => messages.push(d.toString('utf8', s, e)), onOpen, onClose);
  return { messages, closed, opened, client: c };
}

/**
 * Resolves once `f()` holds: what it reads is filled by socket callbacks the test cannot await. The
 * deadline is a failure guard a starved machine cannot reach (it was 200 polls of 10 ms, ~2 s).
 */
const until = (f: () => boolean): Promise<void> => vi.waitFor(() => expect(f()).toBe(true), { timeout: 30_000, interval: 10 });

describe('RawWebSocket (load generator client)', () => {
  it('upgrades, sends masked text, and reads small, 16-bit and 64-bit length frames and fragments', async () => {
    const big = 'x'.repeat(70_000);
    const mid = 'é'.repeat(200);
    let got = '';
    const url = await server((ws) =>
      ws.on('message', (d) => {
        got = String(d);
        ws.send('{"type":"subscribed"}');
        ws.send(mid);
        ws.send(big);
        ws.send('frag-', { fin: false });
        ws.send('ment', { fin: true });
        for (let i = 0; i < 100; i++) ws.send(`m${i}`);
      }),
    );
    const c = client(url);
    await c.opened;
    c.client.send(JSON.stringify({ type: 'subscribe', market_ids: ['A', 'é'] }));
    await until(() => c.messages.length === 104);
    expect(got).toBe('{"type":"subscribe","market_ids":["A","é"]}');
    expect(c.messages.slice(0, 4)).toEqual(['{"type":"subscribed"}', mid, big, 'frag-ment']);
    expect(c.messages[103]).toBe('m99');
    c.client.terminate();
  });

  it('answers a ping with a pong carrying its payload', async () => {
    let pong = '';
    const url = await server((ws) => {
      ws.on('pong', (d) => (pong = String(d)));
      ws.ping('hb-1');
    });
    const c = client(url);
    await c.opened;
    await until(() => pong !== '');
    expect(pong).toBe('hb-1');
    c.client.terminate();
  });

  it('reports a refused upgrade with its status line, and a server close with its code and reason', async () => {
    const url = await server((ws) => ws.close(4008, 'too slow'));
    const refused = client(url, 'wrong');
    expect(await refused.closed).toBe('HTTP/1.1 401 Unauthorized');
    const c = client(url);
    expect(await c.closed).toBe('closed by the server: 4008 too slow');
  });

  it('rejects a non-ws URL', () => {
    expect(
      () =>
        new RawWebSocket(
          'http://127.0.0.1:1/',
          {},
          () => {},
          () => {},
          () => {},
        ),
    ).toThrow(/ws:\/\/ only/);
  });
});

describe('WsLoad (load generator)', () => {
  it('reads latency against the stamp with the receive clock it is given, and counts seq gaps as lost', async () => {
    // Answers a subscribe with `subscribed`, a snapshot, then updates of seq 1–9 without 5, recv_ts 1000.
    const url = await server((ws) =>
      ws.on('message', () => {
        ws.send('{"type":"subscribed","market_ids":["M"]}');
        const msg = (seq: number, extra = ''): string =>
          `{"type":"price_update","channel":"prices","market_id":"M"${extra},"venue_ts":999,"recv_ts":1000,"seq":${seq},"ts":1001}`;
        ws.send(msg(0, ',"snapshot":true'));
        for (const seq of [1, 2, 3, 4, 6, 7, 8, 9]) ws.send(msg(seq));
      }),
    );
    const load = new WsLoad(url, 'k1', 'prices', 'recv_ts', () => 1003.25);
    await load.grow(1, () => ['M']);
    await until(() => load.delivered === 8);
    load.close();
    expect(load.failed).toBe(0);
    expect(load.lost).toBe(1);
    // Every 4th update is sampled; the snapshot is not an update.
    expect(load.latencies).toEqual([3.25, 3.25]);
  });
});
