import { writeFileSync } from 'node:fs';
import type { FeedEndpoints } from '../venues/protocol.js';

/** A venue connection in live mode, as the registry's `connection` key holds it. */
export interface LiveConnection {
  readonly mode: 'live';
  readonly rest: string;
  readonly ws?: string;
  readonly extra?: Readonly<Record<string, string>>;
}

/** A CROSSBOOK_CONFIG document: no embedded simulator, every listed venue live at the given URLs. */
export interface ExternalSimConfig {
  readonly $comment: string;
  readonly sim: { readonly embedded: false };
  readonly venues: Readonly<Record<string, { readonly connection: LiveConnection }>>;
}

/**
 * The configuration that points a service at a running `crossbook sim`: each venue the simulator
 * serves in live mode at its loopback URLs, and `sim.embedded` false. It is the same switch a user
 * flips to point a venue at the real exchange (README: Configuration), so a service run this way
 * takes the path a deployment takes and spends no CPU on the simulator.
 */
export function externalSimConfig(endpoints: Iterable<readonly [label: string, endpoints: FeedEndpoints]>): ExternalSimConfig {
  const venues: Record<string, { connection: LiveConnection }> = {};
  for (const [label, e] of endpoints)
    venues[label] = { connection: { mode: 'live', rest: e.rest, ...(e.ws ? { ws: e.ws } : {}), ...(e.extra ? { extra: { ...e.extra } } : {}) } };
  return {
    $comment: 'Written by `crossbook sim --config-out`: use as CROSSBOOK_CONFIG to serve from this simulator (its ports change on each start).',
    sim: { embedded: false },
    venues,
  };
}

/** Writes {@link externalSimConfig} to `file`. */
export function writeExternalSimConfig(file: string, endpoints: Iterable<readonly [string, FeedEndpoints]>): void {
  writeFileSync(file, JSON.stringify(externalSimConfig(endpoints), null, 2) + '\n');
}
