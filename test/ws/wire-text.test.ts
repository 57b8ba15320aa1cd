import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMPTY, type Subscription } from 'rxjs';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fanoutFlow } from '../../pipelines/fanout.js';
import { KeyStore } from '../../src/access/keys.js';
import { loadPlans } from '../../src/access/plans.js';
import { loadConfig } from '../../src/config/load.js';
import type { BookSide } from '../../src/core/book.js';
import { log } from '../../src/core/log.js';
import { PAYOUT, roundSize, toCents } from '../../src/core/price.js';
import type { NormalizedEvent } from '../../src/core/types.js';
import { Persistence } from '../../src/persist/store.js';
import { onMarkers, Turn } from '../../src/pipeline/turn.js';
import { HttpServer } from '../../src/server/http.js';
import { applyEvent, EngineState } from '../../src/state/engine.js';
import { VenueDirectory } from '../../src/venues/directory.js';
import { priceBody } from '../../src/ws/bodies.js';
import { WsHub } from '../../src/ws/hub.js';

/**
 * The text the hub puts on the wire for book and quote changes (written as bytes from kept side
 * text, with held topic records and cached envelope numbers) against the spec's messages written
 * the plain way, `JSON.stringify` of an object, over a seeded run of deltas, snapshots and resets
 * on markets whose book is the YES instrument's or the NO instrument's (complemented).
 */
const config = loadConfig({ env: {} });
const dir = mkdtempSync(join(tmpdir(), 'cb-ws-wire-'));
const T = Date.UTC(2026, 10, 29, 12);
const DEPTH = 5;
/** Markets on venue_a: the first three keep their book under their id, the last under a NO instrument. */
const IDS = ['KX-WIRE-A', 'KX-WIRE-B', 'KX-WIRE-C', 'KX-WIRE-D'];
const NO_OF_D = 'KX-WIRE-D-NO';
let persistence: Persistence;
let http: HttpServer;
let hub: WsHub;
let state: EngineState;
let flow: Subscription;
let url: string;
let key: string;
const turn = new Turn(onMarkers);
const venueA = config.venues.find((v) => v.label === 'venue_a')!;

beforeAll(async () => {
  persistence = new Persistence(dir);
  state = new EngineState(config.venues);
  const ks = new KeyStore(persistence.db('keys'));
  key = ks.create('dev').key;
  http = new HttpServer(log);
  hub = new WsHub({ http, path: '/api/v2/ws', state, venues: new VenueDirectory(config), keys: ks, plans: loadPlans(), log }, { bookDepth: DEPTH });
  flow = fanoutFlow(EMPTY, state, hub, undefined, undefined, turn);
  url = `ws://127.0.0.1:${await http.listen('127.0.0.1', 0)}/api/v2/ws`;
  const base = { venue: 'venue_a', timestamp: T, localTimestamp: T } as const;
  for (const id of IDS) {
    const no = id === 'KX-WIRE-D' ? { yesInstrument: undefined, noInstrument: NO_OF_D } : {};
    applyEvent(state, { ...base, type: 'market', marketId: id, title: id, status: 'active', ...no });
    applyEvent(state, { ...base, type: 'book_snapshot', marketId: id, instrument: instrumentOf(id), bids: [[4000, 10]], asks: [[6000, 2.5]] });
  }
  turn.flush();
});
afterAll(async () => {
  flow.unsubscribe();
  hub.close();
  http.close();
  await persistence.close();
  rmSync(dir, { recursive: true, force: true });
});

const instrumentOf = (id: string): string => (id === 'KX-WIRE-D' ? NO_OF_D : id);

/** `[[cents, size], …]` of the best `DEPTH` levels, prices complemented when `flip`. */
const levels = (side: BookSide, flip: boolean): [number, number][] =>
  side.levels(DEPTH).map(([p, s]) => [toCents(flip ? PAYOUT - p : p), s] as [number, number]);

/** The body of the market's orderbook_update as the spec writes it, from the state's book. */
function bookMessage(id: string): Record<string, unknown> {
  const b = state.books.instrument('venue_a', instrumentOf(id))!;
  // A NO book: YES bids are its asks at 100 − p, YES asks its bids.
  const [yb, ya, flip] = b.role === 'no' ? [b.asks, b.bids, true] : [b.bids, b.asks, false];
  return {
    type: 'orderbook_update',
    channel: 'orderbook',
    market_id: id,
    source: 'venue_a',
    ready: true,
    yes: { bids: levels(yb, flip), asks: levels(ya, flip) },
    no: { bids: levels(ya, !flip), asks: levels(yb, !flip) },
  };
}

