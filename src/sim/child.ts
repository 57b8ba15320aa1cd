import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Config } from '../config/schema.js';
import { scriptArgs } from '../core/script.js';
import type { Logger } from '../core/log.js';
import type { FeedEndpoints } from '../venues/protocol.js';
import { isFromChild, type StartMessage } from './child-protocol.js';

/** The simulator child could not start: the message is one line, for the CLI to print as is. */
export class SimStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SimStartError';
  }
}

/** The simulator in a child process of the service (sim.process child), restarted when it dies. */
export interface SimChild {
  /** The running child's pid; undefined while it is down. */
  readonly pid: number | undefined;
  /** How many times it was restarted after dying. */
  readonly restarts: number;
  /** The venue's loopback URLs; a restarted child listens on the same ports. */
  endpoints(label: string): FeedEndpoints | undefined;
  /** SIGTERM, then SIGKILL after the grace period; resolves once the child has exited. */
  close(): Promise<void>;
}

/** Options of {@link startSimChild}. */
export interface SimChildOptions {
  readonly log: Logger;
  /** How long the world may take to build and its servers to listen (it grows with sim.scale). */
  readonly startTimeoutMs?: number;
  /** Between SIGTERM and SIGKILL on close. */
  readonly graceMs?: number;
  readonly restart?: RestartPolicyOptions;
}

/** When to restart a child that died. */
export interface RestartPolicyOptions {
  /** Delay before the first restart; doubles on each consecutive failure. */
  readonly baseMs: number;
  readonly maxMs: number;
  /** Consecutive failures after which the service gives up (its venues stay down). */
  readonly maxFailures: number;
  /** A child up this long ends a run of failures. */
  readonly stableMs: number;
}

const DEFAULT_RESTART: RestartPolicyOptions = { baseMs: 1_000, maxMs: 30_000, maxFailures: 5, stableMs: 60_000 };

/**
 * Restarts with exponential backoff, as a feed reconnects to a venue that went down, so the demo
 * keeps working after a crash or an OOM kill; a child that keeps dying (a port taken, a broken
 * build) is given up after `maxFailures` in a row instead of looping in the log forever.
 */
export class RestartPolicy {
  private failures = 0;
  private upSince: number | undefined;

  constructor(private readonly o: RestartPolicyOptions = DEFAULT_RESTART) {}

  /** The child reported ready at `now` (ms). */
  ready(now: number): void {
    this.upSince = now;
  }

  /** The child died (or a restart failed) at `now`: the delay before the next start, or undefined to give up. */
  exited(now: number): number | undefined {
    if (this.upSince !== undefined && now - this.upSince >= this.o.stableMs) this.failures = 0;
    this.upSince = undefined;
    this.failures++;
    if (this.failures > this.o.maxFailures) return undefined;
    return Math.min(this.o.maxMs, this.o.baseMs * 2 ** (this.failures - 1));
  }
}

/**
 * V8 flags of the child. Its heap is a world built once and kept (about 80 MiB at 100k markets)
 * plus short-lived documents for the catalog pages it serves; with V8's defaults the young
 * generation (16 MiB semi-spaces) and the old generation's growth after each full GC (up to
 * several times the live heap) let the child's RSS reach several times its live heap while the
 * service walks the catalogs. Small semi-spaces and a 15% growth step keep it near the live heap,
 * for more frequent, cheaper collections. No old-space cap: the world's size follows sim.scale.
 */
export const CHILD_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--heap-growing-percent=15'];

/** The child's script: the built .js beside this file, or the .ts source run through tsx (tests). */
function childCommand(): string[] {
  return scriptArgs(import.meta.url, 'child-entry');
}

interface Launched {
  readonly child: ChildProcess;
  readonly endpoints: Readonly<Record<string, FeedEndpoints>>;
}

/** Forwards each line of the child's output to the service's stderr, prefixed; keeps the last few for errors. */
function forward(child: ChildProcess, tail: string[]): void {
  for (const stream of [child.stdout, child.stderr])
    if (stream)
      createInterface({ input: stream }).on('line', (l) => {
        tail.push(l);
        if (tail.length > 5) tail.shift();
        process.stderr.write(`[sim ${child.pid}] ${l}\n`);
      });
}

