import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '../support/temp.js';
import { freePort, until } from './support.js';

const BIN = new URL('../../bin/crossbook.js', import.meta.url).pathname;

/** A `crossbook serve` child process (needs dist/): its URL and DATA_DIR, kill and start again on both. */
export interface CrossbookProcess {
  readonly role: 'core' | 'edge';
  readonly url: string;
  readonly dataDir: string;
  /** The last lines it wrote to stderr, for failure messages. */
  log(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and DATA_DIR. */
  restart(): Promise<void>;
}

/** Environment of the children: a fast snapshot and a busy simulator, nothing of this process's config. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? tmpdir(),
    LOG_LEVEL: 'warn',
    CROSSBOOK__cluster__snapshotIntervalMs: '1000',
    CROSSBOOK__cluster__bootstrapTimeoutMs: '60000',
    CROSSBOOK__sim__ticksPerSecond: '400',
    CROSSBOOK__sim__seed: '7',
    ...extra,
  };
}

/** `crossbook serve --role <role> --nats <url>` on a free port and a new DATA_DIR; resolves once it listens. */
export async function startCrossbook(role: 'core' | 'edge', natsUrl: string, env: Record<string, string> = {}): Promise<CrossbookProcess> {
  const port = await freePort();
  const dataDir = tempDir(`cb-${role}-proc-`);
  let child: ChildProcess;
  let stderr = '';
  const start = async (): Promise<void> => {
    child = spawn(process.execPath, [BIN, 'serve', '--role', role, '--nats', natsUrl, '--port', String(port), '--data-dir', dataDir], {
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4_000)));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('crossbook is running')) resolve();
      });
      child.once('exit', (code, signal) => reject(new Error(`crossbook ${role} exited (${code ?? signal}): ${stderr}`)));
    });
  };
  await start();
  return {
    role,
    url: `http://127.0.0.1:${port}`,
    dataDir,
    log: () => stderr,
    kill: (signal = 'SIGKILL') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
    restart: start,
  };
}

/** The demo key the core wrote to its DATA_DIR (shared with the edges through the keys bucket). */
export function demoKey(core: CrossbookProcess): string {
  return readFileSync(join(core.dataDir, 'demo-key'), 'utf8').trim();
}

/** An edge's link as /status shows it. */
export interface LinkStatus {
  readonly link: string;
  readonly epoch: number;
  readonly rebootstraps: number;
  readonly interruptions: number;
  readonly stream_seq: number;
}

/** GET /status: the overall status and, on an edge, its link. */
export async function statusOf(p: CrossbookProcess): Promise<{ status: string; cluster?: LinkStatus }> {
  return (await (await fetch(`${p.url}/api/v2/status`)).json()) as { status: string; cluster?: LinkStatus };
}

/** GET /markets total_count with `key`, waiting (bounded) for the key to be known there. */
export async function marketCount(p: CrossbookProcess, key: string): Promise<number> {
  return until(
    async () => {
      const r = await fetch(`${p.url}/api/v2/markets?limit=1`, { headers: { 'x-api-key': key } }).catch(() => undefined);
      if (r?.status !== 200) return undefined;
      return ((await r.json()) as { total_count: number }).total_count;
    },
    30_000,
    `/markets on ${p.role} ${p.url}`,
  );
}

/** Up to `n` market ids of the default venue, from `p`'s /markets. */
export async function marketIds(p: CrossbookProcess, key: string, n: number): Promise<string[]> {
  const r = await fetch(`${p.url}/api/v2/markets?limit=${n}`, { headers: { 'x-api-key': key } });
  return ((await r.json()) as { markets: { market_id: string; platform: string }[] }).markets.filter((m) => m.platform === 'venue_a').map((m) => m.market_id);
}

/**
 * What is wrong with the price_update sequence each market's subscriber got, in the order received:
 * within an epoch every streamed update is the one after the previous (a snapshot may only move
 * forward); a new epoch starts with a snapshot. Empty when the sequence is gap-free and has no duplicate.
 */
export function seqProblems(messages: readonly Record<string, unknown>[]): string[] {
  const last = new Map<string, { epoch: number; seq: number }>();
  const problems: string[] = [];
  for (const m of messages) {
    if (m['type'] !== 'price_update') continue;
    const id = m['market_id'] as string;
    const cur = { epoch: m['epoch'] as number, seq: m['seq'] as number };
    const snapshot = m['snapshot'] === true;
    const prev = last.get(id);
    last.set(id, cur);
    if (!prev) continue;
    if (cur.epoch !== prev.epoch) {
      if (!snapshot || cur.epoch < prev.epoch) problems.push(`${id}: epoch ${prev.epoch} -> ${cur.epoch} without a snapshot (seq ${cur.seq})`);
    } else if (snapshot ? cur.seq < prev.seq : cur.seq !== prev.seq + 1) {
      problems.push(`${id}: seq ${prev.seq} -> ${cur.seq}${snapshot ? ' (snapshot)' : ''} in epoch ${cur.epoch}`);
    }
  }
  return problems;
}

/** The last seq received per market (for `resume`). */
export function lastSeqs(messages: readonly Record<string, unknown>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of messages) if (m['type'] === 'price_update') out[m['market_id'] as string] = m['seq'] as number;
  return out;
}

/** Streamed (not snapshot) price updates. */
export function streamed(messages: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return messages.filter((m) => m['type'] === 'price_update' && m['snapshot'] !== true);
}

/** Waits (bounded) until every process answers /markets with the same total_count, and returns it. */
export async function sameCounts(procs: readonly CrossbookProcess[], key: string): Promise<number> {
  let seen: number[] = [];
  return until(
    async () => {
      seen = await Promise.all(procs.map((p) => marketCount(p, key)));
      return seen.every((n) => n === seen[0]) ? seen[0] : undefined;
    },
    60_000,
    `the same /markets count on ${procs.map((p) => p.role).join(', ')}`,
  ).catch((e: Error) => {
    throw new Error(`${e.message} (last: ${seen.join(', ')})`, { cause: e });
  });
}