describe('the text of orderbook and price updates on the wire', () => {
  it('is JSON.stringify of the spec message with its envelope, message after message, over seeded deltas', async () => {
    const ws = new WebSocket(url, { headers: { 'x-api-key': key } });
    const texts: string[] = [];
    ws.on('message', (d) => texts.push(d.toString()));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ type: 'subscribe', channel: 'orderbook', market_ids: IDS }));
    ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: IDS }));
    // Welcome, two acks, a snapshot per market and channel.
    const before = 3 + 2 * IDS.length;
    await vi.waitFor(() => expect(texts.length).toBeGreaterThanOrEqual(before), { timeout: 30_000, interval: 10 });
    expect(texts.filter((t) => t.includes('"snapshot":true'))).toHaveLength(2 * IDS.length);
    const start = texts.length;
    // What each market's prices subscriber was last shown: its snapshot without the snapshot flag and envelope.
    const shown = new Map<string, string>();
    for (const t of texts.slice(0, start)) {
      const m = JSON.parse(t) as Record<string, unknown>;
      if (m['type'] !== 'price_update') continue;
      for (const k of ['snapshot', 'seq', 'epoch', 'ts']) delete m[k];
      shown.set(m['market_id'] as string, JSON.stringify(m));
    }

    let x = 0.37;
    const next = (): number => (x = (x * 7919 + 0.211) % 1);
    // What each message must be, without its envelope, in publish order.
    const expected: { topic: string; body: Record<string, unknown>; venueTs: number; recvTs: number }[] = [];
    for (let k = 0; k < 600; k++) {
      const id = IDS[Math.floor(next() * IDS.length)]!;
      const instrument = instrumentOf(id);
      // Frames of one millisecond share their times, as a burst does (the envelope keeps their text).
      const at = { venue: 'venue_a', timestamp: T + Math.floor(k / 3), localTimestamp: T + 2 + Math.floor(k / 4), marketId: id, instrument } as const;
      const r = next();
      let ev: NormalizedEvent;
      if (r < 0.03) ev = { ...at, type: 'book_snapshot', bids: [[1000 + 100 * Math.floor(next() * 30), 1]], asks: [[5000 + 100 * Math.floor(next() * 40), 3]] };
      else {
        const bid = next() < 0.5;
        const price = bid ? 100 * (1 + Math.floor(next() * 49)) : 100 * (50 + Math.floor(next() * 49));
        const size = next() < 0.25 ? 0 : roundSize(next() * 10 ** Math.floor(next() * 5));
        ev = { ...at, type: 'book_delta', changes: [[bid ? 'bid' : 'ask', price, size]] };
      }
      applyEvent(state, ev);
      const book = state.books.instrument('venue_a', instrument)!;
      if (book.ready) expected.push({ topic: `orderbook:${id}`, body: bookMessage(id), venueTs: at.timestamp, recvTs: at.localTimestamp });
      const q = state.quotes.get('venue_a', id);
      // A price_update goes out when what it shows changed since the last one (or the snapshot).
      const body = q && priceBody(venueA, q, false);
      if (body && JSON.stringify(body) !== shown.get(id)) {
        shown.set(id, JSON.stringify(body));
        expected.push({ topic: `prices:${id}`, body, venueTs: at.timestamp, recvTs: at.localTimestamp });
      }
      turn.flush();
    }
    await vi.waitFor(() => expect(texts.length - start).toBeGreaterThanOrEqual(expected.length), { timeout: 30_000, interval: 10 });
    ws.close();
    const got = texts.slice(start);
    expect(got).toHaveLength(expected.length);
    const seqs = new Map<string, number>();
    for (let i = 0; i < got.length; i++) {
      const m = JSON.parse(got[i]!) as { seq: number; epoch: number; ts: number };
      const e = expected[i]!;
      // seq gap-free per topic; epoch and send time are the server's, their text checked by the stringify.
      const s = seqs.get(e.topic);
      if (s !== undefined) expect(m.seq).toBe(s + 1);
      seqs.set(e.topic, m.seq);
      expect(got[i]).toBe(JSON.stringify({ ...e.body, venue_ts: e.venueTs, recv_ts: e.recvTs, seq: m.seq, epoch: m.epoch, ts: m.ts }));
    }
  });
});
