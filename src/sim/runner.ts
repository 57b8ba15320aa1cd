import type { Config } from '../config/schema.js';
import type { FeedEndpoints } from '../venues/protocol.js';
import { SIM_SERVERS } from './protocols/index.js';
import { withGarbage } from './server-kit.js';
import type { SimServer } from './types.js';
import { createWorld, type SimWorld } from './world.js';

/** A running simulator: the world and one loopback server per enabled venue. */
export interface RunningSim {
  readonly world: SimWorld;
  readonly servers: ReadonlyMap<string, SimServer>;
  endpoints(label: string): FeedEndpoints | undefined;
  close(): Promise<void>;
}

/** Options of {@link startSim}. */
export interface StartSimOptions {
  /** false: build the world without starting its ticks (tests tick it by hand). */
  readonly start?: boolean;
  /** Overrides config.sim.scale. */
  readonly scale?: number;
  /** A port per venue label, before basePort: a restarted simulator child keeps the URLs the feeds know. */
  readonly ports?: Readonly<Record<string, number>>;
}

/**
 * Starts the world and every venue's protocol server on loopback. `basePort` 0 picks free ports;
 * otherwise venue i listens on basePort + i (stable URLs for `crossbook sim` users).
 */
export async function startSim(config: Config, opts: StartSimOptions = {}): Promise<RunningSim> {
  const world = createWorld({
    seed: config.sim.seed,
    venues: config.venues,
    ticksPerSecond: config.sim.ticksPerSecond,
    scale: opts.scale ?? config.sim.scale,
    tradeLog: config.sim.tradeLog,
  });
  const servers = new Map<string, SimServer>();
  try {
    let i = 0;
    for (const v of config.venues) {
      const port = opts.ports?.[v.label] ?? (config.sim.basePort === 0 ? 0 : config.sim.basePort + i);
      i++;
      if (!v.enabled) continue;
      servers.set(v.label, withGarbage(await SIM_SERVERS[v.protocol](world, v, { host: config.sim.host, port })));
    }
  } catch (e) {
    await Promise.all([...servers.values()].map((s) => s.close()));
    throw e;
  }
  if (opts.start !== false) world.start();
  return {
    world,
    servers,
    endpoints: (label) => servers.get(label)?.endpoints,
    async close() {
      world.stop();
      await Promise.all([...servers.values()].map((s) => s.close()));
    },
  };
}
