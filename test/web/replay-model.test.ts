import { describe, expect, it } from 'vitest';
import type { Alert } from '../../src/signals/alerts.js';
import { alertJson } from '../../src/views/alert.js';
import { SERVER_MESSAGES } from '../../src/ws/protocol.js';
import { REPLAY_ALERTS_SHOWN, ReplayModel } from '../../web/src/replay-model.js';

/**
 * The dashboard replay page's state (web/src/replay-model.ts), fed replay messages as the server
 * builds them: alert bodies from the server's own view (`alertJson`), checked against the
 * WebSocket schemas the OpenAPI document declares.
 */
const T0 = Date.UTC(2026, 10, 29, 12);

const alert = (seq: number, type: Alert['type'], createdAt = T0 + seq * 1_000): Alert => ({
  seq,
  type,
  venue: 'venue_b',
  marketId: `m-${seq}`,
  token: `t-${seq}`,
  outcome: 'yes',
  action: 'buy',
  wallet: '0xabc',
  price: 4_200,
  size: 1_000,
  notional: 4_200_000,
  tradeId: `tr-${seq}`,
  tradeTimestamp: createdAt - 5,
  createdAt,
  reason: 'a wallet that is usually right bought',
  figures: { hit_rate: 0.8 },
  walletPnl: 12,
});

/** The message a replay sends for an alert: the feed's body, its channel, the replay's seq, epoch and ts. */
function message(a: Alert, seq: number): Record<string, unknown> {
  const channel = a.type === 'fade' ? 'fade_finder' : 'smart_money';
  const m = { type: channel, channel, ...alertJson('venue_b', a, `Market ${a.seq}`), seq, epoch: T0, ts: a.createdAt };
  const schema = channel === 'fade_finder' ? SERVER_MESSAGES.WsFadeFinder : SERVER_MESSAGES.WsSmartMoney;
  expect(schema.safeParse(m).error).toBeUndefined();
  return m;
}

const started = {
  type: 'replay_started',
  replay_id: 'r1',
  from: T0,
  to: T0 + 60_000,
  speed: 'max',
  channels: ['smart_money', 'fade_finder'],
  market_ids: [],
  epoch: T0,
};

describe('ReplayModel: the alert channels', () => {
  it('keeps each alert as the feed gave it, newest first, and moves the position to its creation time', () => {
    const m = new ReplayModel();
    m.reset();
    expect(m.apply(started)).toBe(true);
    expect(m.apply(message(alert(1, 'smart_money'), 1))).toBe(true);
    expect(m.apply(message(alert(2, 'fade'), 1))).toBe(true);
    expect(m.apply(message(alert(3, 'insider'), 2))).toBe(true);
    expect(m.alerts.map((a) => [a.id, a.kind])).toEqual([
      ['3', 'insider'],
      ['2', 'fade'],
      ['1', 'smart_money'],
    ]);
    expect(m.alerts[0]).toMatchObject({ market: 'm-3', source: 'venue_b', title: 'Market 3', side: 'buy', outcome: 'yes', price: 42, amountUsd: 420 });
    expect(m.position).toBe(T0 + 3_000);
    expect(m.messages).toBe(3);
  });

  it('holds at most REPLAY_ALERTS_SHOWN alerts, dropping the oldest', () => {
    const m = new ReplayModel();
    m.apply(started);
    for (let i = 1; i <= REPLAY_ALERTS_SHOWN + 7; i++) m.apply(message(alert(i, 'smart_money'), i));
    expect(m.alerts).toHaveLength(REPLAY_ALERTS_SHOWN);
    expect(m.alerts[0]!.id).toBe(String(REPLAY_ALERTS_SHOWN + 7));
    expect(m.alerts[REPLAY_ALERTS_SHOWN - 1]!.id).toBe('8');
  });

  it('a seek clears them (the alerts after the new position follow), a warning is kept, a new replay starts empty', () => {
    const m = new ReplayModel();
    m.apply(started);
    m.apply({ type: 'warning', code: 'REPLAY_ALERTS_PRUNED', message: 'alerts before 12:00 are no longer stored' });
    m.apply(message(alert(1, 'smart_money'), 1));
    m.apply({ type: 'replay_seeked', replay_id: 'r1', position: T0 + 500, epoch: T0 + 500 });
    expect(m.alerts).toEqual([]);
    expect(m.position).toBe(T0 + 500);
    m.apply(message(alert(2, 'fade'), 1));
    expect(m.alerts.map((a) => a.id)).toEqual(['2']);
    expect(m.warnings).toEqual(['alerts before 12:00 are no longer stored']);
    m.reset();
    expect(m.alerts).toEqual([]);
    expect(m.warnings).toEqual([]);
    expect(m.state).toBe('starting');
  });
});
