import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ID_BASE, idKey } from '../../src/persist/keys.js';
import { Persistence } from '../../src/persist/store.js';
import { startChild, type Child } from './spawn.js';

/**
 * Issue 14 item 2: a DATA_DIR on a small tmpfs filled with `dd` while the service ingests. lmdb-js
 * overruns the heap when one of its page writes fails (src/persist/guard.ts), so the service must
 * stop writing before LMDB ever sees ENOSPC: it stays up, /status says degraded, LMDB never
 * prints a write error, writing resumes when space returns, and a restart finds the data intact.
 * Needs root (mount); skipped otherwise.
 */
const isRoot = process.getuid?.() === 0;
/** A record's key, as the store writes it (src/persist/keys.ts). */
const KEPT = idKey(ID_BASE);
const mounts: string[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const m of mounts) spawnSync('umount', ['-l', m]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const mountTmpfs = (size: string): string | undefined => {
  const d = mkdtempSync(join(tmpdir(), 'cb-tmpfs-'));
  dirs.push(d);
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', d]).status !== 0) return undefined;
  mounts.push(d);
  return d;
};

const stop = async (c: Child): Promise<number | null> => {
  if (c.child.exitCode !== null) return c.child.exitCode;
  const gone = new Promise<number | null>((r) => c.child.once('exit', (code) => r(code)));
  c.child.kill('SIGTERM');
  const t = setTimeout(() => c.child.kill('SIGKILL'), 10_000);
  const code = await gone;
  clearTimeout(t);
  return code;
};

interface PersistenceStatus {
  status: string;
  last_error: string | null;
}
const persistence = async (url: string): Promise<PersistenceStatus> =>
  ((await (await fetch(`${url}/api/v2/status`)).json()) as { persistence: PersistenceStatus }).persistence;
const until = async (what: () => Promise<boolean>, ms = 60_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('a tmpfs DATA_DIR that fills up while ingesting', () => {
  it.skipIf(!isRoot)(
    'pauses writing before LMDB sees ENOSPC, keeps serving, resumes when space returns, and restarts clean',
    async (t) => {
      const dir = mountTmpfs('20m');
      if (!dir) return t.skip('cannot mount a tmpfs here (needs CAP_SYS_ADMIN)');
      const a = startChild(dir);
      const ready = await a.next((r) => r.ready === true);
      await a.next((r) => (r.durableSeq ?? 0) > 200);
      expect((await persistence(ready.url!)).status).toBe('ok');

      // Fill the filesystem while the simulator keeps ingesting at 3000 ticks/s.
      spawnSync('dd', ['if=/dev/zero', `of=${join(dir, 'fill')}`, 'bs=1M']);
      expect(statfsSync(dir).bavail).toBe(0);
      await until(async () => (await persistence(ready.url!)).status === 'degraded');
      expect((await persistence(ready.url!)).last_error).toMatch(/writes paused/);
      // Ingest goes on into memory for a thousand trades that would each have been a write.
      const full = a.reports.at(-1)!.durableSeq!;
      await a.next((r) => (r.durableSeq ?? 0) > full + 1000, 90_000);
      expect(a.child.exitCode).toBeNull();
      expect((await fetch(`${ready.url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': ready.key! } })).status).toBe(200);

      // Space returns: writing resumes.
      rmSync(join(dir, 'fill'));
      await until(async () => (await persistence(ready.url!)).status === 'ok');
      const resumed = a.reports.at(-1)!.durableSeq!;
      await a.next((r) => (r.durableSeq ?? 0) > resumed + 200);
      expect(await stop(a)).toBe(0);
      // LMDB prints "Write error" for every page write that failed: there must be none.
      expect(a.stderr.join('')).not.toMatch(/Write error|No space left|corrupted|invalid (next )?size/);

      // A restart on the same DATA_DIR opens a sound store with what was written.
      const b = startChild(dir);
      try {
        const r = await b.next((x) => x.ready === true);
        const first = await b.next((x) => x.markets !== undefined);
        expect(first.markets).toBeGreaterThan(100);
        expect((await persistence(r.url!)).status).toBe('ok');
      } finally {
        expect(await stop(b)).toBe(0);
      }
    },
    300_000,
  );

  it.skipIf(!isRoot)('opens its store on a full disk, read-only and for writing, and leaves no opening lock behind for the next start', async (t) => {
    const dir = mountTmpfs('64m');
    if (!dir) return t.skip('cannot mount a tmpfs here (needs CAP_SYS_ADMIN)');
    const lock = join(dir, 'crossbook.mdb-opening-lock');
    const first = new Persistence(dir);
    await first.db('quotes').put(KEPT, 42);
    await first.close();
    spawnSync('dd', ['if=/dev/zero', `of=${join(dir, 'fill')}`, 'bs=64k']);
    expect(statfsSync(dir).bavail).toBe(0);

    // A check (read-only) and a start (for writing) on the full disk: the lock's note cannot be written,
    // so each opens without it, and leaves no empty lock behind (one would hold off every later open).
    const check = new Persistence(dir, undefined, { readOnly: true, openWaitMs: 1_000 });
    expect(check.db('quotes').get(KEPT)).toBe(42);
    await check.close();
    expect(existsSync(lock)).toBe(false);
    const start = new Persistence(dir, undefined, { openWaitMs: 1_000 });
    expect(start.db('quotes').get(KEPT)).toBe(42);
    // Its disk guard sees the full disk and holds its writes.
    await vi.waitFor(() => expect(start.health()).toMatchObject({ status: 'degraded', last_error: expect.stringMatching(/writes paused/) }), {
      timeout: 30_000,
      interval: 50,
    });
    await start.close();
    expect(existsSync(lock)).toBe(false);

    // Space returns: the next start opens at once (a 1 s bound: a lock left behind would fail it) and writes.
    rmSync(join(dir, 'fill'));
    const again = new Persistence(dir, undefined, { openWaitMs: 1_000 });
    await again.db('quotes').put(KEPT, 43);
    await again.close();
    const read = new Persistence(dir, undefined, { readOnly: true, openWaitMs: 1_000 });
    expect(read.db('quotes').get(KEPT)).toBe(43);
    await read.close();
  });
});
