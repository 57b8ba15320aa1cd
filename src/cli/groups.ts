import type { Command } from 'commander';
import type { Config } from '../config/schema.js';
import { isListingKey, OverrideStore, type Override } from '../matching/overrides.js';
import { Persistence } from '../persist/store.js';

type Action = 'link' | 'unlink' | 'list-overrides';

function describe(o: Override): string {
  return `${o.action}  ${o.a}  ${o.b}${o.action === 'link' ? `  inverted=${o.inverted}` : ''}  at=${o.at}`;
}

/**
 * `crossbook groups …`: operator overrides of the matcher. Works beside a running server on the same
 * DATA_DIR (LMDB is multi-process); the server applies a change within a second and shows
 * `override` in the member's reasons.
 */
export async function groupsCommand(
  config: Config,
  action: Action,
  arg: { a?: string; b?: string; inverted?: boolean },
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  if (action !== 'list-overrides') {
    for (const k of [arg.a, arg.b])
      if (!k || !isListingKey(k)) {
        err(`groups ${action}: expected <platform:id> <platform:id>, got "${k ?? ''}"`);
        return 2;
      }
    if (arg.a === arg.b) {
      err(`groups ${action}: the two listings must differ`);
      return 2;
    }
  }
  const p = new Persistence(config.dataDir);
  try {
    const store = new OverrideStore(p.db('matching'));
    if (action === 'list-overrides') {
      const rows = store.list();
      if (rows.length === 0) out('no overrides');
      for (const o of rows) out(describe(o));
      return 0;
    }
    const o = action === 'link' ? store.link(arg.a!, arg.b!, arg.inverted === true) : store.unlink(arg.a!, arg.b!);
    out(describe(o));
    return 0;
  } finally {
    await p.close();
  }
}

/** Registers `groups link|unlink|list-overrides`; `config` reads the shared options (data dir). */
export function addGroups(p: Command, config: (o: { dataDir?: string }) => Config, out: (s: string) => void, err: (s: string) => void): void {
  const groups = p.command('groups').description('operator overrides of the cross-venue matcher (works while the server runs, same DATA_DIR)');
  groups
    .command('link')
    .description('put two listings in one group whatever the matcher says')
    .argument('<a>', 'platform:id')
    .argument('<b>', 'platform:id')
    .option('--inverted', "one listing's YES is the other's NO")
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (a: string, b: string, o: { inverted?: boolean; dataDir?: string }) => {
      process.exitCode = await groupsCommand(config(o), 'link', { a, b, inverted: o.inverted }, out, err);
    });
  groups
    .command('unlink')
    .description('never group two listings')
    .argument('<a>', 'platform:id')
    .argument('<b>', 'platform:id')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (a: string, b: string, o: { dataDir?: string }) => {
      process.exitCode = await groupsCommand(config(o), 'unlink', { a, b }, out, err);
    });
  groups
    .command('list-overrides')
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .action(async (o: { dataDir?: string }) => {
      process.exitCode = await groupsCommand(config(o), 'list-overrides', {}, out, err);
    });
}
