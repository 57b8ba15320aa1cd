import { afterEach, describe, expect, it, vi } from 'vitest';
import type WebSocket from 'ws';
import { reconnectingSocket, type SocketEvent } from '../../../src/venues/common/socket.js';
import { ScriptedSocket } from '../../support/scripted-socket.js';

/**
 * The stall check of a venue socket (no frame and no pong for 2.5 heartbeats). Timers are fake and
 * the clock is the test's, so "the process was busy for a second" is a clock that moved while no
 * timer ran; the socket is scripted.
 */
const HB = 100;

function open(): { sock: ScriptedSocket; events: SocketEvent[]; clock: { t: number }; stop: () => void } {
  const clock = { t: 0 };
  let sock: ScriptedSocket | undefined;
  const events: SocketEvent[] = [];
  const sub = reconnectingSocket({
    url: 'ws://127.0.0.1:9/',
    heartbeatMs: HB,
    minBackoffMs: 60_000,
    now: () => clock.t,
    createWebSocket: () => (sock = new ScriptedSocket()) as unknown as WebSocket,
  }).subscribe((e) => events.push(e));
  sock!.open();
  return { sock: sock!, events, clock, stop: () => sub.unsubscribe() };
}

afterEach(() => vi.useRealTimers());

describe('venue socket messages', () => {
  it('hands each text frame on decoded, with the bytes it was decoded from', () => {
    const s = open();
    s.sock.frame('{"type":"update","title":"Zürich"}');
    const m = s.events.find((e) => e.kind === 'message');
    expect(m).toMatchObject({ kind: 'message', data: '{"type":"update","title":"Zürich"}' });
    expect(m?.kind === 'message' && m.bytes?.toString()).toBe('{"type":"update","title":"Zürich"}');
    s.stop();
  });
});

describe('venue socket stall check', () => {
  it('a connection silent for 2.5 heartbeats while the process ran its timers on time is stalled', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout'] });
    const s = open();
    for (let i = 1; i <= 3; i++) {
      s.clock.t = i * HB;
      vi.advanceTimersByTime(HB);
    }
    expect(s.events.filter((e) => e.kind === 'close')).toMatchObject([{ stalled: true }]);
    s.stop();
  });

  it('a timer that ran late (the process was busy) judges after the frames that waited meanwhile are read', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout'] });
    const s = open();
    // A second passes with no timer run: the heartbeat fires late, then the waiting frame is read.
    s.clock.t = 1_000;
    vi.advanceTimersByTime(HB);
    s.sock.frame('{"type":"update"}');
    vi.runOnlyPendingTimers();
    expect(s.events.filter((e) => e.kind === 'close')).toEqual([]);
    expect(s.events.filter((e) => e.kind === 'message')).toHaveLength(1);
    s.stop();
  });

  it('a late timer with nothing waiting is still a stall', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout'] });
    const s = open();
    s.clock.t = 1_000;
    vi.advanceTimersByTime(HB);
    vi.runOnlyPendingTimers();
    expect(s.events.filter((e) => e.kind === 'close')).toMatchObject([{ stalled: true }]);
    s.stop();
  });
});
