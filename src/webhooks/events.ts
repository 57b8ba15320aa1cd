import type { FeedEvent } from '../core/types.js';
import { alertJson } from '../views/alert.js';
import { SMART_MONEY_TYPES, type Alert } from '../signals/alerts.js';
import { recordJson } from '../signals/lifecycle/record.js';
import type { LifecycleEvent } from '../signals/lifecycle/tracker.js';
import type { WebhookEvent } from './dispatcher.js';

/** An opportunity opened (`arb_opened` / `ev_opened`, with the opportunity) or expired (`…_expired`, with its record). */
export function lifecycleWebhook(ev: LifecycleEvent): WebhookEvent {
  if (ev.type === 'expired') {
    const r = ev.record;
    return {
      kind: ev.kind,
      type: `${ev.kind}_expired`,
      roi: r.peak_roi,
      platforms: r.platforms,
      data: { opportunity_id: r.opportunity_id, close_reason: r.close_reason, record: recordJson(r) },
    };
  }
  const o = ev.opportunity;
  return {
    kind: ev.kind,
    type: `${ev.kind}_opened`,
    roi: o.roi,
    platforms: [...new Set(o.legs.map((l) => l.platform))],
    data: { opportunity_id: ev.id, group_id: o.group_id, title: ev.title, opportunity: o },
  };
}

/** A smart-money family alert (smart_money, insider, captain_hook), in the /alerts record form; other types give undefined. */
export function alertWebhook(a: Alert, slug: string, title: string | null): WebhookEvent | undefined {
  if (!SMART_MONEY_TYPES.includes(a.type)) return undefined;
  return { kind: 'smart_money', type: a.type, platforms: [slug], data: { ...alertJson(slug, a, title) } };
}

/** A venue feed's health changed (disconnected, gap, resynced, degraded…). */
export function feedWebhook(ev: FeedEvent, slug: string): WebhookEvent {
  return {
    kind: 'feed',
    type: `feed_${ev.state}`,
    platforms: [slug],
    data: { source: slug, state: ev.state, detail: ev.detail ?? null, market_id: ev.instrument ?? null, at: new Date(ev.localTimestamp).toISOString() },
  };
}
