import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { captureSettings } from '../../src/capture/index.js';
import { buildCore, type Core } from '../../src/compose.js';
import { loadConfig } from '../../src/config/load.js';
import { VirtualClock } from '../../src/core/clock.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import { newConn, type Authed, type Conn, type Socket } from '../../src/ws/conn.js';
import { MessageBudget } from '../../src/ws/protocol.js';
import { ReplaySessions } from '../../src/ws/replay-session.js';

/**
 * A WebSocket replay whose client does not read waits instead of buffering: recorded Kalshi frames
 * (test/fixtures) in a real capture log, a replay at max speed to a socket that reports a full
 * buffer. The replay sends its snapshot and stops there (its retry timer is on a virtual clock that
 * does not move, so nothing else can make it go on); the socket drains, and it runs to
 * replay_completed.
 */
const config = loadConfig({ env: {} });
const kalshi = config.venues.find((v) => v.protocol === 'kalshi')!;
const T0 = Date.now() - 60_000;
const frames = (JSON.parse(readFileSync(join(__dirname, '../fixtures/kalshi/ws_orderbook_snapshot_then_delta_spec_example.json'), 'utf8')) as unknown[]).map(
  (f) => JSON.stringify(f),
);

let dir: string;
let core: Core;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cb-replay-bp-'));
  core = buildCore(config, { persistence: new Persistence(dir), log });
  const a = core.capture!.venue(kalshi.label);
  frames.forEach((f, i) => a.frame(f, 1, T0 + 2 * i));
  await core.capture!.flush();
});

afterAll(async () => {
  await core.capture?.close();
  await core.persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A socket that records what it is sent and reports the buffered amount the test sets. */
class Client implements Socket {
  readonly sent: Record<string, unknown>[] = [];
  buffered = 0;
  asked = 0;
  constructor(private readonly conn: Conn) {}
  getUserData(): Conn {
    return this.conn;
  }
  send(m: string | ArrayBuffer | Uint8Array): boolean {
    this.sent.push(JSON.parse(typeof m === 'string' ? m : new TextDecoder().decode(m)) as Record<string, unknown>);
    return true;
  }
  getBufferedAmount(): number {
    this.asked++;
    return this.buffered;
  }
  subscribe(): boolean {
    return true;
  }
  unsubscribe(): boolean {
    return true;
  }
  end(): void {}
  close(): void {}
  cork(cb: () => void): void {
    cb();
  }
}

describe('WebSocket replay backpressure', () => {
  it('waits while its client does not read, and goes on when it drains', async () => {
    const clock = new VirtualClock(T0 + 60_000);
    const { record } = core.keys.create('pro', 'tests');
    const conn = newConn(record, core.plans.pro, new MessageBudget(50, 100, clock.now()));
    const ws = new Client(conn);
    const sessions = new ReplaySessions({
      config,
      source: { capture: core.capture, settings: captureSettings(config), now: () => clock.now() },
      venues: core.venues,
      log,
      clock,
      maxConcurrent: 2,
      bookDepth: 20,
      highWater: 1024,
      send: (s, body) => s.send(JSON.stringify({ ...body, ts: clock.now() })),
      resolve: (raw) => ({ id: raw, v: kalshi }),
      channelsOf: (plan) => plan.ws.channels,
    });
    ws.buffered = 1 << 20;
    const ticker = 'FED-23DEC-T3.00';
    sessions.handle(ws, conn as Authed, {
      type: 'replay',
      channels: ['prices'],
      market_ids: [ticker],
      from: T0 + 2,
      to: T0 + 2 * frames.length,
      speed: 'max',
    });
    // The snapshot at `from`, then the replay asks how much is unread and waits.
    await vi.waitFor(() => expect(ws.asked).toBeGreaterThan(0), { timeout: 30_000, interval: 10 });
    expect(ws.sent.map((m) => m['type'])).toEqual(['replay_started', 'price_update']);
    expect(ws.sent[1]).toMatchObject({ market_id: ticker, snapshot: true });
    expect(sessions.active).toBe(1);
    // The client reads: the replay goes on to its end.
    ws.buffered = 0;
    sessions.drain(ws);
    await vi.waitFor(() => expect(ws.sent.at(-1)?.['type']).toBe('replay_completed'), { timeout: 30_000, interval: 10 });
    // What waited went out after the drain, and the count says every message sent.
    expect(ws.sent.length).toBeGreaterThan(3);
    expect(ws.sent.at(-1)).toMatchObject({ messages: ws.sent.length - 2 });
    expect(sessions.active).toBe(0);
  });
});
