import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { log } from '../../src/core/log.js';
import { startService, type Service } from '../../src/service.js';
import { CHILD_NODE_FLAGS, SimStartError, startSimChild } from '../../src/sim/child.js';
import { startSim } from '../../src/sim/runner.js';

/**
 * The embedded simulator in a child process (sim.process child, the default): real child
 * processes, the service reaching them over loopback as it reaches a real venue.
 */
const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'cb-simchild-'));
  dirs.push(d);
  return d;
};
const config = (sim: Record<string, unknown> = {}): Config =>
  loadConfig({
    env: {},
    overrides: {
      dataDir: tmp(),
      server: { host: '127.0.0.1', port: 0, baseUrl: null },
      sim: { ticksPerSecond: 200, seed: 7, ...sim },
      ingest: { pollMs: 300 },
    },
  });
let svc: Service | undefined;

afterAll(async () => {
  await svc?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The process has exited: no such pid, or a zombie that nobody has reaped yet. */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return stat === '' || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

interface Status {
  platforms: Record<string, { feed_healthy: boolean; live_markets: number }>;
}
async function allLive(s: Service): Promise<void> {
  await vi.waitFor(
    async () => {
      const st = (await (await fetch(`${s.url}/api/v2/status`)).json()) as Status;
      expect(Object.values(st.platforms).every((p) => p.feed_healthy && p.live_markets > 0)).toBe(true);
    },
    { timeout: 30_000, interval: 200 },
  );
}

describe('the simulator as a child process of the service', () => {
  it('is the default: the service serves markets from it, and holds no world of its own', async () => {
    svc = await startService(config());
    expect(svc.sim).toBeUndefined();
    const pid = svc.simChild!.pid!;
    expect(pid).not.toBe(process.pid);
    expect(gone(pid)).toBe(false);
    await allLive(svc);
    const r = await fetch(`${svc.url}/api/v2/markets?limit=5`, { headers: { 'x-api-key': svc.demoKey! } });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { total_count: number }).total_count).toBeGreaterThan(500);
    // Its V8 runs with the child's own heap flags (small young generation, slow old-space growth).
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    for (const f of CHILD_NODE_FLAGS) expect(argv).toContain(f);
  });

  it('a child that dies is restarted on the same ports, and the feeds come back', async () => {
    const before = svc!.simChild!.pid!;
    const rest = svc!.simChild!.endpoints('venue_a')!.rest;
    process.kill(before, 'SIGKILL');
    await vi.waitFor(() => expect(svc!.simChild!.pid ?? before).not.toBe(before), { timeout: 30_000, interval: 100 });
    expect(svc!.simChild!.restarts).toBe(1);
    expect(svc!.simChild!.endpoints('venue_a')!.rest).toBe(rest);
    await allLive(svc!);
  });

  it('closing the service leaves no child', async () => {
    const pid = svc!.simChild!.pid!;
    await svc!.close();
    svc = undefined;
    expect(gone(pid)).toBe(true);
  });

  it('a SIGKILL of the service: the child notices and exits', async () => {
    const p = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'serve-child.ts'), tmp()], { stdio: ['ignore', 'pipe', 'inherit'] });
    const first = await new Promise<{ pid: number; simPid: number }>((res, rej) => {
      createInterface({ input: p.stdout! }).once('line', (l) => res(JSON.parse(l) as { pid: number; simPid: number }));
      p.once('exit', (c) => rej(new Error(`service exited (${c}) before it started`)));
    });
    expect(gone(first.simPid)).toBe(false);
    p.kill('SIGKILL');
    await vi.waitFor(() => expect(gone(first.simPid)).toBe(true), { timeout: 15_000, interval: 100 });
  });

  it('builds the same world as inline for the same seed and scale', async () => {
    const c = config({ ticksPerSecond: 0, scale: 1.5 });
    // The largest exchange-protocol venue: every listing on one /v1/events page.
    const label = 'venue_h';
    expect(c.venues.find((v) => v.label === label)!.protocol).toBe('exchange');
    const ids = async (rest: string): Promise<string[]> =>
      ((await (await fetch(`${rest}/events`)).json()) as { events: { id: string; markets: { id: string }[] }[] }).events.flatMap((e) =>
        e.markets.map((m) => `${e.id}/${m.id}`),
      );
    const child = await startSimChild(c, { log });
    const inline = await startSim(c, { start: false });
    const smaller = await startSim(config({ ticksPerSecond: 0, scale: 1 }), { start: false });
    try {
      const [a, b] = [await ids(child.endpoints(label)!.rest), await ids(inline.endpoints(label)!.rest)];
      expect(a.length).toBeGreaterThan(0);
      expect(a).toEqual(b);
      expect((await ids(smaller.endpoints(label)!.rest)).length).toBeLessThan(a.length);
    } finally {
      await Promise.all([child.close(), inline.close(), smaller.close()]);
    }
  });

  it('a child that cannot start is one clear error, and the service does not start', async () => {
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    try {
      const err = await startService(config({ basePort: port })).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SimStartError);
      const msg = (err as Error).message;
      expect(msg).toMatch(/^simulator child failed to start: .*EADDRINUSE/);
      expect(msg).not.toContain('\n');
    } finally {
      taken.close();
    }
  });
});

describe('sim.process', () => {
  it('an unknown value is a configuration error naming the choices', () => {
    expect(() => loadConfig({ env: { CROSSBOOK__sim__process: 'fork' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { CROSSBOOK__sim__process: 'fork' } })).toThrow(/sim\.process: must be "child" .* or "inline"/);
  });
});
