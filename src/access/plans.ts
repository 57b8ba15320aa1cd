import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { configDir, ConfigError } from '../config/load.js';

/** Monthly quota groups (spec 8), each with its own counter and headers. */
export const QUOTA_GROUPS = ['matched_markets', 'arb', 'ev', 'smart_money', 'fade_finder'] as const;
export type QuotaGroup = (typeof QUOTA_GROUPS)[number];

/** Header name fragment of each group: X-RateLimit-Limit-<Fragment>-Month. */
export const GROUP_HEADER: Readonly<Record<QuotaGroup, string>> = {
  matched_markets: 'Matched-Markets',
  arb: 'Arb',
  ev: 'Ev',
  smart_money: 'Smart-Money',
  fade_finder: 'Fade-Finder',
};

export const PLAN_NAMES = ['free', 'dev', 'pro', 'enterprise'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

const limit = z.number().int().min(0);
const plan = z
  .object({
    perSecond: limit,
    monthly: limit,
    groups: z.object(Object.fromEntries(QUOTA_GROUPS.map((g) => [g, limit])) as Record<QuotaGroup, typeof limit>).strict(),
    blocked: z.array(z.string()),
    ws: z
      .object({
        connections: limit,
        subscriptions: limit,
        channels: z.array(z.string()),
        /** WebSocket replays a key runs at once (0 = no cap of its own; the server's websocket.replayMaxConcurrent still holds). */
        replays: limit.default(1),
      })
      .strict(),
  })
  .strict();
export type Plan = z.infer<typeof plan> & { readonly name: PlanName };

const plansFile = z
  .object({ $comment: z.string().optional(), plans: z.object(Object.fromEntries(PLAN_NAMES.map((p) => [p, plan])) as Record<PlanName, typeof plan>).strict() })
  .strict();

/** Loads config/plans.json (or `path`); ConfigError names the bad key. */
export function loadPlans(path = resolve(configDir(), 'plans.json')): Readonly<Record<PlanName, Plan>> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConfigError(`cannot read plans from ${path}: ${(e as Error).message}`);
  }
  const r = plansFile.safeParse(raw);
  if (!r.success) throw new ConfigError(`invalid plans in ${path}:\n${r.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}`);
  const out = {} as Record<PlanName, Plan>;
  for (const name of PLAN_NAMES) out[name] = { ...r.data.plans[name], name };
  return out;
}

export function isPlanName(s: string): s is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(s);
}
