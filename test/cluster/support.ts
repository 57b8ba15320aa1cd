import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { tempDir } from '../support/temp.js';

/** The nats-server binary (Debian package `nats-server`), or undefined when it is not installed. */
export const NATS_BIN = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find((p) => existsSync(p));
if (!NATS_BIN) console.warn('test/cluster: nats-server is not installed (apt-get install nats-server): skipping the cluster tests');

/** A free loopback port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

/** A running nats-server: its URL, and stop (SIGTERM) / kill (SIGKILL) / start again on the same port and store. */
export interface NatsProcess {
  readonly url: string;
  stop(): Promise<void>;
  kill(): Promise<void>;
  restart(): Promise<void>;
}

/**
 * nats-server -js on a free loopback port, its store in a temporary directory. The port is free when
 * looked up, and another socket can take it before nats-server binds it: then a fresh one is tried.
 */
export async function startNats(): Promise<NatsProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNatsOn(await freePort());
    } catch (e) {
      if (attempt >= 3 || !/address already in use/i.test(String(e))) throw e;
    }
  }
}

async function startNatsOn(port: number): Promise<NatsProcess> {
  const sd = tempDir('cb-nats-');
  let child: ChildProcess;
  const spawnServer = async (): Promise<void> => {
    child = spawn(NATS_BIN!, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', sd], { stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      let err = '';
      child.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('Server is ready')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`nats-server exited (${code}): ${err}`)));
    });
  };
  const end = (signal: NodeJS.Signals): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  await spawnServer();
  return { url: `nats://127.0.0.1:${port}`, stop: () => end('SIGTERM'), kill: () => end('SIGKILL'), restart: spawnServer };
}

/** A service config of `role` on NATS `url`, its own DATA_DIR, an ephemeral port; a fast snapshot. */
export function clusterConfig(role: 'core' | 'edge', url: string, cluster: Record<string, unknown> = {}): Config {
  return loadConfig({
    env: {},
    overrides: {
      dataDir: tempDir(`cb-${role}-`),
      server: { host: '127.0.0.1', port: 0, baseUrl: null },
      sim: { ticksPerSecond: 400, seed: 7 },
      ingest: { pollMs: 300 },
      cluster: { role, natsUrl: url, snapshotIntervalMs: 1_000, bootstrapTimeoutMs: 10_000, ...cluster },
    },
  });
}

/** Polls `check` until it returns a value (not undefined), or throws after `ms`. */
export async function until<T>(check: () => T | undefined | Promise<T | undefined>, ms = 10_000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A WebSocket client that keeps every message it receives. */
export async function wsClient(url: string, key: string): Promise<{ ws: WebSocket; messages: Record<string, unknown>[] }> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/api/v2/ws`, { headers: { 'x-api-key': key } });
  const messages: Record<string, unknown>[] = [];
  ws.on('message', (d: Buffer) => messages.push(JSON.parse(d.toString()) as Record<string, unknown>));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, messages };
}
