import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { WsLoad } from '../../src/capacity/ws-load.js';

// The load generator's measurements against a ws-library server that sends known messages.
let http: Server | undefined;
let wss: WebSocketServer | undefined;

afterEach(async () => {
  for (const c of wss?.clients ?? []) c.terminate();
  wss?.close();
  await new Promise((r) => (http ? http.close(r) : r(undefined)));
});

/** A server that answers a subscribe with `subscribed`, a snapshot, then updates of seq 1–9 without 5, recv_ts 1000. */
async function server(): Promise<string> {
  http = createServer();
  wss = new WebSocketServer({ server: http });
  wss.on('connection', (ws) =>
    ws.on('message', () => {
      ws.send('{"type":"subscribed","market_ids":["M"]}');
      const msg = (seq: number, extra = ''): string =>
        `{"type":"price_update","channel":"prices","market_id":"M"${extra},"venue_ts":999,"recv_ts":1000,"seq":${seq},"ts":1001}`;
      ws.send(msg(0, ',"snapshot":true'));
      for (const seq of [1, 2, 3, 4, 6, 7, 8, 9]) ws.send(msg(seq));
    }),
  );
  await new Promise<void>((r) => http!.listen(0, '127.0.0.1', r));
  return `ws://127.0.0.1:${(http.address() as AddressInfo).port}/api/v2/ws`;
}

describe('WsLoad (load generator)', () => {
  it('reads latency against the stamp with the receive clock it is given, and counts seq gaps as lost', async () => {
    const load = new WsLoad(await server(), 'k', 'prices', 'recv_ts', () => 1003.25);
    await load.grow(1, () => ['M']);
    for (let i = 0; i < 200 && load.delivered < 8; i++) await new Promise((r) => setTimeout(r, 10));
    load.close();
    expect(load.failed).toBe(0);
    expect(load.delivered).toBe(8);
    expect(load.lost).toBe(1);
    // Every 4th update is sampled; the snapshot is not an update.
    expect(load.latencies).toEqual([3.25, 3.25]);
  });
});
