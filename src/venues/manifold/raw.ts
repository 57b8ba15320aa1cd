import { z } from 'zod';

/**
 * Manifold API v0 (`https://api.manifold.markets/v0`), the read endpoints we use:
 *
 * - `GET /markets?limit=&before=` → `LiteMarket[]`, newest first; `before` is the id of the last
 *   market of the previous page; `limit` at most 1000.
 * - `GET /market/{id}` and `GET /slug/{slug}` → `FullMarket` (a LiteMarket plus `answers`,
 *   `description`, `groupSlugs`, …).
 *
 * Manifold has no order book: prices are the market maker's probability, a float in [0, 1]
 * (`probability` on BINARY markets, `answers[].probability` on MULTIPLE_CHOICE / FREE_RESPONSE,
 * which only the FullMarket carries). Times are ms since epoch. `pool`, `p`, `totalLiquidity` and
 * `volume` are floats in the market's token (MANA play money, or CASH on sweepstakes siblings).
 * See test/fixtures/manifold/. Older markets serve `pool` as a number or null.
 *
 * Low-rate REST: validated with zod, one market (and one answer) at a time.
 */

const probability = z.number().min(0).max(1);
const amount = z.number().nonnegative();
const ms = z.number().int().nonnegative();

/** One answer of a multi-answer market (ApiAnswer: dpm-2 and cpmm-multi-1 shapes). */
export const manifoldAnswerSchema = z.object({
  id: z.string().min(1),
  text: z.string().min(1),
  probability,
  contractId: z.string().optional(),
  createdTime: ms.optional(),
  index: z.number().int().optional(),
  number: z.number().int().optional(),
  /** cpmm-multi-1 answers resolve one by one: YES | NO | MKT | CANCEL. */
  resolution: z.string().optional(),
  resolutionTime: ms.optional(),
  resolutionProbability: probability.optional(),
  volume: amount.optional(),
  totalLiquidity: amount.optional(),
  pool: z.record(z.string(), z.number()).optional(),
});
export type ManifoldAnswer = z.infer<typeof manifoldAnswerSchema>;

/** A LiteMarket or FullMarket with its answers still unvalidated. */
export const manifoldMarketShellSchema = z.object({
  id: z.string().min(1),
  creatorId: z.string().optional(),
  creatorUsername: z.string().min(1),
  creatorName: z.string().optional(),
  createdTime: ms,
  closeTime: ms.optional(),
  question: z.string().min(1),
  slug: z.string().optional(),
  url: z.string().optional(),
  /** BINARY, MULTIPLE_CHOICE, FREE_RESPONSE, PSEUDO_NUMERIC, NUMBER, POLL, BOUNTIED_QUESTION, STONK, … */
  outcomeType: z.string().min(1),
  /** cpmm-1, cpmm-multi-1, dpm-2, none, … */
  mechanism: z.string(),
  pool: z
    .union([z.record(z.string(), z.number()), z.number()])
    .nullable()
    .optional(),
  probability: probability.optional(),
  p: z.number().optional(),
  totalLiquidity: amount.optional(),
  volume: amount,
  volume24Hours: amount.optional(),
  isResolved: z.boolean(),
  /** BINARY: YES | NO | MKT | CANCEL; multi-answer: an answer id, MKT or CANCEL. */
  resolution: z.string().nullable().optional(),
  resolutionTime: ms.optional(),
  resolutionProbability: probability.optional(),
  uniqueBettorCount: z.number().int().nonnegative().optional(),
  lastUpdatedTime: ms.optional(),
  lastBetTime: ms.optional(),
  token: z.string().optional(),
  siblingContractId: z.string().optional(),
  groupSlugs: z.array(z.string()).optional(),
  answers: z.array(z.unknown()).optional(),
});
export type ManifoldMarketShell = z.infer<typeof manifoldMarketShellSchema>;

/** A whole market as served (used over the fixtures and by the simulator). */
export const manifoldMarketSchema = manifoldMarketShellSchema.extend({ answers: z.array(manifoldAnswerSchema).optional() });
export type ManifoldMarket = z.infer<typeof manifoldMarketSchema>;

/** `GET /markets`. */
export const manifoldMarketListSchema = z.array(manifoldMarketSchema);

/** Outcome types whose prices are per answer; their LiteMarket carries no answers. */
export const MULTI_ANSWER_TYPES: ReadonlySet<string> = new Set(['MULTIPLE_CHOICE', 'FREE_RESPONSE']);

/**
 * Outcome types we know and do not list: they are not YES/NO contracts on a 0..1 price
 * (numeric ranges, polls, bounties, stonks).
 */
export const UNLISTED_TYPES: ReadonlySet<string> = new Set([
  'PSEUDO_NUMERIC',
  'NUMERIC',
  'NUMBER',
  'MULTI_NUMERIC',
  'DATE',
  'POLL',
  'BOUNTIED_QUESTION',
  'STONK',
  'QUADRATIC_FUNDING',
  'CERT',
]);