/** Spawns one child and waits for its endpoints; a child that fails or exits first is killed and rejected. */
function launch(config: Config, ports: Readonly<Record<string, number>>, timeoutMs: number): Promise<Launched> {
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, ...childCommand()], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: process.env });
  const tail: string[] = [];
  forward(child, tail);
  return new Promise<Launched>((resolve, reject) => {
    const fail = (why: string): void => {
      cleanup();
      child.kill('SIGKILL');
      const last = tail.at(-1);
      reject(new SimStartError(`simulator child ${why}${last ? `: ${last}` : ''}`));
    };
    const onExit = (code: number | null, signal: string | null): void => fail(`exited during startup (${signal ?? `code ${code}`})`);
    const onError = (e: Error): void => fail(`could not be started (${e.message})`);
    const onMessage = (m: unknown): void => {
      if (!isFromChild(m)) return;
      if (m.type === 'failed') return fail(`failed to start: ${m.message}`);
      cleanup();
      resolve({ child, endpoints: m.endpoints });
    };
    const timer = setTimeout(() => fail(`did not report its endpoints within ${timeoutMs / 1000} s`), timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      child.off('exit', onExit).off('error', onError).off('message', onMessage);
    };
    child.on('exit', onExit).on('error', onError).on('message', onMessage);
    const start: StartMessage = { type: 'start', config, ports };
    child.send(start);
  });
}

/** SIGTERM, SIGKILL after `graceMs`; resolves when the child has exited. */
async function stop(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(t);
}

/** The port of each venue, from its REST URL (every simulated venue serves REST and WebSocket on one port). */
function portsOf(endpoints: Readonly<Record<string, FeedEndpoints>>): Record<string, number> {
  return Object.fromEntries(Object.entries(endpoints).map(([label, e]) => [label, Number(new URL(e.rest).port)]));
}

/**
 * Starts the simulator of `config` in a child process and resolves once it reports every venue's
 * endpoints (rejects with a one-line {@link SimStartError} otherwise). A child that dies later is
 * logged as an error and restarted on the same ports per {@link RestartPolicy}; meanwhile the
 * feeds see a venue that went down and reconnect with their backoff.
 */
export async function startSimChild(config: Config, opts: SimChildOptions): Promise<SimChild> {
  const timeoutMs = opts.startTimeoutMs ?? 300_000;
  const graceMs = opts.graceMs ?? 5_000;
  const log = opts.log.child({ component: 'sim-child' });
  const policy = new RestartPolicy(opts.restart);
  const first = await launch(config, {}, timeoutMs);
  const { endpoints } = first;
  const ports = portsOf(endpoints);
  let current: ChildProcess | undefined = first.child;
  let closing = false;
  let restarts = 0;
  let timer: NodeJS.Timeout | undefined;
  let restarting: Promise<void> | undefined;
  // A service that exits without close() (an uncaught error) takes its child along.
  const killOnExit = (): void => void current?.kill('SIGKILL');
  process.on('exit', killOnExit);

  const watch = (child: ChildProcess): void => {
    policy.ready(Date.now());
    child.once('exit', (code, signal) => {
      if (closing) return;
      current = undefined;
      log.error({ pid: child.pid, code, signal }, 'simulator child exited: its venues are down until it restarts');
      schedule();
    });
  };
  const schedule = (): void => {
    const delay = policy.exited(Date.now());
    if (delay === undefined) {
      log.error({ restarts }, 'simulator child keeps dying: not restarting it, its venues stay down');
      return;
    }
    timer = setTimeout(() => {
      restarting = restart();
    }, delay);
  };
  const restart = async (): Promise<void> => {
    try {
      const next = await launch(config, ports, timeoutMs);
      if (closing) return await stop(next.child, graceMs);
      current = next.child;
      restarts++;
      log.warn({ pid: current.pid, restarts }, 'simulator child restarted on the same ports');
      watch(current);
    } catch (e) {
      if (closing) return;
      log.error({ err: e instanceof Error ? e.message : String(e) }, 'simulator child restart failed');
      schedule();
    }
  };
  watch(first.child);

  return {
    get pid() {
      return current?.pid;
    },
    get restarts() {
      return restarts;
    },
    endpoints: (label) => endpoints[label],
    async close() {
      if (closing) return;
      closing = true;
      clearTimeout(timer);
      await restarting;
      if (current) await stop(current, graceMs);
      process.off('exit', killOnExit);
    },
  };
}
