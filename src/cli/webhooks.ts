import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { setLogLevel } from '../core/log.js';
import { Persistence } from '../persist/store.js';
import { WebhookStore, WEBHOOK_EVENTS, type WebhookEventKind } from '../webhooks/store.js';
import { checkWebhookUrl } from '../webhooks/url.js';

/** The options of `webhooks add`, as commander hands them over (strings). */
export interface AddArgs {
  readonly url?: string | undefined;
  readonly events?: string | undefined;
  readonly minRoi?: string | undefined;
  readonly platforms?: string | undefined;
}

const csv = (s: string): string[] => s.split(',').map((x) => x.trim());

/** Validates `webhooks add` options against the venue registry and the URL rules. */
export function parseAdd(
  config: Config,
  a: AddArgs,
): { ok: true; value: { url: string; events: WebhookEventKind[]; minRoi: number; platforms: string[] | undefined } } | { ok: false; message: string } {
  const slugs = config.venues.map((v) => v.slug);
  const schema = z.object({
    url: z.string({ error: '--url is required' }).superRefine((u, ctx) => {
      const c = checkWebhookUrl(u, { allowLinkLocal: config.webhooks?.allowLinkLocal ?? false });
      if (!c.ok) ctx.addIssue({ code: 'custom', message: c.reason });
    }),
    events: z
      .string({ error: `--events is required (comma-separated: ${WEBHOOK_EVENTS.join(', ')})` })
      .transform(csv)
      .pipe(z.array(z.enum(WEBHOOK_EVENTS, { error: `--events takes ${WEBHOOK_EVENTS.join(', ')}` })).min(1)),
    minRoi: z
      .string()
      .regex(/^\d+(\.\d+)?$/, '--min-roi must be a number >= 0 (net ROI percent)')
      .transform(Number)
      .optional(),
    platforms: z
      .string()
      .transform(csv)
      .pipe(z.array(z.enum(slugs as [string, ...string[]], { error: `--platforms takes ${slugs.join(', ')}` })).min(1))
      .optional(),
  });
  const r = schema.safeParse(a);
  if (!r.success) return { ok: false, message: r.error.issues[0]!.message };
  return { ok: true, value: { url: r.data.url, events: r.data.events, minRoi: r.data.minRoi ?? 0, platforms: r.data.platforms } };
}

/**
 * `crossbook webhooks …`: works beside a running server on the same DATA_DIR, as `keys` does (the
 * server re-reads the webhook table within its poll interval). `add` prints the signing secret as
 * its last line.
 */
export async function webhooksCommand(
  config: Config,
  action: 'add' | 'list' | 'remove',
  arg: AddArgs & { id?: string },
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  const parsed = action === 'add' ? parseAdd(config, arg) : undefined;
  if (parsed && !parsed.ok) {
    err(`crossbook webhooks add: ${parsed.message}`);
    return 2;
  }
  const p = new Persistence(config.dataDir);
  try {
    const store = new WebhookStore(p.db('webhooks'));
    if (parsed?.ok) {
      const r = store.add(parsed.value);
      out(
        `added ${r.id}: POST ${r.url} on ${r.events.join(',')}${r.minRoi ? ` (min ROI ${r.minRoi}%)` : ''}${r.platforms ? ` (platforms ${r.platforms.join(',')})` : ''}`,
      );
      out('deliveries carry X-Crossbook-Signature: sha256=<hex HMAC-SHA256 of the raw body>; the signing secret is shown once:');
      out(r.secret);
      return 0;
    }
    if (action === 'list') {
      const rows = store.list();
      if (rows.length === 0) out('no webhooks');
      for (const r of rows)
        out(`${r.id}  ${r.url}  events=${r.events.join(',')}  min_roi=${r.minRoi}  platforms=${r.platforms?.join(',') ?? 'all'}  created=${r.createdAt}`);
      return 0;
    }
    if (!arg.id || !store.remove(arg.id)) {
      err(`no such webhook: ${arg.id ?? '(none given)'}`);
      return 1;
    }
    out(`removed ${arg.id}`);
    return 0;
  } finally {
    await p.close();
  }
}

const out = (s: string): void => void process.stdout.write(`${s}\n`);
const err = (s: string): void => void process.stderr.write(`${s}\n`);

function configFor(o: { dataDir?: string }): Config {
  const c = loadConfig({ overrides: o.dataDir !== undefined ? { dataDir: o.dataDir } : {} });
  setLogLevel(c.logLevel);
  return c;
}

/** The `webhooks` command group of the CLI (src/cli/main.ts composes it). */
export function addWebhooks(p: Command): void {
  const w = p.command('webhooks').description('manage webhook endpoints (works while the server runs, same DATA_DIR)');
  w.command('add')
    .description('register an endpoint; prints its signing secret as the last line')
    .requiredOption('--url <url>', 'http(s) URL that receives the signed JSON POSTs')
    .requiredOption('--events <list>', `comma-separated: ${WEBHOOK_EVENTS.join(', ')}`)
    .option('--min-roi <n>', 'arb/ev only at or above this net ROI percent')
    .option('--platforms <list>', 'only events touching these venues (comma-separated slugs)')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (o: { url: string; events: string; minRoi?: string; platforms?: string; dataDir?: string }) => {
      process.exitCode = await webhooksCommand(configFor(o), 'add', o, out, err);
    });
  w.command('list')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (o: { dataDir?: string }) => {
      process.exitCode = await webhooksCommand(configFor(o), 'list', {}, out, err);
    });
  w.command('remove')
    .argument('<id>')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (id: string, o: { dataDir?: string }) => {
      process.exitCode = await webhooksCommand(configFor(o), 'remove', { id }, out, err);
    });
}
