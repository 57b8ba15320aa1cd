import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSnapshot, openLink, type ClusterLink } from '../../src/cluster/link.js';
import { decodeMessage, wsSubject } from '../../src/cluster/subjects.js';
import { startService, type Service } from '../../src/service.js';
import { checkServerMessage } from '../contract/ws.js';
import { clusterConfig, NATS_BIN, startNats, until, wsClient } from './support.js';

describe.skipIf(!NATS_BIN)('cluster: one core, two edges on nats-server', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let core: Service;
  let edge1: Service;
  let edge2: Service;
  let link: ClusterLink;
  let markets: string[];

  beforeAll(async () => {
    nats = await startNats();
    core = await startService(clusterConfig('core', nats.url));
    const cfg = clusterConfig('core', nats.url).cluster!;
    link = await openLink({ natsUrl: nats.url, stream: cfg.stream, bucket: cfg.bucket, maxAgeMs: cfg.maxAgeMs, maxMsgs: cfg.maxMsgs });
    edge1 = await startService(clusterConfig('edge', nats.url));
    edge2 = await startService(clusterConfig('edge', nats.url));
    // The catalog venue's busiest prices topic past the start-up burst, so it is published on often.
    const prefix = `prices:${core.venues.byLabel.get('venue_a')!.slug}:`;
    const sample = (): Map<string, number> => new Map(core.ws.seqs().filter(([t]) => t.startsWith(prefix)));
    const first = sample();
    await new Promise((r) => setTimeout(r, 2_000));
    const deltas = [...sample()].map(([t, n]) => [t, n - (first.get(t) ?? 0)] as const).sort((x, y) => y[1] - x[1]);
    markets = deltas.slice(0, 20).map(([t]) => t.slice(prefix.length));
  }, 60_000);

  afterAll(async () => {
    await edge2?.close();
    await edge1?.close();
    await core?.close();
    await link?.close();
    await nats?.stop();
  }, 60_000);

  it('the core publishes the hub publications with its seq and epoch, and a snapshot with its stream sequence', async () => {
    const snap = await getSnapshot(link, 10_000);
    expect(snap.epoch).toBe(core.ws.epoch);
    expect(snap.catalog.length).toBeGreaterThan(0);
    const topic = `prices:${core.venues.byLabel.get('venue_a')!.slug}:${markets[0]}`;
    const m = await link.jsm.streams.getMessage(core.config.cluster!.stream, { last_by_subj: wsSubject(topic) });
    expect(m).not.toBeNull();
    const d = decodeMessage(m!.subject, m!.data);
    expect(d.kind).toBe('ws');
    if (d.kind !== 'ws') return;
    expect(d.p.topic).toBe(topic);
    expect(d.p.body).toMatchObject({ type: 'price_update', market_id: markets[0] });
    expect(d.p.epoch).toBe(core.ws.epoch);
    expect(d.p.seq).toBeGreaterThan(0);
  });

  it('the same update reaches clients on both edges with the same seq and epoch', async () => {
    const k1 = edge1.keys.create('pro', 't').key;
    const k2 = edge2.keys.create('pro', 't').key;
    const a = await wsClient(edge1.url, k1);
    const b = await wsClient(edge2.url, k2);
    for (const c of [a, b]) c.ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: markets }));
    const streamed = (ms: Record<string, unknown>[]): Record<string, unknown>[] => ms.filter((m) => m['type'] === 'price_update' && m['snapshot'] !== true);
    const common = await until(
      () => {
        // A seq is per topic: the same update is the same market at the same seq.
        const seen = new Set(streamed(b.messages).map((m) => `${String(m['market_id'])}:${String(m['seq'])}`));
        return streamed(a.messages).find((m) => seen.has(`${String(m['market_id'])}:${String(m['seq'])}`));
      },
      30_000,
      'an update on both edges',
    );
    const other = streamed(b.messages).find((m) => m['market_id'] === common['market_id'] && m['seq'] === common['seq'])!;
    expect(other['epoch']).toBe(common['epoch']);
    expect(common['epoch']).toBe(core.ws.epoch);
    expect({ ...other, ts: 0 }).toEqual({ ...common, ts: 0 });
    // The venue frame's times travel with the core's publication.
    expect(typeof common['recv_ts']).toBe('number');
    a.ws.close();
    b.ws.close();
  });

  it('a client of an edge that dies resumes on the other with no gap', async () => {
    const a = await wsClient(edge1.url, edge1.keys.create('pro', 't').key);
    a.ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: markets }));
    const prices = (ms: Record<string, unknown>[]): Record<string, unknown>[] => ms.filter((m) => m['type'] === 'price_update');
    const streamed = (ms: Record<string, unknown>[]): number => prices(ms).filter((m) => m['snapshot'] !== true).length;
    await until(() => (streamed(a.messages) >= 10 ? true : undefined), 30_000, 'updates on edge 1');
    await edge1.close();
    await until(() => (a.ws.readyState === a.ws.CLOSED ? true : undefined), 30_000, 'edge 1 closing the client');
    const before = prices(a.messages);
    const last: Record<string, number> = {};
    for (const m of before) last[m['market_id'] as string] = m['seq'] as number;
    // Updates the client misses while it reconnects.
    const slug = edge2.venues.byLabel.get('venue_a')!.slug;
    const missed = (): number => markets.reduce((n, id) => n + Math.max(0, (new Map(edge2.ws.seqs()).get(`prices:${slug}:${id}`) ?? 0) - (last[id] ?? 0)), 0);
    await until(() => (missed() >= 5 ? true : undefined), 30_000, 'missed updates');
    const b = await wsClient(edge2.url, edge2.keys.create('pro', 't').key);
    b.ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: markets, resume: last }));
    await until(() => (streamed(b.messages) >= 10 ? true : undefined), 30_000, 'resumed updates');
    expect(b.messages.filter((m) => m['code'] === 'RESYNC')).toEqual([]);
    const after = prices(b.messages);
    expect(after.filter((m) => m['snapshot'] === true)).toEqual([]);
    let checked = 0;
    for (const id of markets) {
      const seqs = [...before, ...after].filter((m) => m['market_id'] === id).map((m) => m['seq'] as number);
      if (seqs.length < 2) continue;
      expect({ id, seqs }).toEqual({ id, seqs: Array.from({ length: seqs.length }, (_, i) => seqs[0]! + i) });
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
    expect(b.messages.flatMap((m) => checkServerMessage(m))).toEqual([]);
    b.ws.close();
  });

  it('both edges answer /markets with the same counts', async () => {
    const count = async (s: Service): Promise<unknown> => {
      const r = await fetch(`${s.url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': s.keys.create('pro', 't').key } });
      expect(r.status).toBe(200);
      return ((await r.json()) as { total_count: unknown }).total_count;
    };
    const edge3 = await startService(clusterConfig('edge', nats.url));
    try {
      // The core's count is read again at every look: the simulator's world lists and closes
      // markets on the wall clock, so a count read once can move on before the edges reach it.
      const same = (edge: Service) => async (): Promise<true | undefined> => ((await count(edge)) === (await count(core)) ? true : undefined);
      expect(await until(same(edge2), 30_000, 'edge 2 /markets')).toBe(true);
      expect(await until(same(edge3), 30_000, 'edge 3 /markets')).toBe(true);
    } finally {
      await edge3.close();
    }
  });

  it('refuses a resume that is not a map of ids to seqs with BAD_REQUEST', async () => {
    const c = await wsClient(edge2.url, edge2.keys.create('pro', 't').key);
    for (const resume of [{ [markets[0]!]: -1 }, { [markets[0]!]: 1.5 }, [1], 'x'])
      c.ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: markets.slice(0, 1), resume }));
    const errors = await until(
      () => {
        const e = c.messages.filter((m) => m['type'] === 'error');
        return e.length >= 4 ? e : undefined;
      },
      30_000,
      'four errors',
    );
    expect(errors.map((m) => m['code'])).toEqual(['BAD_REQUEST', 'BAD_REQUEST', 'BAD_REQUEST', 'BAD_REQUEST']);
    expect(c.messages.filter((m) => m['type'] === 'subscribed')).toEqual([]);
    c.ws.close();
  });

  // Last: it shrinks the stream's window for good.
  it('answers a resume the window no longer holds with the snapshot and a RESYNC warning', async () => {
    const stream = core.config.cluster!.stream;
    const info = await link.jsm.streams.info(stream);
    await link.jsm.streams.update(stream, { ...info.config, max_msgs: 1_000 });
    await until(async () => ((await link.jsm.streams.info(stream)).state.first_seq > info.state.first_seq ? true : undefined), 30_000, 'the window to move');
    const id = markets[0]!;
    const c = await wsClient(edge2.url, edge2.keys.create('pro', 't').key);
    c.ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: [id], resume: { [id]: 0 } }));
    const warning = await until(() => c.messages.find((m) => m['code'] === 'RESYNC'), 30_000, 'RESYNC');
    expect(warning).toMatchObject({ type: 'warning', channel: 'prices', market_ids: [id] });
    const snapshot = c.messages.find((m) => m['type'] === 'price_update' && m['snapshot'] === true);
    expect(snapshot).toMatchObject({ market_id: id });
    expect(c.messages.indexOf(snapshot!)).toBeLessThan(c.messages.indexOf(warning));
    expect(c.messages.flatMap((m) => checkServerMessage(m))).toEqual([]);
    // A seq no update of this epoch has reached yet (another epoch's): the snapshot and RESYNC too.
    const d = await wsClient(edge2.url, edge2.keys.create('pro', 't').key);
    d.ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: [id], resume: { [id]: 1e12 } }));
    await until(() => d.messages.find((m) => m['code'] === 'RESYNC'), 30_000, 'RESYNC past the seq');
    expect(d.messages.some((m) => m['type'] === 'price_update' && m['snapshot'] === true)).toBe(true);
    d.ws.close();
    c.ws.close();
  });
});
