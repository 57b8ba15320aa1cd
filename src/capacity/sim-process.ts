import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CHILD_NODE_FLAGS } from '../sim/child.js';
import { cli, processSampler, type CpuRss } from './proc.js';

/** A `crossbook sim` child process: the venues on loopback in a process of their own, as real venues are. */
export interface SimProcess {
  readonly pid: number;
  /** The CROSSBOOK_CONFIG file that points a service at it (`crossbook sim --config-out`). */
  readonly configFile: string;
  /** CPU since the previous call (% of one core) and RSS now. */
  sample(): CpuRss;
  stop(): Promise<void>;
}

/**
 * Starts `crossbook sim` on free loopback ports with the simulator settings of `env` (SIM_RATE,
 * SIM_SEED, CROSSBOOK__sim__scale, …) and waits for its banner, written after every venue listens
 * and after the config file. `dir` receives the config file.
 */
export async function startSimProcess(o: { env: NodeJS.ProcessEnv; dir: string; startTimeoutMs: number }): Promise<SimProcess> {
  const configFile = join(o.dir, 'sim-config.json');
  // The same V8 settings as the service's simulator child (src/sim/child.ts), so a bench's venues
  // cost what `npm start`'s do.
  const child: ChildProcess = spawn(process.execPath, [...CHILD_NODE_FLAGS, cli(), 'sim', '--base-port', '0', '--config-out', configFile], {
    env: o.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const kill = (): void => void child.kill('SIGKILL');
  process.once('exit', kill);
  try {
    await new Promise<void>((res, rej) => {
      const t = setTimeout(() => rej(new Error(`crossbook sim did not start within ${o.startTimeoutMs / 1000} s`)), o.startTimeoutMs);
      createInterface({ input: child.stdout! }).on('line', (l) => {
        if (!l.startsWith('crossbook venue simulator')) return;
        clearTimeout(t);
        res();
      });
      child.once('exit', (c) => rej(new Error(`crossbook sim exited (${c}) before it started`)));
    });
  } catch (e) {
    kill();
    process.off('exit', kill);
    throw e;
  }
  const pid = child.pid!;
  return {
    pid,
    configFile,
    sample: processSampler(pid),
    async stop() {
      process.off('exit', kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(kill, 10_000);
      await gone;
      clearTimeout(t);
    },
  };
}
