import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../src/service.js';
import { clusterConfig, NATS_BIN, startNats, until, wsClient, type NatsProcess } from './support.js';

interface Status {
  status: string;
  cluster?: { link: string; nats_connected: boolean; interruptions: number; rebootstraps: number; stream_seq: number };
}

async function status(s: Service): Promise<Status> {
  return (await (await fetch(`${s.url}/api/v2/status`)).json()) as Status;
}

async function metric(s: Service, name: string): Promise<number> {
  const text = await (await fetch(`${s.url}/api/v2/metrics`, { headers: { 'x-api-key': s.keys.create('enterprise', 't').key } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.split(' ')[1]);
}

describe.skipIf(!NATS_BIN)('cluster: an edge when NATS goes away and comes back', () => {
  let nats: NatsProcess;
  let core: Service;
  let edge: Service;

  beforeAll(async () => {
    nats = await startNats();
    // A small core buffer, so that an outage of a few seconds overflows it.
    core = await startService(clusterConfig('core', nats.url, { publishBuffer: 200 }));
    edge = await startService(clusterConfig('edge', nats.url));
  }, 60_000);

  afterAll(async () => {
    await edge?.close();
    await core?.close();
    await nats?.stop();
  }, 60_000);

  it('says so on /status and to subscribers, the core drops its oldest buffered messages, and the edge starts again from a snapshot', async () => {
    await until(async () => ((await status(edge)).cluster?.link === 'following' ? true : undefined), 30_000, 'the edge following');
    const slug = edge.venues.byLabel.get('venue_a')!.slug;
    const prefix = `prices:${slug}:`;
    const id = (await until(() => edge.ws.seqs().find(([t]) => t.startsWith(prefix)), 30_000, 'a prices topic'))[0].slice(prefix.length);
    const c = await wsClient(edge.url, edge.keys.create('pro', 't').key);
    await until(() => c.messages.find((m) => m['type'] === 'welcome'), 30_000, 'welcome');
    c.ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: [id] }));
    await until(() => c.messages.find((m) => m['type'] === 'subscribed'), 30_000, `subscribed (${JSON.stringify(c.messages)})`);

    await nats.kill();
    const down = await until(
      async () => {
        const s = await status(edge);
        return s.cluster?.link === 'interrupted' ? s : undefined;
      },
      30_000,
      'the edge saying interrupted',
    );
    expect(down.status).not.toBe('ok');
    const warning = await until(() => c.messages.find((m) => m['code'] === 'FEED_INTERRUPTED'), 30_000, 'FEED_INTERRUPTED');
    expect(warning).toMatchObject({ type: 'warning', source: slug });
    // REST keeps answering from the last state.
    const r = await fetch(`${edge.url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': edge.keys.create('pro', 't').key } });
    expect(r.status).toBe(200);
    // The core buffers at most 200 messages and counts what it drops.
    await until(async () => ((await metric(core, 'crossbook_cluster_dropped_total')) > 0 ? true : undefined), 20_000, 'the core dropping');
    expect(await metric(core, 'crossbook_cluster_buffered')).toBeLessThanOrEqual(200);
    expect(await metric(core, 'crossbook_cluster_nats_connected')).toBe(0);

    await nats.restart();
    let last: Status | undefined;
    const back = await until(
      async () => {
        const s = (last = await status(edge));
        return s.cluster?.link === 'following' && s.cluster.rebootstraps > 0 ? s : undefined;
      },
      30_000,
      'the edge following again after a re-bootstrap',
    ).catch((e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(last?.cluster)}`, { cause: e });
    });
    expect(back.cluster!.interruptions).toBeGreaterThan(0);
    expect(
      await until(() => c.messages.find((m) => m['type'] === 'ready' && c.messages.indexOf(m) > c.messages.indexOf(warning)), 30_000, 'FEED_READY'),
    ).toMatchObject({
      code: 'FEED_READY',
      source: slug,
    });
    expect(await metric(core, 'crossbook_cluster_nats_connected')).toBe(1);
    // New updates reach the edge again.
    const seq = back.cluster!.stream_seq;
    await until(async () => ((await status(edge)).cluster!.stream_seq > seq ? true : undefined), 30_000, 'the stream moving');
    c.ws.close();
  });
});
