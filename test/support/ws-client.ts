import { expect, vi } from 'vitest';
import WebSocket from 'ws';
import type { EngineState } from '../../src/state/engine.js';
import type { VenueDirectory } from '../../src/venues/directory.js';
import { takeMessage } from './messages.js';

export type Msg = Record<string, unknown>;

/** A WebSocket client of /api/v2/ws that keeps what it receives. */
export interface WsClient {
  readonly ws: WebSocket;
  /** Every message received, in order (never taken from). */
  readonly all: Msg[];
  /** Messages not yet taken by `next`. */
  readonly msgs: Msg[];
  /** Waits for the first message not yet taken that `pred` accepts, and takes it. */
  next(pred: (m: Msg) => boolean): Promise<Msg>;
  send(m: unknown): void;
}

/** Opens `url` with `key` (X-API-Key) and waits for the welcome; `seen` is told each message as it arrives (receive order, schema checks). */
export async function connectWs(url: string, key: string, seen?: (m: Msg) => void): Promise<WsClient> {
  const ws = new WebSocket(url, { headers: { 'x-api-key': key } });
  const all: Msg[] = [];
  const msgs: Msg[] = [];
  ws.on('message', (d: Buffer) => {
    const m = JSON.parse(d.toString()) as Msg;
    seen?.(m);
    all.push(m);
    msgs.push(m);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const c: WsClient = { ws, all, msgs, next: (pred) => takeMessage(msgs, pred), send: (m) => ws.send(JSON.stringify(m)) };
  await c.next((m) => m['type'] === 'welcome');
  return c;
}

/**
 * A refusal check on `c`: sends `m` and expects the next error to carry `code` and a message that
 * matches `text`; returns the error.
 */
export function refusals(c: WsClient): (m: unknown, code: string, text: RegExp) => Promise<Msg> {
  return async (m, code, text) => {
    c.send(m);
    const e = await c.next((x) => x['type'] === 'error');
    expect(e['code']).toBe(code);
    expect(e['message']).toMatch(text);
    return e;
  };
}

/**
 * Waits for the acknowledgment `type` (that `pred` accepts) of a control sent on `c`, or the error
 * that refused it, which fails at once with the server's message instead of waiting out the guard.
 */
export async function acked(c: WsClient, type: string, pred: (m: Msg) => boolean = () => true): Promise<Msg> {
  const m = await c.next((x) => (x['type'] === type && pred(x)) || x['type'] === 'error');
  expect(m, `${type} expected`).toMatchObject({ type });
  return m;
}

/** Markets whose order books move now (after the feeds' first snapshots): `slug:market_id`, the busiest `n`. */
export async function movingMarkets(svc: { readonly state: EngineState; readonly venues: VenueDirectory }, n: number): Promise<string[]> {
  await vi.waitFor(() => expect(svc.state.books.size).toBeGreaterThan(100), { timeout: 30_000, interval: 50 });
  const seen = new Map<string, number>();
  const sub = svc.state.books.changes$.subscribe((b) => {
    const v = svc.venues.byLabel.get(b.venue);
    if (v) seen.set(`${v.slug}:${b.marketId}`, (seen.get(`${v.slug}:${b.marketId}`) ?? 0) + 1);
  });
  await vi.waitFor(() => expect([...seen.values()].filter((k) => k >= 3).length).toBeGreaterThanOrEqual(n), { timeout: 30_000, interval: 50 });
  sub.unsubscribe();
  return [...seen.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([id]) => id);
}
