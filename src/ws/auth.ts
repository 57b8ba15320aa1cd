import { authenticate } from '../access/api.js';
import type { KeyRecord, KeyStore } from '../access/keys.js';
import type { Plan, PlanName } from '../access/plans.js';

/** What the upgrade does with a presented key: open the connection, or answer with a status and an error body. */
export type Admission =
  | { readonly ok: true; readonly record: KeyRecord; readonly plan: Plan }
  | { readonly ok: false; readonly status: '401 Unauthorized' | '429 Too Many Requests'; readonly code: string; readonly message: string };

/** The upgrade's message for a missing key names where a WebSocket client can put it. */
const MISSING = 'API key required: X-API-Key header or api_key query parameter';

/**
 * Who may open a WebSocket: the access layer's key check (`authenticate`, the same as every REST
 * route's), then the plan's cap on concurrent connections per key, counted here.
 */
export class WsAuth {
  private readonly perKey = new Map<string, number>();

  constructor(
    private readonly keys: KeyStore,
    private readonly plans: Readonly<Record<PlanName, Plan>>,
  ) {}

  /** Whether a connection may open with `presented` (a key), and as whom. */
  admit(presented: string | undefined): Admission {
    const who = authenticate(this.keys, this.plans, presented);
    if (!who.ok) return { ok: false, status: '401 Unauthorized', code: who.code, message: who.reason === 'missing' ? MISSING : who.message };
    const plan = who.plan;
    const open = this.perKey.get(who.record.id) ?? 0;
    if (plan.ws.connections !== 0 && open >= plan.ws.connections)
      return {
        ok: false,
        status: '429 Too Many Requests',
        code: 'rate_limit.connections',
        message: `the ${plan.name} plan allows ${plan.ws.connections} concurrent WebSocket connections per key`,
      };
    return who;
  }

  /** A connection of `keyId` opened. */
  opened(keyId: string): void {
    this.perKey.set(keyId, (this.perKey.get(keyId) ?? 0) + 1);
  }

  /** A connection of `keyId` closed. */
  closed(keyId: string): void {
    const n = (this.perKey.get(keyId) ?? 1) - 1;
    if (n <= 0) this.perKey.delete(keyId);
    else this.perKey.set(keyId, n);
  }

  /** Open connections of `keyId`. */
  open(keyId: string): number {
    return this.perKey.get(keyId) ?? 0;
  }
}
