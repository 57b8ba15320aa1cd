import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../src/service.js';
import { clusterConfig, NATS_BIN, startNats, until } from './support.js';

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
  }, 30_000);

  const all = (): Service[] => [core, edge1, edge2];
  const statusOn = async (s: Service, key: string, want: number): Promise<true | undefined> => ((await get(s, key)).status === want ? true : undefined);

  it('a key created on one process works on all, and revoked on an edge stops working on all', async () => {
    const { key, record } = core.keys.create('pro', 'shared');
    for (const s of all()) await until(() => statusOn(s, key, 200), 10_000, `the new key on ${s.url}`);
    expect(edge1.keys.revoke(record.id)?.revokedAt).toBeDefined();
    for (const s of all()) await until(() => statusOn(s, key, 401), 10_000, `the revocation on ${s.url}`);
    expect(core.keys.list().find((r) => r.id === record.id)?.revokedAt).toBe(edge1.keys.list().find((r) => r.id === record.id)?.revokedAt);
  });

  it('a key revoked by `crossbook keys revoke` on the core DATA_DIR stops working on every edge (needs dist/)', async () => {
    const { key, record } = edge2.keys.create('dev', 'cli');
    for (const s of all()) await until(() => statusOn(s, key, 200), 10_000, `the new key on ${s.url}`);
    const out = await run('node', [BIN, 'keys', 'revoke', record.id, '--data-dir', core.persistence.dir], {
      env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'error' },
    }).catch((e: { stderr: string }) => {
      throw new Error(e.stderr);
    });
    expect(out.stdout).toContain(`revoked ${record.id}`);
    for (const s of all()) await until(() => statusOn(s, key, 401), 10_000, `the CLI revocation on ${s.url}`);
  });

  it('requests counted on two edges add up in one monthly counter everywhere', async () => {
    const { key, record } = core.keys.create('pro', 'quota');
    for (const s of all()) await until(() => statusOn(s, key, 200), 10_000, `the new key on ${s.url}`);
    const monthly = core.plans.pro.monthly;
    // The three checks above counted one request on each process.
    for (let i = 0; i < 6; i++) expect((await get(edge1, key)).status).toBe(200);
    for (let i = 0; i < 9; i++) expect((await get(edge2, key)).status).toBe(200);
    const total = 3 + 6 + 9;
    for (const s of all())
      await until(
        () => (s.quota.used(record.id)?.count === total ? true : undefined),
        10_000,
        `${total} counted on ${s.url} (${all()
          .map((x) => x.quota.used(record.id)?.count)
          .join(',')})`,
      );
    // The next request anywhere is the cluster's 19th of the month.
    expect((await get(core, key)).remaining).toBe(String(monthly - total - 1));
  });
});
