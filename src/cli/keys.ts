import { KeyStore } from '../access/keys.js';
import { isPlanName, PLAN_NAMES } from '../access/plans.js';
import type { Config } from '../config/schema.js';
import { Persistence, serversOnCopies } from '../persist/store.js';

/**
 * `crossbook keys …`: works beside a running server on the same DATA_DIR (LMDB is multi-process;
 * the server re-reads the key table within a second; in a cluster every other process follows a
 * NATS round trip later). `plan` moves a key to another plan: its open WebSocket connections keep
 * what the new plan includes and drop the rest (PLAN_CHANGED). A server that serves a temporary copy of
 * DATA_DIR (it could not write it at start) does not see the change: create and revoke then say
 * so and exit 3 (plan likewise).
 */
export async function keysCommand(
  config: Config,
  action: 'create' | 'list' | 'revoke' | 'plan',
  arg: { plan?: string; account?: string; key?: string },
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  if ((action === 'create' || action === 'plan') && (!arg.plan || !isPlanName(arg.plan))) {
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
        return unreached(config.dataDir, `the new key ${record.id}`, err);
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
        return unreached(config.dataDir, `the revocation of ${r.id}`, err);
      }
      case 'plan': {
        const r = arg.key ? keys.setPlan(arg.key, arg.plan as (typeof PLAN_NAMES)[number]) : undefined;
        if (!r) {
          err(`no such key: ${arg.key ?? '(none given)'}`);
          return 1;
        }
        out(`${r.id} is on plan ${r.plan}${r.revokedAt ? ` (revoked at ${r.revokedAt})` : ''}`);
        return unreached(config.dataDir, `the plan change of ${r.id}`, err);
      }
    }
  } finally {
    await p.close();
  }
}

/** 3 and a message when a running server serves a copy of `dataDir` that `what` cannot reach; else 0. */
function unreached(dataDir: string, what: string, err: (s: string) => void): number {
  const servers = serversOnCopies(dataDir);
  if (servers.length === 0) return 0;
  for (const s of servers)
    err(
      `${what} could NOT reach the crossbook server with pid ${s.pid}: it serves a temporary copy of ${dataDir} (${s.copy}) because it could not write ${dataDir} when it started. Restart it with a DATA_DIR it can write, then the change applies.`,
    );
  return 3;
}
