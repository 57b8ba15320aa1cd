import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { configDir } from '../config/load.js';

const step = z.object({ clients: z.number().int().min(0).max(100_000), rest: z.number().int().min(0).max(10_000) }).strict();

export const profileSchema = z
  .object({
    description: z.string(),
    /** Simulator ticks per second (book changes across all venues). */
    ticksPerSecond: z.number().int().min(0).max(1_000_000),
    /** Markets each WebSocket client subscribes to on the prices channel. */
    subscriptions: z.number().int().min(1).max(5_000),
    /** The pool of markets (most active first) the subscriptions are drawn from. */
    markets: z.number().int().min(1).max(1_000_000),
    stepSeconds: z.number().min(1).max(600),
    steps: z.array(step).min(1).max(50),
    /** REST paths under /api/v2 walked in turn by each connection; {ids}, {platform}, {market} are filled in. */
    restPaths: z.array(z.string().startsWith('/')).min(1),
    slo: z
      .object({
        /** p99 latency bound for WebSocket delivery and REST, ms. */
        p99Ms: z.number().positive(),
        /** REST errors + non-2xx + failed WebSocket connections, as a share of attempts. */
        maxErrorRate: z.number().min(0).max(1),
      })
      .strict(),
  })
  .strict();
export type Profile = z.infer<typeof profileSchema>;

const fileSchema = z.object({ $comment: z.string().optional(), profiles: z.record(z.string().regex(/^[a-z][a-z0-9_-]*$/), profileSchema) }).strict();

export const profilesFile = (): string => resolve(configDir(), 'bench-profiles.json');

/** Loads and validates the profiles file; errors name the profile and key. */
export function loadProfiles(file = profilesFile()): Record<string, Profile> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`bench profiles ${file}: ${(e as Error).message}`);
  }
  const r = fileSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`bench profiles ${file}: ${i.path.join('.')}: ${i.message}`);
  }
  return r.data.profiles;
}

export function loadProfile(name: string, file?: string): Profile {
  const all = loadProfiles(file);
  const p = all[name];
  if (!p) throw new Error(`unknown bench profile "${name}" (have: ${Object.keys(all).join(', ')})`);
  return p;
}
