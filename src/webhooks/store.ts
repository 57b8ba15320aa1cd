import { randomBytes } from 'node:crypto';
import type { Database } from 'lmdb';

/** What a webhook can be told about. */
export const WEBHOOK_EVENTS = ['arb', 'ev', 'smart_money', 'feed'] as const;
export type WebhookEventKind = (typeof WEBHOOK_EVENTS)[number];

/** A registered endpoint as stored. The secret signs deliveries, so it is kept (unlike API keys). */
export interface WebhookRecord {
  /** "wh_" + 12 hex. */
  readonly id: string;
  readonly url: string;
  readonly events: readonly WebhookEventKind[];
  /** arb/ev deliveries only at or above this net ROI percent. */
  readonly minRoi: number;
  /** Only events touching one of these venue slugs (all when absent). */
  readonly platforms?: readonly string[] | undefined;
  readonly secret: string;
  readonly createdAt: string;
}

/**
 * Webhook endpoints in LMDB, as the API keys are: `crossbook webhooks` writes them from another
 * process while the server runs, and the server re-reads the table when its `version` changes
 * (`reload`, polled by the webhook flow), so an endpoint added or removed takes effect within a poll.
 */
export class WebhookStore {
  private byId = new Map<string, WebhookRecord>();
  private seenVersion = -1;

  constructor(private readonly db: Database) {
    this.reload();
  }

  /** Registers an endpoint with a new signing secret (shown once by the CLI). */
  add(spec: { url: string; events: readonly WebhookEventKind[]; minRoi?: number; platforms?: readonly string[] | undefined }): WebhookRecord {
    const record: WebhookRecord = {
      id: `wh_${randomBytes(6).toString('hex')}`,
      url: spec.url,
      events: [...new Set(spec.events)],
      minRoi: spec.minRoi ?? 0,
      ...(spec.platforms?.length ? { platforms: [...spec.platforms] } : {}),
      secret: `whsec_${randomBytes(24).toString('base64url')}`,
      createdAt: new Date().toISOString(),
    };
    this.write(() => this.db.putSync(`w:${record.id}`, record));
    return record;
  }

  /** Removes an endpoint; false when there is none with that id. */
  remove(id: string): boolean {
    if (!this.db.get(`w:${id}`)) return false;
    this.write(() => this.db.removeSync(`w:${id}`));
    return true;
  }

  list(): WebhookRecord[] {
    return [...this.byId.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  get(id: string): WebhookRecord | undefined {
    return this.byId.get(id);
  }

  /** Bumped whenever the table was re-read with a change. */
  get version(): number {
    return this.seenVersion;
  }

  /** Re-reads the table if it changed (here or in another process). Returns whether it did. */
  reload(): boolean {
    const v = (this.db.get('version') as number | undefined) ?? 0;
    if (v === this.seenVersion) return false;
    const next = new Map<string, WebhookRecord>();
    for (const { value } of this.db.getRange({ start: 'w:', end: 'w;' })) {
      const r = value as WebhookRecord;
      next.set(r.id, r);
    }
    this.byId = next;
    this.seenVersion = v;
    return true;
  }

  private write(change: () => void): void {
    this.db.transactionSync(() => {
      change();
      this.db.putSync('version', ((this.db.get('version') as number | undefined) ?? 0) + 1);
    });
    this.reload();
  }
}
