import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Matcher } from '../../src/matching/matcher.js';
import type { Override } from '../../src/matching/overrides.js';
import { startService, type Service } from '../../src/service.js';

const run = promisify(execFile);
const BIN = new URL('../../bin/crossbook.js', import.meta.url).pathname;

// Real listings (test/fixtures/matching/real-pairs.json): a Fed cut and a World Cup winner.
const FED = { platform: 'kalshi', market_id: 'KXFEDDECISION-26APR-C25', title: 'Will the Federal Reserve Cut rates by 25bps at their April 2026 meeting?' };
const FED_PM = {
  platform: 'polymarket',
  market_id: '669661',
  title: 'Will the Fed decrease interest rates by 25 bps after the April 2026 meeting?',
  event_title: 'Fed decision in April?',
};
const WC = { platform: 'polymarket', market_id: '558955', title: 'Will Ecuador win the 2026 FIFA World Cup?', event_title: '2026 FIFA World Cup Winner' };

function override(a: string, b: string, action: Override['action'], inverted = false): Override {
  return { a, b, action, inverted, at: '2026-11-24T00:00:00.000Z' };
}

describe('operator overrides in the matcher', () => {
  it('links two listings the propositions keep apart, with `override` as the reason, and inverted on request', () => {
    const m = new Matcher();
    m.upsert({ ...FED, key: 'k' });
    m.upsert({ ...WC, key: 'w' });
    expect(m.groupOf('k')!.group_id).not.toBe(m.groupOf('w')!.group_id);
    m.setOverrides([override('k', 'w', 'link', true)]);
    const g = m.groupOf('k')!;
    expect(g.group_id).toBe(m.groupOf('w')!.group_id);
    expect(g.members.map((x) => [x.key, x.reasons])).toEqual([
      ['k', ['override']],
      ['w', ['override']],
    ]);
    expect(g.members[0]!.inverted).not.toBe(g.members[1]!.inverted);
    m.setOverrides([]);
    expect(m.groupOf('k')!.group_id).not.toBe(m.groupOf('w')!.group_id);
  });

  it('unlinks a pair the propositions group, and a listing arriving later respects it', () => {
    const m = new Matcher();
    m.upsert({ ...FED, key: 'k' });
    m.upsert({ ...FED_PM, key: 'p' });
    expect(m.groupOf('k')!.group_id).toBe(m.groupOf('p')!.group_id);
    m.setOverrides([override('k', 'p', 'unlink')]);
    expect(m.groupOf('k')!.group_id).not.toBe(m.groupOf('p')!.group_id);
    const late = new Matcher();
    late.setOverrides([override('k', 'p', 'unlink')]);
    late.upsert({ ...FED, key: 'k' });
    late.upsert({ ...FED_PM, key: 'p' });
    expect(late.groupOf('k')!.group_id).not.toBe(late.groupOf('p')!.group_id);
  });
});

describe('crossbook groups against a running service (needs dist/: npx tsc -p tsconfig.json)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cb-overrides-'));
  let svc: Service | undefined;
  afterAll(async () => {
    await svc?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const cli = (...args: string[]) => run('node', [BIN, 'groups', ...args, '--data-dir', dir], { env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'error' } });

  it('link, unlink and list-overrides take effect in the running server', async () => {
    svc = await startService(
      loadConfig({ env: {}, overrides: { dataDir: dir, server: { host: '127.0.0.1', port: 0, baseUrl: null }, sim: { ticksPerSecond: 50, seed: 7 } } }),
    );
    const matching = svc.matching;
    await vi.waitFor(() => expect([...matching.served()].length).toBeGreaterThan(5), { timeout: 15_000, interval: 100 });
    // Two listings of different venues in different cross-venue groups.
    const [g1, g2] = [...matching.served()];
    const a = g1!.members[0]!.key;
    const b = g2!.members.find((m) => m.platform !== g1!.members[0]!.platform)!.key;
    const linked = await cli('link', a, b, '--inverted').catch((e: { stderr: string }) => {
      throw new Error(e.stderr);
    });
    expect(linked.stdout).toContain(`link  ${a < b ? a : b}`);
    await vi.waitFor(
      () => {
        const id = matching.groupIdOf(a.slice(0, a.indexOf(':')), a.slice(a.indexOf(':') + 1));
        const g = id === undefined ? undefined : matching.servedGroup(id);
        const ma = g?.members.find((m) => m.key === a);
        const mb = g?.members.find((m) => m.key === b);
        expect(mb?.reasons).toEqual(['override']);
        expect(ma!.inverted).not.toBe(mb!.inverted);
      },
      { timeout: 30_000, interval: 50 },
    );
    expect((await cli('list-overrides')).stdout).toMatch(/^link .* inverted=true/);
    await cli('unlink', a, b);
    await vi.waitFor(
      () => {
        const ga = matching.groupIdOf(a.slice(0, a.indexOf(':')), a.slice(a.indexOf(':') + 1));
        const gb = matching.groupIdOf(b.slice(0, b.indexOf(':')), b.slice(b.indexOf(':') + 1));
        expect(ga === undefined || ga !== gb).toBe(true);
      },
      { timeout: 30_000, interval: 50 },
    );
    expect((await cli('list-overrides')).stdout).toMatch(/^unlink /);
  });

  it('rejects a listing that is not platform:id with exit code 2', async () => {
    await expect(cli('link', 'nocolon', 'venue_a:1')).rejects.toMatchObject({ code: 2 });
  });
});
