import { describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../src/access/keys.js';
import { loadPlans } from '../../src/access/plans.js';
import { VirtualClock } from '../../src/core/clock.js';
import { log } from '../../src/core/log.js';
import { WsTokens, TOKENS_PER_KEY } from '../../src/ws/auth.js';
import { Backpressure, CLOSE_FRAME_ROOM, Retained } from '../../src/ws/backpressure.js';
import { KeyBudget } from '../../src/ws/key-budget.js';
import { newConn, type Conn, type Socket } from '../../src/ws/conn.js';
import { CLOSE, MessageBudget } from '../../src/ws/protocol.js';
import { Publisher } from '../../src/ws/publish.js';
import { Subscriptions } from '../../src/ws/subscriptions.js';
import { Topics } from '../../src/ws/topics.js';

/**
 * The hub's rooms one by one, without a server: the uWS side is a recording socket and a
 * subscriber table standing in for uWS's pub/sub (what uWS would answer), and time a manual clock.
 */
/** The engine's virtual clock, stepped by the tests. */
class ManualClock extends VirtualClock {
  constructor() {
    super(1_000_000);
  }
  get t(): number {
    return this.now();
  }
  set t(v: number) {
    this.advanceTo(v);
  }
}

/** uWS's pub/sub as the rooms see it: who subscribes to what, and what was published. */
class PubSub {
  readonly subs = new Map<string, Set<RecSocket>>();
  readonly published: [string, string][] = [];
  count = (t: string): number => this.subs.get(t)?.size ?? 0;
  publish = (t: string, m: string | Uint8Array): void => void this.published.push([t, typeof m === 'string' ? m : Buffer.from(m).toString()]);
}

/** A socket that records what it was asked to do; `buffered` is what uWS would report. */
class RecSocket implements Socket {
  buffered = 0;
  readonly sent: string[] = [];
  ended: [number, string] | undefined;
  hardClosed = false;
  constructor(
    private readonly conn: Conn,
    private readonly ps: PubSub,
  ) {}
  getUserData(): Conn {
    return this.conn;
  }
  send(m: string | ArrayBuffer | Uint8Array): number {
    this.sent.push(String(m));
    return 1;
  }
  subscribe(t: string): boolean {
    let s = this.ps.subs.get(t);
    if (!s) this.ps.subs.set(t, (s = new Set()));
    s.add(this);
    return true;
  }
  unsubscribe(t: string): boolean {
    return this.ps.subs.get(t)?.delete(this) ?? false;
  }
  getBufferedAmount(): number {
    return this.buffered;
  }
  end(code?: number, reason?: string): void {
    this.ended = [code ?? 0, reason ?? ''];
  }
  close(): void {
    this.hardClosed = true;
  }
  cork(cb: () => void): this {
    cb();
    return this;
  }
}

const plans = loadPlans();
const record: KeyRecord = {
  id: 'key_000000000001',
  hash: 'ab'.repeat(32),
  hint: 'pmx_abcd…',
  account: 'a',
  plan: 'pro',
  createdAt: '2026-11-28T00:00:00.000Z',
};

function rooms() {
  const ps = new PubSub();
  const clock = new ManualClock();
  const retained = new Retained();
  const topics = new Topics(ps.count, 'venue_a_prices', false, (t) => retained.keeps(t));
  const subs = new Subscriptions(topics, retained);
  const pub = new Publisher(ps.publish, topics, retained, clock, 7);
  const bp = new Backpressure({ coalesceBytes: 1_000, dropBytes: 10_000, stallMs: 500 }, topics, retained, log, clock);
  const socket = (): RecSocket => new RecSocket(newConn(record, plans.pro, new MessageBudget(50, 100, clock.now())), ps);
  return { ps, clock, retained, topics, subs, pub, bp, socket };
}

describe('Topics', () => {
  it('numbers each topic on its own, gap-free, and adopts another epoch’s seqs by resetting all', () => {
    const { topics } = rooms();
    expect([topics.next('a'), topics.next('a'), topics.next('b')]).toEqual([1, 2, 1]);
    topics.adopt([['c', 9]], false);
    expect(topics.seqs()).toEqual([
      ['a', 2],
      ['b', 1],
      ['c', 9],
    ]);
    topics.adopt([['b', 4]], true);
    expect(topics.seqs()).toEqual([['b', 4]]);
  });

  it('answers a topic nobody holds without asking uWS, and a held one only again after a subscription changed', () => {
    const { topics, ps, subs, socket } = rooms();
    let asked = 0;
    const counting = new Topics((t) => (asked++, ps.count(t)), undefined, false);
    expect(counting.subs('prices:venue_h:1')).toBeUndefined();
    expect(asked).toBe(0);
    const ws = socket();
    new Subscriptions(counting, new Retained()).sub(ws, ws.getUserData(), 'prices:venue_h:1', 'prices');
    expect(counting.subs('prices:venue_h:1')).toMatchObject({ plain: true, data: false, ch: 'prices', slug: 'venue_h' });
    const after = asked;
    counting.subs('prices:venue_h:1');
    expect(asked).toBe(after); // cached until the next change
    expect(counting.marketSubs('prices', 'venue_h', '1')?.topic).toBe('prices:venue_h:1');
    expect(counting.marketSubs('prices', 'venue_b', '1')).toBeUndefined();
    expect(topics.mayHold('1')).toBe(false);
    void subs;
  });
  it('answers through a slot as by the name, and looks again once a market topic is held or released', () => {
    const { topics, subs, socket } = rooms();
    const slot = { subsOf: undefined, subsLayout: 0, subsId: undefined, subsHeld: undefined };
    const via = () => topics.marketSubsVia('orderbook', 'venue_a', 'M1', slot);
    expect(via()).toBeUndefined();
    const ws = socket();
    subs.sub(ws, ws.getUserData(), 'orderbook:venue_a:M1', 'orderbook');
    expect(via()?.topic).toBe('orderbook:venue_a:M1');
    expect(via()).toBe(topics.marketSubs('orderbook', 'venue_a', 'M1'));
    // Another market through the same slot is looked up, not taken from it.
    expect(topics.marketSubsVia('orderbook', 'venue_a', 'M2', slot)).toBeUndefined();
    expect(via()?.topic).toBe('orderbook:venue_a:M1');
    subs.unsub(ws, ws.getUserData(), 'orderbook:venue_a:M1');
    expect(via()).toBeUndefined();
    expect(topics.gamesListened).toBe(false);
    subs.sub(ws, ws.getUserData(), 'live_games:G1', 'live_games');
    expect(topics.gamesListened).toBe(true);
    subs.unsub(ws, ws.getUserData(), 'live_games:G1');
    expect(topics.gamesListened).toBe(false);
    expect(new Topics(() => 0, undefined, true).gamesListened).toBe(true);
    // arb and ev topics likewise: a group's signal change looks for subscribers only while one is held.
    expect(topics.signalsListened).toBe(false);
    subs.sub(ws, ws.getUserData(), 'arb:*', 'arb');
    subs.sub(ws, ws.getUserData(), 'ev:G1', 'ev');
    subs.unsub(ws, ws.getUserData(), 'arb:*');
    expect(topics.signalsListened).toBe(true);
    subs.closed(ws.getUserData());
    expect(topics.signalsListened).toBe(false);
    expect(new Topics(() => 0, undefined, true).signalsListened).toBe(true);
  });

  it('is quiet only while no market-scoped or live_games topic is held (never on a cluster core), and counts each end of quiet', () => {
    const { topics, subs, socket } = rooms();
    const ws = socket();
    const c = ws.getUserData();
    expect([topics.quiet, topics.wakes]).toEqual([true, 0]);
    subs.sub(ws, c, 'status:venue_a', 'status');
    expect(topics.quiet).toBe(true);
    subs.sub(ws, c, 'prices:venue_a:M1', 'prices');
    subs.sub(ws, c, 'orderbook:venue_a:M1', 'orderbook');
    expect([topics.quiet, topics.wakes]).toEqual([false, 1]);
    subs.unsub(ws, c, 'prices:venue_a:M1');
    expect(topics.quiet).toBe(false);
    subs.unsub(ws, c, 'orderbook:venue_a:M1');
    expect(topics.quiet).toBe(true);
    subs.sub(ws, c, 'venue_a_prices:venue_a:*', 'venue_a_prices');
    expect([topics.quiet, topics.wakes]).toEqual([false, 2]);
    subs.unsub(ws, c, 'venue_a_prices:venue_a:*');
    subs.sub(ws, c, 'live_games:G1', 'live_games');
    expect([topics.quiet, topics.wakes]).toEqual([false, 3]);
    subs.unsub(ws, c, 'live_games:G1');
    expect(topics.quiet).toBe(true);
    expect(new Topics(() => 0, undefined, true).quiet).toBe(false);
  });
});

describe('Subscriptions', () => {
  it('keeps a connection’s topics, the held topics and uWS in step, in its dialect', () => {
    const { topics, subs, ps, socket } = rooms();
    const ws = socket();
    const c = ws.getUserData();
    subs.sub(ws, c, 'orderbook:venue_h:9', 'orderbook');
    subs.speakHosted(ws, c);
    expect(ps.count('orderbook:venue_h:9')).toBe(0);
    expect(ps.count('orderbook:venue_h:9|data')).toBe(1);
    expect(topics.subs('orderbook:venue_h:9')).toMatchObject({ plain: false, data: true });
    subs.unsub(ws, c, 'orderbook:venue_h:9');
    expect(topics.heldCount).toBe(0);
    expect(topics.hostedConns).toBe(1);
    subs.closed(c);
    expect(topics.hostedConns).toBe(0);
  });
});

describe('Publisher', () => {
  it('appends the envelope to the JSON text once per publish, and the hosted twin with data', () => {
    const { pub, subs, ps, socket, topics } = rooms();
    const plain = socket();
    const hosted = socket();
    subs.sub(plain, plain.getUserData(), 'status:venue_a', 'status');
    subs.sub(hosted, hosted.getUserData(), 'status:venue_a', 'status');
    subs.speakHosted(hosted, hosted.getUserData());
    pub.publish('status:venue_a', { type: 'ready', code: 'FEED_READY' }, topics.subs('status:venue_a'), { timestamp: 5, localTimestamp: 6 });
    expect(ps.published).toEqual([
      ['status:venue_a', '{"type":"ready","code":"FEED_READY","venue_ts":5,"recv_ts":6,"seq":1,"epoch":7,"ts":1000000}'],
      [
        'status:venue_a|data',
        '{"type":"ready","code":"FEED_READY","data":{"type":"ready","code":"FEED_READY"},"venue_ts":5,"recv_ts":6,"seq":1,"epoch":7,"ts":1000000}',
      ],
    ]);
  });

  it('writes the same envelope as bytes', () => {
    const { pub, subs, ps, socket, topics } = rooms();
    const ws = socket();
    subs.sub(ws, ws.getUserData(), 'prices:venue_h:1', 'prices');
    const held = topics.subs('prices:venue_h:1')!;
    expect(pub.plainOnly('prices:venue_h:1', held)).toBe(true);
    pub.bytes.reset();
    pub.bytes.ascii('{"type":"price_update"');
    pub.sendBytes('prices:venue_h:1', held, undefined);
    expect(ps.published).toEqual([['prices:venue_h:1', '{"type":"price_update","seq":1,"epoch":7,"ts":1000000}']]);
  });
});

describe('Backpressure', () => {
  it('coalesces past the first bound, keeps the latest per topic for the client, and rejoins when it drains', () => {
    const { bp, subs, pub, ps, retained, topics, socket } = rooms();
    const ws = socket();
    const c = ws.getUserData();
    subs.sub(ws, c, 'prices:venue_h:1', 'prices');
    ws.buffered = 1_001;
    bp.sweep([ws]);
    expect(c.coalescing).toBe(true);
    expect(ps.count('prices:venue_h:1')).toBe(0);
    expect(JSON.parse(ws.sent.at(-1)!)).toMatchObject({ type: 'warning', code: 'COALESCED' });
    // the topic has no uWS subscriber now, yet its updates are kept for the coalescing client
    pub.publish('prices:venue_h:1', { n: 1 }, topics.subs('prices:venue_h:1'));
    pub.publish('prices:venue_h:1', { n: 2 }, topics.subs('prices:venue_h:1'));
    expect(retained.get('prices:venue_h:1')?.seq).toBe(2);
    ws.buffered = 0;
    bp.drain(ws);
    expect(JSON.parse(ws.sent.at(-1)!)).toMatchObject({ n: 2, seq: 2 });
    expect(c.coalescing).toBe(false);
    expect(ps.count('prices:venue_h:1')).toBe(1);
    expect(retained.size).toBe(0);
  });

  it('ends a client that does not catch up within stallMs with 4008, or waits for room for the close frame', () => {
    const { bp, clock, socket } = rooms();
    const ws = socket();
    ws.buffered = 1_001;
    bp.sweep([ws]);
    clock.t += 501;
    bp.sweep([ws]);
    expect(ws.ended).toEqual([CLOSE.BACKPRESSURE, 'backpressure: client stopped reading (coalesced and not catching up)']);
    expect(bp.dropped).toBe(1);
    // at uWS's cap there is no room for the close frame: it waits for a drain, then the hard close
    const full = socket();
    full.buffered = bp.maxBackpressure() - CLOSE_FRAME_ROOM + 1;
    bp.closeWith(full, full.getUserData(), CLOSE.POLICY, 'x');
    expect(full.ended).toBeUndefined();
    full.buffered = 0;
    bp.drain(full);
    expect(full.ended).toEqual([CLOSE.POLICY, 'x']);
    const stuck = socket();
    stuck.buffered = bp.maxBackpressure();
    bp.closeWith(stuck, stuck.getUserData(), CLOSE.POLICY, 'y');
    clock.t += 501;
    bp.sweep([stuck]);
    expect(stuck.hardClosed).toBe(true);
  });

  it('keeps waiting to close a client that reads, too slowly to make room, and counts stallMs from its last read', () => {
    const { bp, clock, socket } = rooms();
    const slow = socket();
    slow.buffered = bp.maxBackpressure();
    bp.closeWith(slow, slow.getUserData(), CLOSE.POLICY, 'z');
    for (let i = 0; i < 3; i++) {
      clock.t += 400;
      slow.buffered -= 1; // it read a little: still no room for the close frame
      bp.drain(slow);
      clock.t += 400;
      bp.sweep([slow]);
      expect(slow.hardClosed).not.toBe(true);
      expect(slow.ended).toBeUndefined();
    }
    // It stops reading: cut stallMs after its last read.
    clock.t += 101;
    bp.sweep([slow]);
    expect(slow.hardClosed).toBe(true);
  });
});

describe('WsTokens', () => {
  it('opens once, expires, is bounded per key and dropped with a revoked key', () => {
    const clock = new ManualClock();
    const tokens = new WsTokens(clock, 1_000);
    const a = tokens.issue(record);
    expect(a.expiresAt).toBe(clock.t + 1_000);
    expect(tokens.peek(a.token)).toBe(record);
    tokens.take(a.token);
    expect(tokens.peek(a.token)).toBeUndefined();
    const b = tokens.issue(record);
    clock.t += 1_000;
    expect(tokens.peek(b.token)).toBeUndefined();
    for (let i = 0; i < TOKENS_PER_KEY + 5; i++) tokens.issue(record);
    expect(tokens.size).toBe(TOKENS_PER_KEY);
    tokens.revoke(record.id);
    expect(tokens.size).toBe(0);
  });
});

describe('KeyBudget', () => {
  it('shares one bucket between a key’s connections, refuses a message it cannot cover whole, and refills', () => {
    const b = new KeyBudget(100, 300);
    expect(b.take('k1', 250, 0)).toBe(true);
    expect(b.take('k1', 60, 0)).toBe(false); // 50 left: refused whole, nothing taken
    expect(b.take('k1', 50, 0)).toBe(true);
    expect(b.take('k2', 300, 0)).toBe(true); // another key has its own
    expect(b.take('k1', 10, 50)).toBe(false); // 50 ms at 100/s: 5 ids
    expect(b.take('k1', 10, 100)).toBe(true);
    expect(b.take('k1', 1_000, 60_000)).toBe(false); // refills to the burst, not beyond
    b.forget('k1');
    expect(b.size).toBe(1);
  });
});
