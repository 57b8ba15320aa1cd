import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { clientTypes, inProcessDocument, SCHEMA_FILE } from '../../clients/typescript/generate.js';
import { createCrossbookClient, CrossbookStream, type StreamSnapshot, type StreamUpdate, type WebSocketLike } from '../../clients/typescript/index.js';
import { startService, type Service } from '../../src/service.js';
import { simConfig, startRunning, type Running } from '../contract/service.js';

/**
 * clients/typescript against a running simulated service: the typed REST client, and the stream
 * resyncing over REST by itself after a seq gap (a proxy drops one frame) and after a restart (a
 * new epoch on the same port).
 */
let run: Running;
let restarted: Service | undefined;

beforeAll(async () => {
  run = await startRunning();
}, 60_000);

afterAll(async () => {
  if (restarted) {
    await restarted.close();
    rmSync(run.dir, { recursive: true, force: true });
  } else await run?.close();
});

const nodeSocket = (url: string, headers: Record<string, string>): WebSocketLike => new WebSocket(url, { headers });

describe('typed REST client', () => {
  it('lists markets and reads a book with the generated types, and returns the 400 body typed', async () => {
    const cb = createCrossbookClient({ baseUrl: run.url, apiKey: run.key });
    const { data, error } = await cb.GET('/markets', { params: { query: { platform: 'venue_a', limit: 5 } } });
    expect(error).toBeUndefined();
    expect(data!.markets).toHaveLength(5);
    const m = data!.markets[0]!;
    expect(m.platform).toBe('venue_a');
    const book = await cb.GET('/orderbook', { params: { query: { platform: 'venue_a', market_id: m.market_id, depth: 3 } } });
    expect(book.data!.market_id).toBe(m.market_id);
    expect(book.data!.yes.bids.length).toBeLessThanOrEqual(3);
    const bad = await cb.GET('/markets', { params: { query: { limit: 0 } } });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({ success: false, code: 'validation.invalid' });
  });

  it('is generated from the current document (npm run client:generate leaves it unchanged)', async () => {
    expect(await clientTypes(await inProcessDocument())).toBe(readFileSync(SCHEMA_FILE, 'utf8'));
  }, 60_000);
});

/**
 * A WebSocket proxy in front of the service (whose address `target()` gives at each connection, so
 * a restarted service on another port is reached the same way) that drops the live messages `drop`
 * picks.
 */
async function proxy(target: () => string, drop: (m: { type: string; snapshot?: boolean; seq: number }, text: string) => boolean = () => false) {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  server.on('connection', (down, req) => {
    const up = new WebSocket(`${target().replace(/^http/, 'ws')}/api/v2/ws`, { headers: { 'x-api-key': String(req.headers['x-api-key']) } });
    const queue: string[] = [];
    up.on('open', () => queue.splice(0).forEach((m) => up.send(m)));
    up.on('error', () => down.close());
    down.on('message', (d) => (up.readyState === WebSocket.OPEN ? up.send(d.toString()) : queue.push(d.toString())));
    up.on('message', (d) => {
      const text = d.toString();
      if (!drop(JSON.parse(text) as { type: string; seq: number }, text)) down.send(text);
    });
    down.on('close', () => up.close());
    up.on('close', () => down.close());
  });
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
}

/** A REST client whose requests go to the service `target()` names now. */
function restClient(target: () => string, key: string) {
  const first = target();
  return createCrossbookClient({
    baseUrl: first,
    apiKey: key,
    fetch: (input: string | URL | Request, init?: RequestInit) => {
      const req = input instanceof Request ? input : new Request(input, init);
      return fetch(new Request(req.url.replace(first, target()), req));
    },
  });
}

describe('WebSocket stream', () => {
  it('re-fetches a topic over REST when its seq skips one, and carries on', async () => {
    // The first live update of every market is dropped: the market's next update is a seq gap.
    const droppedSeq = new Map<string, number>();
    const px = await proxy(
      () => run.url,
      (m, text) => {
        if (m.type !== 'price_update' || m.snapshot) return false;
        const id = (JSON.parse(text) as { market_id: string }).market_id;
        if (droppedSeq.has(id)) return false;
        droppedSeq.set(id, m.seq);
        return true;
      },
    );
    const updates: StreamUpdate[] = [];
    const snapshots: StreamSnapshot[] = [];
    const stream = new CrossbookStream({
      baseUrl: px.url,
      apiKey: run.key,
      client: createCrossbookClient({ baseUrl: run.url, apiKey: run.key }),
      connect: nodeSocket,
      onUpdate: (m) => updates.push(m),
      onSnapshot: (s) => snapshots.push(s),
    });
    const ids = [...run.svc.state.catalog.venue('venue_a').values()].map((m) => `venue_a:${m.marketId}`);
    stream.subscribe('prices', ids);
    await expect.poll(() => snapshots.length, { timeout: 30_000, interval: 50 }).toBeGreaterThan(0);
    const s = snapshots[0]!;
    expect(s).toMatchObject({ reason: 'gap', channel: 'prices', source: 'venue_a' });
    const marketId = s.channel === 'prices' ? s.market_id : '';
    expect(s.channel === 'prices' && s.price?.market_id).toBe(marketId);
    // The stream is past the dropped message and keeps the topic's latest seq.
    expect(stream.seqOf(`prices:venue_a:${marketId}`)).toBeGreaterThan(droppedSeq.get(marketId)!);
    expect(updates.some((u) => u.type === 'price_update' && u.market_id === marketId && u.seq === droppedSeq.get(marketId)! + 1)).toBe(true);
    stream.close();
    px.close();
  }, 60_000);

  it('reconnects after a restart, sees the new epoch and re-fetches every topic over REST', async () => {
    let current = run.url;
    const px = await proxy(() => current);
    const snapshots: StreamSnapshot[] = [];
    const stream = new CrossbookStream({
      baseUrl: px.url,
      apiKey: run.key,
      client: restClient(() => current, run.key),
      connect: nodeSocket,
      reconnectMs: 100,
      onSnapshot: (s) => snapshots.push(s),
    });
    const ids = [...run.svc.state.quotes.all()]
      .filter((q) => q.venue === 'venue_a')
      .slice(0, 3)
      .map((q) => `venue_a:${q.marketId}`);
    stream.subscribe('prices', ids);
    stream.subscribeSignals('arb');
    await expect.poll(() => ids.every((id) => stream.seqOf(`prices:${id}`) !== undefined), { timeout: 20_000, interval: 50 }).toBe(true);
    const epoch = stream.epoch;
    // The same service restarted on its DATA_DIR (keys included): a new process epoch.
    await run.svc.close();
    restarted = await startService(simConfig(run.dir));
    current = restarted.url;
    await expect
      .poll(() => snapshots.filter((s) => s.reason === 'epoch' && s.channel === 'prices').length, { timeout: 30_000, interval: 100 })
      .toBe(ids.length);
    expect(stream.epoch).not.toBe(epoch);
    expect(stream.epoch).toBe(restarted.ws.epoch);
    const prices = snapshots.filter((s) => s.reason === 'epoch' && s.channel === 'prices');
    expect(prices.map((s) => s.topic).sort()).toEqual(ids.map((id) => `prices:${id}`).sort());
    stream.close();
    px.close();
  }, 60_000);
});
