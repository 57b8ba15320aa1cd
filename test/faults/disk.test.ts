import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Persistence } from '../../src/persist/store.js';
import { startService } from '../../src/service.js';
import { startChild, type Child } from './spawn.js';

/**
 * Disk faults (issue 8): a DATA_DIR that fills up while the service runs, and one that is
 * read-only at start. Either way the service keeps serving from memory, says so on /status, and
 * leaves the data on disk readable.
 */
const dirs: string[] = [];
const mounts: string[] = [];
const tmp = (name: string): string => {
  const d = mkdtempSync(join(tmpdir(), name));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const m of mounts) spawnSync('umount', [m]);
  for (const d of dirs) {
    spawnSync('chmod', ['-R', 'u+w', d]);
    rmSync(d, { recursive: true, force: true });
  }
});

const hasPrlimit = spawnSync('sh', ['-c', 'command -v prlimit'], { encoding: 'utf8' }).status === 0;
const stop = async (c: Child): Promise<void> => {
  if (c.child.exitCode !== null) return;
  const gone = new Promise((r) => c.child.once('exit', r));
  c.child.kill('SIGTERM');
  const t = setTimeout(() => c.child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(t);
};
const sizeOf = (d: string): number => statSync(join(d, 'crossbook.mdb')).size;
/** Every file under `d` (the capture log is a directory of its own), names and bytes. */
const hashDir = (d: string, h = createHash('sha256')): string => {
  for (const f of readdirSync(d).sort()) {
    if (f.endsWith('-lock')) continue;
    const p = join(d, f);
    if (statSync(p).isDirectory()) hashDir(p, h.update(`${f}/`));
    else h.update(f).update(readFileSync(p));
  }
  return h.copy().digest('hex');
};

interface PersistenceStatus {
  status: string;
  writable: boolean;
  write_errors: number;
  last_error: string | null;
}

describe('a full disk while ingesting', () => {
  it.skipIf(!hasPrlimit)(
    'keeps serving from memory, reports it on /status, and restarts on a readable LMDB',
    async () => {
      const dir = tmp('cb-full-');
      // A first run sizes the store; the second may grow it by only 256 KB (RLIMIT_FSIZE: writes past
      // it fail with EFBIG, as on a full disk).
      const a = startChild(dir);
      await a.next((r) => r.ready === true);
      await a.next((r) => (r.durableSeq ?? 0) > 50);
      await stop(a);
      const limit = sizeOf(dir) + 256 * 1024;
      const b = startChild(dir, ['prlimit', `--fsize=${limit}`]);
      try {
        const ready = await b.next((r) => r.ready === true);
        await b.next((r) => (r.writeErrors ?? 0) > 0);
        expect(b.child.exitCode).toBeNull();
        const s = (await (await fetch(`${ready.url}/api/v2/status`)).json()) as { persistence: PersistenceStatus };
        expect(s.persistence.status).toBe('degraded');
        expect(s.persistence.writable).toBe(true);
        expect(s.persistence.write_errors).toBeGreaterThan(0);
        expect(s.persistence.last_error).toBeTruthy();
        const markets = await fetch(`${ready.url}/api/v2/markets?limit=5`, { headers: { 'x-api-key': ready.key! } });
        expect(markets.status).toBe(200);
        // live data still flows to WebSocket clients
        const ids = ((await markets.json()) as { markets: { platform: string; market_id: string }[] }).markets.map((m) => `${m.platform}:${m.market_id}`);
        const ws = new WebSocket(`${ready.url!.replace('http', 'ws')}/api/v2/ws?api_key=${ready.key}`);
        const got = new Promise<unknown>((resolve, reject) => {
          ws.on('message', (d) => {
            const m = JSON.parse(d.toString()) as { type: string };
            if (m.type === 'price_update') resolve(m);
          });
          ws.on('error', reject);
        });
        await new Promise((r) => ws.once('open', r));
        ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: ids }));
        await got;
        ws.close();
        const before = b.reports.at(-1)!.durableSeq!;
        await b.next((r) => (r.durableSeq ?? 0) > before); // ingest goes on
        expect(sizeOf(dir)).toBeLessThanOrEqual(limit);
      } finally {
        await stop(b);
      }
      // Without the limit: the same DATA_DIR opens (the failed transactions were rolled back) and serves.
      const c = startChild(dir);
      try {
        const ready = await c.next((r) => r.ready === true);
        const first = await c.next((r) => r.markets !== undefined);
        expect(first.markets).toBeGreaterThan(100);
        const s = (await (await fetch(`${ready.url}/api/v2/status`)).json()) as { persistence: PersistenceStatus };
        expect(s.persistence).toMatchObject({ status: 'ok', writable: true, write_errors: 0 });
        expect((await fetch(`${ready.url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': ready.key! } })).status).toBe(200);
      } finally {
        await stop(c);
      }
    },
    // Three starts of the service and a store grown to its limit: 93–108 s at load 12–17 here, so the guard is 240 s.
    240_000,
  );
});

/**
 * A read-only DATA_DIR: chmod when not root; as root (permissions do not bind) a read-only tmpfs
 * mount when the kernel allows it.
 */
function makeReadOnly(src: string): string | undefined {
  if (process.getuid?.() !== 0) {
    for (const f of readdirSync(src)) chmodSync(join(src, f), 0o444);
    chmodSync(src, 0o555);
    return src;
  }
  const m = tmp('cb-ro-mnt-');
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256m', 'tmpfs', m]).status !== 0) return undefined;
  mounts.push(m);
  cpSync(src, m, { recursive: true });
  if (spawnSync('mount', ['-o', 'remount,ro', m]).status !== 0) return undefined;
  return m;
}

describe('a read-only DATA_DIR at start', () => {
  it('serves what it holds from a temporary copy, says so, and never writes to it', async (t) => {
    const src = tmp('cb-ro-');
    const cfg = (dataDir: string) =>
      loadConfig({
        env: {},
        overrides: { dataDir, logLevel: 'silent', server: { host: '127.0.0.1', port: 0, baseUrl: null }, sim: { ticksPerSecond: 200, seed: 5 } },
      });
    const first = await startService(cfg(src));
    const { key } = first.keys.create('pro', 'ro-test');
    // Some ingest to restore: markets listed on every venue that lists them.
    await vi.waitFor(() => expect(first.state.catalog.size).toBeGreaterThan(100), { timeout: 30_000, interval: 50 });
    const markets = first.state.catalog.size;
    await first.close();
    const dir = makeReadOnly(src);
    if (!dir) return t.skip('running as root without permission to mount a read-only tmpfs');
    const before = hashDir(dir);

    const svc = await startService(cfg(dir));
    try {
      const copied = hashDir(svc.persistence.dir);
      expect(svc.persistence.fallback?.dataDir).toBe(dir);
      expect(svc.persistence.dir).not.toBe(dir);
      expect(svc.restored.markets).toBe(markets);
      const s = (await (await fetch(`${svc.url}/api/v2/status`)).json()) as { persistence: PersistenceStatus };
      expect(s.persistence.status).toBe('degraded');
      expect(s.persistence.writable).toBe(false);
      expect(s.persistence.last_error).toMatch(/is not writable \((EACCES|EROFS|EPERM)/);
      // keys made before still work; the demo key was restored from the copy
      expect((await fetch(`${svc.url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': key } })).status).toBe(200);
      expect((await fetch(`${svc.url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': svc.demoKey! } })).status).toBe(200);
      // The service writes while it runs (to its copy): only then does "never writes to DATA_DIR" say something.
      await vi.waitFor(() => expect(hashDir(svc.persistence.dir)).not.toBe(copied), { timeout: 30_000, interval: 100 });
    } finally {
      await svc.close();
    }
    expect(existsSync(svc.persistence.dir)).toBe(false); // the temporary copy is gone
    expect(hashDir(dir)).toBe(before);
  }, 60_000);

  it('fails start with a clear error when DATA_DIR holds something that is not ours', async () => {
    const dir = tmp('cb-bad-');
    mkdirSync(join(dir, 'x'));
    writeFileSync(join(dir, 'crossbook.mdb'), 'not lmdb');
    await expect(
      startService(loadConfig({ env: {}, overrides: { dataDir: dir, logLevel: 'silent', server: { host: '127.0.0.1', port: 0, baseUrl: null } } })),
    ).rejects.toThrow(/crossbook\.mdb exists without crossbook\.json/);
  });
});

describe('a DATA_DIR removed under a running store', () => {
  it('pauses writing with the reason instead of throwing from the guard, and keeps what it holds readable', async () => {
    const dir = tmp('cb-gone-');
    const p = new Persistence(dir);
    try {
      await p.db('meta').put('probe', 'kept');
      await p.flushed();
      expect(p.health().status).toBe('ok');
      rmSync(dir, { recursive: true, force: true });
      // The guard's timer calls check(); before the fix it threw ENOENT from statfs and ended the process.
      expect(() => p.guard!.check()).not.toThrow();
      const h = p.health();
      expect(h.status).toBe('degraded');
      expect(h.last_error).toMatch(/writes paused \(cannot check the room left for .*crossbook\.mdb: ENOENT/);
      // Writes are refused while paused (the store does not write into a file nobody can open again) …
      await expect(p.db('meta').put('after', 'x')).resolves.toBe(false);
      // … and what it held is still read from the open environment.
      expect(p.db('meta').get('probe')).toBe('kept');
      expect(() => p.guard!.check()).not.toThrow();
      expect(p.guard!.state.paused).toBe(true);
      // The directory made again with another file at the path (say, a second service started on
      // it): the guard neither resumes nor writes its reserve into that file.
      mkdirSync(dir);
      const other = join(dir, 'crossbook.mdb');
      writeFileSync(other, 'another store');
      expect(() => p.guard!.check()).not.toThrow();
      expect(p.guard!.state.paused).toBe(true);
      expect(readFileSync(other, 'utf8')).toBe('another store');
    } finally {
      await p.close();
    }
  });
});
