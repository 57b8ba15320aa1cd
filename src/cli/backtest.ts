import { existsSync } from 'node:fs';
import { z } from 'zod';
import { backtest, type BacktestResult } from '../backtest/run.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import { readItemsFile } from '../replay/input.js';
import { captureBatches } from './replay.js';
import { parseTime } from './replay.js';

/** The options as commander hands them (strings). */
export interface BacktestCliOptions {
  readonly from?: string;
  readonly to?: string;
  readonly strategy?: string;
  readonly minRoi?: string;
  readonly platforms?: string;
  readonly latencyMs?: string;
  readonly maxUsd?: string;
  readonly fees?: string;
  readonly dataDir?: string;
  readonly input?: string;
  readonly out?: string;
}

const time = (name: string) =>
  z.string({ error: `--${name} <time> is required (ms since the epoch or ISO 8601)` }).transform((v, ctx) => {
    try {
      return parseTime(name, v);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
      return z.NEVER;
    }
  });

const num = (name: string, check: (n: number) => boolean, what: string) =>
  z.string().transform((v, ctx) => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || !check(n)) {
      ctx.addIssue({ code: 'custom', message: `--${name} ${JSON.stringify(v)}: ${what}` });
      return z.NEVER;
    }
    return n;
  });

/** The backtest's options, checked: each bad one gets a message that names it. */
const Options = z
  .object({
    from: time('from'),
    to: time('to'),
    strategy: z.enum(['arb', 'ev'], { error: '--strategy: arb or ev' }).default('arb'),
    minRoi: num('min-roi', (n) => n > -100, 'a net ROI percent (e.g. 1)').default(0),
    platforms: z
      .string()
      .transform((v) => v.split(',').map((s) => s.trim()))
      .optional(),
    latencyMs: z
      .string()
      .default('250')
      .transform((v, ctx) => {
        const list = v.split(',').map((s) => s.trim());
        const ms = list.map(Number);
        if (list.some((s, i) => !/^\d+$/.test(s) || ms[i]! > 3_600_000)) {
          ctx.addIssue({ code: 'custom', message: `--latency-ms ${JSON.stringify(v)}: comma-separated whole milliseconds from 0 to 3600000` });
          return z.NEVER;
        }
        return [...new Set(ms)].sort((a, b) => a - b);
      }),
    maxUsd: num('max-usd', (n) => n > 0 && n <= 1e9, 'a positive number of dollars').default(500),
    fees: z.enum(['venue-schedule', 'none'], { error: '--fees: venue-schedule or none' }).default('venue-schedule'),
    input: z.string().optional(),
    out: z.string().min(1).default('backtest-report'),
  })
  .refine((o) => o.from < o.to, { message: '--from must be before --to' })
  .refine((o) => o.input === undefined || existsSync(o.input), { message: '--input: no such file' });

export type BacktestRequest = z.output<typeof Options> & { readonly platformSet: ReadonlySet<string> | undefined };

/** Checks the options against the configuration; throws an Error whose message says what is wrong. */
export function backtestRequest(config: Config, o: BacktestCliOptions): BacktestRequest {
  const r = Options.safeParse(Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
  if (!r.success) throw new Error(r.error.issues.map((i) => i.message).join('; '));
  let platformSet: Set<string> | undefined;
  if (r.data.platforms) {
    platformSet = new Set();
    for (const name of r.data.platforms) {
      const v = config.venues.find((x) => x.slug === name || x.label === name);
      if (!v) throw new Error(`--platforms: unknown venue ${JSON.stringify(name)} (known: ${config.venues.map((x) => x.slug).join(', ')})`);
      platformSet.add(v.slug);
    }
  }
  return { ...r.data, platformSet };
}

/** `crossbook backtest`: the window replayed with a simulated taker inside; report.json and report.html in --out. */
export async function backtestCommand(config: Config, o: BacktestCliOptions, log: Logger): Promise<BacktestResult & { out: string }> {
  const r = backtestRequest(config, o);
  const res = await backtest({
    config,
    // From the capture log, everything before --to: the books are built from the start of the
    // capture (a window read alone would start with no books), and trading starts at --from.
    items: r.input !== undefined ? readItemsFile(r.input) : captureBatches(config, { from: 0, to: r.to }, log),
    from: r.from,
    to: r.to,
    latencies: r.latencyMs,
    strategy: r.strategy,
    maxUsd: r.maxUsd,
    minRoi: r.minRoi,
    platforms: r.platformSet,
    fees: r.fees,
    out: r.out,
    log,
  });
  return { ...res, out: r.out };
}
