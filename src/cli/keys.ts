import { KeyStore } from '../access/keys.js';
import { isPlanName, PLAN_NAMES } from '../access/plans.js';
import type { Config } from '../config/schema.js';
import { Persistence } from '../persist/store.js';

/**
 * `crossbook keys …`: works beside a running server on the same DATA_DIR (LMDB is multi-process;
 * the server re-reads the key table within a second).
 */
export async function keysCommand(
  config: Config,
  action: 'create' | 'list' | 'revoke',
  arg: { plan?: string; account?: string; key?: string },
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  if (action === 'create' && (!arg.plan || !isPlanName(arg.plan))) {
    err(`--plan must be one of ${PLAN_NAMES.join(', ')}${arg.plan ? ` (got "${arg.plan}")` : ''}`);
    return 2;
  }
  const p = new Persistence(config.dataDir);
  try {
    const keys = new KeyStore(p.db('keys'));
    switch (action) {
      case 'create': {
        const { key, record } = keys.create(arg.plan as (typeof PLAN_NAMES)[number], arg.account ?? 'default');
        out(`created ${record.id} (plan ${record.plan}, account ${record.account}); the key is shown once:`);
        out(key);
        return 0;
      }
      case 'list': {
        const rows = keys.list();
        if (rows.length === 0) out('no keys');
        for (const r of rows)
          out(`${r.id}  ${r.hint}  plan=${r.plan}  account=${r.account}  created=${r.createdAt}${r.revokedAt ? `  REVOKED ${r.revokedAt}` : ''}`);
        return 0;
      }
      case 'revoke': {
        const r = arg.key ? keys.revoke(arg.key) : undefined;
        if (!r) {
          err(`no such key: ${arg.key ?? '(none given)'}`);
          return 1;
        }
        out(`revoked ${r.id} at ${r.revokedAt}`);
        return 0;
      }
    }
  } finally {
    await p.close();
  }
}
