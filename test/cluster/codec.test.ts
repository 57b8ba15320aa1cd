import { describe, expect, it } from 'vitest';
import { restoreSnapshot, takeSnapshot, decodeSnapshot, encodeSnapshot } from '../../src/cluster/snapshot.js';
import { decodeMessage, encodeBody, evSubject, subjectToken, wsSubject } from '../../src/cluster/subjects.js';
import { clusterSettings } from '../../src/cluster/link.js';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';

const config = loadConfig({ env: {} });
const T = 1_764_000_000_000;

describe('cluster subjects', () => {
  it('maps every topic part to one subject token, wildcards and dots included', () => {
    expect(wsSubject('prices:venue_a:KXNFLGAME-26NOV23NESEA-SEA')).toBe('crossbook.ws.prices.venue_a.KXNFLGAME-26NOV23NESEA-SEA');
    expect(wsSubject('venue_a_prices:venue_a:*')).toBe('crossbook.ws.venue_a_prices.venue_a.%2A');
    expect(wsSubject('prices:venue_b:0xab.cd >e')).toBe('crossbook.ws.prices.venue_b.0xab%2Ecd%20%3Ee');
    expect(subjectToken('')).toBe('%');
    expect(wsSubject('a:b.c').split('.')).toHaveLength(4);
  });

  it('round-trips a publication and an event through msgpackr, told apart by subject', () => {
    const p = { topic: 'prices:venue_a:X', body: { type: 'price_update', yes_bid: 41.5, volume: null }, seq: 7, epoch: T, ts: T + 1 };
    expect(decodeMessage(wsSubject(p.topic), encodeBody(p))).toEqual({ kind: 'ws', p });
    const ev: NormalizedEvent = { type: 'feed', venue: 'venue_a', state: 'disconnected', timestamp: T, localTimestamp: T } as NormalizedEvent;
    expect(decodeMessage(evSubject(ev), encodeBody(ev))).toEqual({ kind: 'ev', ev });
  });
});

describe('cluster snapshot', () => {
  it('restores catalog, quotes and books that answer like the state it was cut from', () => {
    const src = new EngineState(config.venues);
    const base = { venue: 'venue_a', timestamp: T, localTimestamp: T } as const;
    const evs = [
      { ...base, type: 'market', marketId: 'M1', eventId: 'E1', title: 'One?', status: 'active', yesInstrument: 'M1' },
      { ...base, type: 'book_snapshot', marketId: 'M1', instrument: 'M1', bids: [[4_000, 10]], asks: [[4_200, 5]] },
    ] as unknown as NormalizedEvent[];
    for (const e of evs) applyEvent(src, e);
    const cut = takeSnapshot(src, { epoch: T, seqs: () => [['prices:venue_a:M1', 3]] }, T);
    src.health.feed({ ...base, type: 'feed', state: 'connected' });
    const back = decodeSnapshot(encodeSnapshot({ ...takeSnapshot(src, { epoch: T, seqs: () => [['prices:venue_a:M1', 3]] }, T), streamSeq: 42, pubSeq: 40 }));
    expect(back.streamSeq).toBe(42);
    expect(back.pubSeq).toBe(40);
    expect(back.seqs).toEqual([['prices:venue_a:M1', 3]]);
    const dst = new EngineState(config.venues);
    restoreSnapshot(dst, back);
    expect(dst.catalog.get('venue_a', 'M1')).toEqual(src.catalog.get('venue_a', 'M1'));
    expect(dst.quotes.get('venue_a', 'M1')).toEqual(src.quotes.get('venue_a', 'M1'));
    expect(dst.books.marketBook('venue_a', 'M1')).toEqual(src.books.marketBook('venue_a', 'M1'));
    expect(dst.quotes.get('venue_a', 'M1')?.yesBid).toBe(4_000);
    // The core's view of each feed, so an edge's /status starts from it.
    expect(dst.health.get('venue_a')).toMatchObject({ connected: true, lastEventAt: src.health.get('venue_a')!.lastEventAt });
    expect(cut.health.find((h) => h.venue === 'venue_a')?.connected).toBe(false);
  });
});

describe('cluster settings', () => {
  it('refuses an unknown role, and a core or edge without a NATS URL, naming what to set', () => {
    expect(() => loadConfig({ env: {}, overrides: { cluster: { role: 'primary' } } })).toThrow(/cluster\.role/);
    const edge = loadConfig({ env: {}, overrides: { cluster: { role: 'edge' } } });
    const saved = process.env['NATS_URL'];
    delete process.env['NATS_URL'];
    try {
      expect(() => clusterSettings(edge)).toThrow(ConfigError);
      expect(() => clusterSettings(edge)).toThrow(/--nats/);
    } finally {
      if (saved !== undefined) process.env['NATS_URL'] = saved;
    }
    const core = loadConfig({ env: {}, overrides: { cluster: { role: 'core', natsUrl: 'nats://127.0.0.1:4222' } } });
    expect(clusterSettings(core)).toMatchObject({ natsUrl: 'nats://127.0.0.1:4222', stream: 'crossbook', maxMsgs: 2_000_000 });
    expect(config.cluster?.role).toBe('single');
  });
});
