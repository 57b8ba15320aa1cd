import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAccessBuckets } from '../../src/cluster/access.js';
import { clusterSettings, openLink } from '../../src/cluster/link.js';
import { startService, type Service } from '../../src/service.js';
import { CLOSE } from '../../src/ws/protocol.js';
import { clusterConfig, NATS_BIN, startNats, until, wsClient } from './support.js';

const run = promisify(execFile);
const BIN = new URL('../../bin/crossbook.js', import.meta.url).pathname;

/** The status of GET /markets?limit=1 with `key`, and its month headers. */
async function get(s: Service, key: string): Promise<{ status: number; remaining: string | null }> {
  const r = await fetch(`${s.url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': key } });
  await r.arrayBuffer();
  return { status: r.status, remaining: r.headers.get('x-ratelimit-remaining-month') };
}

describe.skipIf(!NATS_BIN)('cluster: keys and quotas shared by the core and two edges', () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let core: Service;
  let edge1: Service;
  let edge2: Service;

  beforeAll(async () => {
    nats = await startNats();
    core = await startService(clusterConfig('core', nats.url));
    edge1 = await startService(clusterConfig('edge', nats.url));
    edge2 = await startService(clusterConfig('edge', nats.url));
  }, 60_000);

  afterAll(async () => {
    await edge2?.close();
    await edge1?.close();
    await core?.close();
    await nats?.stop();
  }, 60_000);

  const all = (): Service[] => [core, edge1, edge2];
  const edges = (): Service[] => [edge1, edge2];
  const statusOn = async (s: Service, key: string, want: number): Promise<true | undefined> => ((await get(s, key)).status === want ? true : undefined);

  /** A key made on the core, once every edge takes it. */
  const coreKey = async (plan: 'pro' | 'dev', account: string): Promise<{ key: string; id: string }> => {
    const { key, record } = core.keys.create(plan, account);
    for (const s of edges()) await until(() => statusOn(s, key, 200), 30_000, `the new key on ${s.url}`);
    return { key, id: record.id };
  };

  /** A client of `s` as `key`, subscribed to `channels` of one venue_a market, with its close code and reason once it closes. */
  const subscribed = async (s: Service, key: string, channels: string[]) => {
    const c = await wsClient(s.url, key);
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      c.ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    const market = [...s.state.catalog.venue('venue_a').keys()][0]!;
    for (const channel of channels) c.ws.send(JSON.stringify({ type: 'subscribe', channel, market_ids: [market] }));
    await until(() => (c.messages.filter((m) => m['type'] === 'subscribed').length === channels.length ? true : undefined), 30_000, `subscribed on ${s.url}`);
    return { ...c, closed, market, topic: (ch: string) => `${ch}:${s.venues.byLabel.get('venue_a')!.slug}:${market}` };
  };

  it('a key created on one process works on all, and revoked on an edge stops working on all', async () => {
    const { key, record } = core.keys.create('pro', 'shared');
    for (const s of all()) await until(() => statusOn(s, key, 200), 30_000, `the new key on ${s.url}`);
    expect(edge1.keys.revoke(record.id)?.revokedAt).toBeDefined();
    for (const s of all()) await until(() => statusOn(s, key, 401), 30_000, `the revocation on ${s.url}`);
    expect(core.keys.list().find((r) => r.id === record.id)?.revokedAt).toBe(edge1.keys.list().find((r) => r.id === record.id)?.revokedAt);
  });

  it('a key revoked by `crossbook keys revoke` on the core DATA_DIR stops working on every edge (needs dist/)', async () => {
    const { key, record } = edge2.keys.create('dev', 'cli');
    for (const s of all()) await until(() => statusOn(s, key, 200), 30_000, `the new key on ${s.url}`);
    const out = await run('node', [BIN, 'keys', 'revoke', record.id, '--data-dir', core.persistence.dir], {
      env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'error' },
    }).catch((e: { stderr: string }) => {
      throw new Error(e.stderr);
    });
    expect(out.stdout).toContain(`revoked ${record.id}`);
    for (const s of all()) await until(() => statusOn(s, key, 401), 30_000, `the CLI revocation on ${s.url}`);
  });

  it('requests counted on two edges add up in one monthly counter everywhere', async () => {
    const { key, record } = core.keys.create('pro', 'quota');
    for (const s of all()) await until(() => statusOn(s, key, 200), 30_000, `the new key on ${s.url}`);
    const monthly = core.plans.pro.monthly;
    // The three checks above counted one request on each process.
    for (let i = 0; i < 6; i++) expect((await get(edge1, key)).status).toBe(200);
    for (let i = 0; i < 9; i++) expect((await get(edge2, key)).status).toBe(200);
    const total = 3 + 6 + 9;
    for (const s of all())
      await until(
        () => (s.quota.used(record.id)?.count === total ? true : undefined),
        30_000,
        `${total} counted on ${s.url} (${all()
          .map((x) => x.quota.used(record.id)?.count)
          .join(',')})`,
      );
    // The next request anywhere is the cluster's 19th of the month.
    expect((await get(core, key)).remaining).toBe(String(monthly - total - 1));
  });

  it('a key revoked on the core closes its subscribed sockets on every edge with 4003 and the reason, past malformed shared entries; REST and upgrades there refuse it', async () => {
    const { key, id } = await coreKey('pro', 'revoke-live');
    const clients = await Promise.all(edges().map((s) => subscribed(s, key, ['orderbook', 'prices'])));
    // Entries no process wrote as key records (another writer's bug, a hand edit) are skipped by every watch.
    const link = await openLink(clusterSettings(core.config));
    const buckets = await openAccessBuckets(link);
    await buckets.keys.put('f'.repeat(64), new TextEncoder().encode('{"id":"nope"}'));
    await buckets.keys.put('e'.repeat(64), new TextEncoder().encode('not json'));
    await link.close();
    expect(core.keys.revoke(id)?.revokedAt).toBeDefined();
    for (const c of clients) expect(await c.closed).toEqual({ code: CLOSE.KEY_REVOKED, reason: 'API key has been revoked' });
    for (const s of edges()) {
      expect((await get(s, key)).status).toBe(401);
      await expect(wsClient(s.url, key)).rejects.toThrow(/401/);
    }
  });

  it('a key moved to a smaller plan by `crossbook keys plan` on the core keeps its sockets on every edge and loses what the plan does not include (needs dist/)', async () => {
    const { key, id } = await coreKey('pro', 'downgrade-live');
    const clients = await Promise.all(edges().map((s) => subscribed(s, key, ['orderbook', 'prices'])));
    for (const s of edges()) expect((await fetch(`${s.url}/api/v2/arb`, { headers: { 'x-api-key': key } })).status).toBe(200);
    const out = await run('node', [BIN, 'keys', 'plan', id, 'free', '--data-dir', core.persistence.dir], {
      env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'error' },
    }).catch((e: { stderr: string }) => {
      throw new Error(e.stderr);
    });
    expect(out.stdout).toContain(`${id} is on plan free`);
    for (const [i, c] of clients.entries()) {
      const warning = await until(() => c.messages.find((m) => m['code'] === 'PLAN_CHANGED'), 30_000, `PLAN_CHANGED on edge ${i + 1}`);
      expect(warning).toMatchObject({ type: 'warning', plan: 'free', dropped: [c.topic('orderbook')] });
      expect(warning['channels']).toEqual(expect.arrayContaining(['prices']));
      expect(warning['channels']).not.toContain('orderbook');
      expect(c.ws.readyState).toBe(c.ws.OPEN);
      c.ws.send(JSON.stringify({ type: 'subscribe', channel: 'orderbook', market_ids: [c.market] }));
      expect(await until(() => c.messages.find((m) => m['type'] === 'error'), 30_000, 'the refused subscribe')).toMatchObject({ code: 'NOT_ENTITLED' });
    }
    // The edges' REST refuses what free blocks, in the same turn as the trim.
    for (const s of edges()) expect((await fetch(`${s.url}/api/v2/arb`, { headers: { 'x-api-key': key } })).status).toBe(403);
    for (const c of clients) c.ws.close();
    expect(edge1.keys.list().find((r) => r.id === id)).toMatchObject({ plan: 'free' });
  });

  // Last: it stops nats-server under the others' feet.
  it("an edge cut off from NATS while a key is revoked closes the key's socket once NATS is back", async () => {
    const { key, id } = await coreKey('dev', 'revoke-outage');
    const c = await subscribed(edge1, key, ['prices']);
    await nats.stop();
    core.keys.revoke(id);
    // The edge has not heard: the socket stays open and the key works there until NATS returns.
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    expect((await get(edge1, key)).status).toBe(200);
    await nats.restart();
    expect(await c.closed).toEqual({ code: CLOSE.KEY_REVOKED, reason: 'API key has been revoked' });
    for (const s of edges()) expect((await get(s, key)).status).toBe(401);
  });
});
