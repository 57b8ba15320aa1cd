import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../src/access/keys.js';
import { keysCommand } from '../../src/cli/keys.js';
import { loadConfig } from '../../src/config/load.js';
import { Persistence } from '../../src/persist/store.js';
import { startChild, type Child } from './spawn.js';

/**
 * Issue 14 item 3: a server run as an unprivileged user on a root-owned DATA_DIR serves a
 * temporary copy; `crossbook keys revoke` as root writes the original, which that server never
 * reads. The CLI must say the revocation did not reach it (exit 3), instead of "revoked" alone.
 * Needs root and setpriv (to start the server as nobody); skipped otherwise.
 */
const isRoot = process.getuid?.() === 0;
const hasSetpriv = spawnSync('sh', ['-c', 'command -v setpriv'], { encoding: 'utf8' }).status === 0;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const stop = async (c: Child): Promise<void> => {
  if (c.child.exitCode !== null) return;
  const gone = new Promise((r) => c.child.once('exit', r));
  c.child.kill('SIGTERM');
  await gone;
};

describe('revoking a key while a server serves a read-only fallback copy', () => {
  it.skipIf(!isRoot || !hasSetpriv)(
    'the CLI says the revocation could not reach that server',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'cb-rootdir-'));
      dirs.push(dir);
      const p = new Persistence(dir);
      const { key, record } = new KeyStore(p.db('keys')).create('pro', 'revoke-test');
      await p.close();
      chmodSync(dir, 0o755);
      for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o644);

      const server = startChild(dir, ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']);
      try {
        const ready = await server.next((r) => r.ready === true);
        const get = async (): Promise<number> => (await fetch(`${ready.url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': key } })).status;
        expect(await get()).toBe(200);

        const out: string[] = [];
        const err: string[] = [];
        const config = loadConfig({ env: {}, overrides: { dataDir: dir, logLevel: 'silent' } });
        const code = await keysCommand(
          config,
          'revoke',
          { key: record.id },
          (s) => out.push(s),
          (s) => err.push(s),
        );
        expect(out.join('\n')).toMatch(new RegExp(`revoked ${record.id}`));
        expect(code).toBe(3);
        expect(err.join('\n')).toMatch(new RegExp(`could NOT reach the crossbook server with pid ${server.child.pid}`));
        expect(err.join('\n')).toContain(dir);
        // What the message warns about: the copy still accepts the key.
        expect(await get()).toBe(200);
      } finally {
        await stop(server);
      }
      // With no server on a copy any more, the CLI is back to plain success.
      const config = loadConfig({ env: {}, overrides: { dataDir: dir, logLevel: 'silent' } });
      expect(
        await keysCommand(
          config,
          'list',
          {},
          () => undefined,
          () => undefined,
        ),
      ).toBe(0);
      expect(
        await keysCommand(
          config,
          'create',
          { plan: 'dev' },
          () => undefined,
          () => undefined,
        ),
      ).toBe(0);
    },
    60_000,
  );
});
