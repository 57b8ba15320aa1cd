import { randomBytes } from 'node:crypto';
import { authenticate } from '../access/api.js';
import type { KeyRecord, KeyStore } from '../access/keys.js';
import type { Plan, PlanName } from '../access/plans.js';
import type { Clock } from '../core/clock.js';

/** What the upgrade (or an in-band login) does with presented credentials: open as a key, or refuse with a status and an error body. */
export type Admission =
  | { readonly ok: true; readonly record: KeyRecord; readonly plan: Plan }
  | { readonly ok: false; readonly status: '401 Unauthorized' | '429 Too Many Requests'; readonly code: string; readonly message: string };

/** The upgrade's message for a missing key names where a WebSocket client can put it. */
const MISSING = 'API key required: X-API-Key header, api_key or token query parameter, or {"action":"auth","api_key":"…"} as the first message';

const BAD_TOKEN: Admission = Object.freeze({
  ok: false,
  status: '401 Unauthorized',
  code: 'auth.invalid_token',
  message: 'invalid, expired or already used token: ask POST /api/v2/ws-token for a new one',
});

/**
 * Who may open a WebSocket: the access layer's key check (`authenticate`, the same as every REST
 * route's) or a short-lived token issued to a key (`WsTokens`), then the plan's cap on concurrent
 * connections per key, counted here.
 */
export class WsAuth {
  private readonly perKey = new Map<string, number>();

  constructor(
    private readonly keys: KeyStore,
    private readonly plans: Readonly<Record<PlanName, Plan>>,
    readonly tokens: WsTokens,
  ) {}

  /** Whether a connection may open with `presented` (a key), and as whom. */
  admit(presented: string | undefined): Admission {
    const who = authenticate(this.keys, this.plans, presented);
    if (!who.ok) return { ok: false, status: '401 Unauthorized', code: who.code, message: who.reason === 'missing' ? MISSING : who.message };
    return this.room(who.record, who.plan);
  }

  /** Whether `presented` is the active key of `record` (a login repeated on a connection open as it). */
  admitKeyOf(presented: string, record: KeyRecord): boolean {
    const who = authenticate(this.keys, this.plans, presented);
    return who.ok && who.record.id === record.id;
  }

  /** Whether a connection may open with a token; the token is used up only when it may. */
  admitToken(token: string): Admission {
    const record = this.tokens.peek(token);
    if (record === undefined) return BAD_TOKEN;
    const a = this.room(record, this.plans[record.plan]);
    if (a.ok) this.tokens.take(token);
    return a;
  }

  /** The plan's cap on concurrent connections of a key. */
  private room(record: KeyRecord, plan: Plan): Admission {
    const open = this.perKey.get(record.id) ?? 0;
    if (plan.ws.connections !== 0 && open >= plan.ws.connections)
      return {
        ok: false,
        status: '429 Too Many Requests',
        code: 'rate_limit.connections',
        message: `the ${plan.name} plan allows ${plan.ws.connections} concurrent WebSocket connections per key`,
      };
    return { ok: true, record, plan };
  }

  /** The plan a key's record names now. */
  planOf(record: KeyRecord): Plan {
    return this.plans[record.plan];
  }

  /** A connection of `keyId` opened. */
  opened(keyId: string): void {
    this.perKey.set(keyId, (this.perKey.get(keyId) ?? 0) + 1);
  }

  /** A connection of `keyId` closed; returns how many the key still has open. */
  closed(keyId: string): number {
    const n = (this.perKey.get(keyId) ?? 1) - 1;
    if (n <= 0) this.perKey.delete(keyId);
    else this.perKey.set(keyId, n);
    return Math.max(0, n);
  }

  /** Open connections of `keyId`. */
  open(keyId: string): number {
    return this.perKey.get(keyId) ?? 0;
  }
}

/** A token as issued: what the client puts in `?token=`, and until when it is good. */
export interface IssuedToken {
  readonly token: string;
  /** ms since epoch, on the hub's clock. */
  readonly expiresAt: number;
  /** Its lifetime (ms). */
  readonly ttlMs: number;
}

/** Tokens a key may hold unused at once; issuing one more forgets its oldest. */
export const TOKENS_PER_KEY = 20;

/**
 * Short-lived WebSocket tokens (POST /api/v2/ws-token): a browser cannot set a header on a
 * WebSocket and a key in a URL ends in logs, so a key buys a token that opens one connection
 * (`?token=`) within `ttlMs`, once. Held in memory only (a restart forgets them; a client asks
 * again), at most TOKENS_PER_KEY per key, and dropped with their key when it is revoked.
 */
export class WsTokens {
  private readonly byToken = new Map<string, { readonly record: KeyRecord; readonly expiresAt: number }>();
  /** Unused tokens of each key id, oldest first. */
  private readonly ofKey = new Map<string, string[]>();

  constructor(
    private readonly clock: Clock,
    readonly ttlMs: number,
  ) {}

  /** A new token for `record`'s key. */
  issue(record: KeyRecord): IssuedToken {
    this.prune();
    const token = `wst_${randomBytes(24).toString('base64url')}`;
    const expiresAt = this.clock.now() + this.ttlMs;
    this.byToken.set(token, { record, expiresAt });
    let list = this.ofKey.get(record.id);
    if (list === undefined) this.ofKey.set(record.id, (list = []));
    list.push(token);
    while (list.length > TOKENS_PER_KEY) this.byToken.delete(list.shift()!);
    return { token, expiresAt, ttlMs: this.ttlMs };
  }

  /** The key record a token opens a connection for, if it is good now (not used, not expired, not revoked). */
  peek(token: string): KeyRecord | undefined {
    const t = this.byToken.get(token);
    if (t === undefined) return undefined;
    if (this.clock.now() >= t.expiresAt) {
      this.forget(token, t.record.id);
      return undefined;
    }
    return t.record;
  }

  /** Uses a token up: it opens no other connection. */
  take(token: string): void {
    const t = this.byToken.get(token);
    if (t !== undefined) this.forget(token, t.record.id);
  }

  /** A key was revoked: its unused tokens open nothing. */
  revoke(keyId: string): void {
    for (const token of this.ofKey.get(keyId) ?? []) this.byToken.delete(token);
    this.ofKey.delete(keyId);
  }

  /** Unused tokens held (tests check the bounds). */
  get size(): number {
    return this.byToken.size;
  }

  private forget(token: string, keyId: string): void {
    this.byToken.delete(token);
    const list = this.ofKey.get(keyId);
    if (list === undefined) return;
    const i = list.indexOf(token);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.ofKey.delete(keyId);
  }

  /** Drops expired tokens (each key's list is oldest first, so it stops at the first good one). */
  private prune(): void {
    const now = this.clock.now();
    for (const [keyId, list] of this.ofKey) {
      while (list.length > 0 && (this.byToken.get(list[0]!)?.expiresAt ?? 0) <= now) this.byToken.delete(list.shift()!);
      if (list.length === 0) this.ofKey.delete(keyId);
    }
  }
}
