import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../src/access/keys.js';
import { loadPlans } from '../../src/access/plans.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { HttpServer } from '../../src/server/http.js';
import { EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { WsHub } from '../../src/ws/hub.js';
import { CLOSE, MESSAGE_BUDGET, MessageBudget } from '../../src/ws/protocol.js';

/**
 * Issue 14 items 6 and 8: every client message counts against the connection's budget (a ping
 * flood gets RATE_LIMITED, then a policy close), and frames over the size limit or binary frames
 * that are not UTF-8 are closed with 1009 / 1007 and a reason.
 */
describe('MessageBudget', () => {
  it('allows a burst, refills at the rate, warns once per run and closes a run longer than the burst', () => {
    const b = new MessageBudget(10, 3, 0);
    expect([b.take(0), b.take(0), b.take(0)]).toEqual(['ok', 'ok', 'ok']);
    expect(b.take(0)).toBe('warn');
    expect(b.take(0)).toBe('drop');
    expect(b.take(100)).toBe('ok'); // 100 ms at 10/s is one token, and ends the run
    expect(b.take(100)).toBe('warn');
    expect([b.take(100), b.take(100), b.take(100)]).toEqual(['drop', 'drop', 'close']);
    expect(b.take(10_000)).toBe('ok'); // refills to the burst, not beyond
    expect([b.take(10_000), b.take(10_000), b.take(10_000)]).toEqual(['ok', 'ok', 'warn']);
  });
});

const config = loadConfig({ env: {} });
const dir = mkdtempSync(join(tmpdir(), 'cb-wslim-'));
const MAX = 4096;
let persistence: Persistence;
let http: HttpServer;
let hub: WsHub;
let url: string;
const keys: Record<string, string> = {};

beforeAll(async () => {
  persistence = new Persistence(dir);
  const ks = new KeyStore(persistence.db('keys'));
  for (const p of ['free', 'dev'] as const) keys[p] = ks.create(p).key;
  http = new HttpServer(log);
  hub = new WsHub(
    { http, path: '/api/v2/ws', state: new EngineState(config.venues), venues: new VenueDirectory(config), keys: ks, plans: loadPlans(), log },
    { maxPayload: MAX },
  );
  url = `ws://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2/ws`;
});
afterAll(async () => {
  hub.close();
  http.close();
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Opened {
  ws: WebSocket;
  msgs: { type: string; code?: string }[];
  closed: Promise<{ code: number; reason: string }>;
}
async function open(key: string): Promise<Opened> {
  const ws = new WebSocket(url, { headers: { 'x-api-key': key } });
  const msgs: { type: string; code?: string }[] = [];
  ws.on('message', (d) => msgs.push(JSON.parse(d.toString()) as { type: string }));
  const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: reason.toString() })));
  await new Promise((r, j) => {
    ws.once('open', r);
    ws.once('error', j);
  });
  return { ws, msgs, closed };
}

describe('WebSocket message budget', () => {
  it('answers a ping flood with RATE_LIMITED once, then closes with a policy code', async () => {
    const c = await open(keys['free']!);
    const flood = 20_000;
    for (let i = 0; i < flood; i++) c.ws.send('{"type":"ping"}');
    const { code, reason } = await c.closed;
    expect(code).toBe(CLOSE.POLICY);
    expect(reason).toMatch(/rate limit/);
    const pongs = c.msgs.filter((m) => m.type === 'pong').length;
    expect(pongs).toBeGreaterThanOrEqual(MESSAGE_BUDGET.burst);
    expect(pongs).toBeLessThan(flood / 10);
    expect(c.msgs.filter((m) => m.code === 'RATE_LIMITED').length).toBeGreaterThanOrEqual(1);
  });

  it('counts invalid JSON and unknown messages too', async () => {
    const c = await open(keys['dev']!);
    for (let i = 0; i < 5_000; i++) c.ws.send(i % 2 ? '{nope' : '{"type":"dance"}');
    expect((await c.closed).code).toBe(CLOSE.POLICY);
    const answered = c.msgs.filter((m) => m.code === 'BAD_JSON' || m.code === 'BAD_REQUEST').length;
    expect(answered).toBeLessThan(1_000);
    expect(c.msgs.some((m) => m.code === 'RATE_LIMITED')).toBe(true);
  });

  it('keeps a client within its budget open', async () => {
    const c = await open(keys['dev']!);
    for (let i = 0; i < MESSAGE_BUDGET.burst - 1; i++) c.ws.send('{"type":"ping"}');
    c.ws.send('{nope'); // the burst's last token
    await new Promise<void>((r) => {
      const t = setInterval(() => {
        if (c.msgs.some((m) => m.code === 'BAD_JSON')) r(clearInterval(t));
      }, 10);
    });
    expect(c.msgs.filter((m) => m.type === 'pong')).toHaveLength(MESSAGE_BUDGET.burst - 1);
    expect(c.msgs.some((m) => m.code === 'RATE_LIMITED')).toBe(false);
    c.ws.close();
    expect((await c.closed).code).toBe(1005);
  });
});

describe('WebSocket frame limits', () => {
  it('closes a message over the size limit with 1009 and a reason', async () => {
    const c = await open(keys['dev']!);
    c.ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: ['x'.repeat(MAX)] }));
    const { code, reason } = await c.closed;
    expect(code).toBe(CLOSE.TOO_BIG);
    expect(reason).toMatch(new RegExp(`at most ${MAX} bytes`));
  });

  it('closes a binary frame that is not UTF-8 with 1007 and a reason', async () => {
    const c = await open(keys['dev']!);
    c.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: true });
    const { code, reason } = await c.closed;
    expect(code).toBe(CLOSE.INVALID_PAYLOAD);
    expect(reason).toMatch(/UTF-8/);
  });

  it('still reads JSON sent in a binary frame', async () => {
    const c = await open(keys['dev']!);
    // A pong answers only a ping: it arriving shows the binary frame was read as the JSON it holds.
    const pong = new Promise<{ type: string; code?: string }>((r) =>
      c.ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as { type: string; code?: string };
        if (m.type === 'pong' || m.code !== undefined) r(m);
      }),
    );
    c.ws.send(Buffer.from('{"type":"ping"}'), { binary: true });
    expect(await pong).toMatchObject({ type: 'pong' });
    expect(c.msgs.filter((m) => m.code !== undefined)).toEqual([]);
    // The connection stays open: the close that ends it is the client's own (1005: no code given).
    c.ws.close();
    expect((await c.closed).code).toBe(1005);
  });
});
