import type { FeedEvent } from '../core/types.js';
import type { Alert } from '../signals/alerts.js';
import type { LifecycleEvent } from '../signals/lifecycle/tracker.js';
import type { WebhookDispatcher } from './dispatcher.js';
import { alertWebhook, feedWebhook, lifecycleWebhook } from './events.js';
import type { WebhookStore } from './store.js';

/** How the webhook room names venues and markets in what it sends. */
export interface WebhookNames {
  slugOf(venueLabel: string): string | undefined;
  titleOf(venueLabel: string, marketId: string): string | null;
}

/**
 * The webhook room: the registered endpoints (LMDB, written by `crossbook webhooks` too) and the
 * dispatcher that delivers to them. Its `on*` methods turn lifecycle events, alerts and feed
 * events into webhook events; pipelines/fanout.ts calls them, and `reload` on a timer.
 */
export class Webhooks {
  constructor(
    readonly store: WebhookStore,
    readonly dispatcher: WebhookDispatcher,
    private readonly names: WebhookNames,
    /** How often `reload` should run. */
    readonly pollMs: number,
  ) {
    dispatcher.setEndpoints(store.list());
  }

  /** Re-reads the endpoint table; a change (here or from the CLI) reaches the dispatcher. */
  reload(): void {
    if (this.store.reload()) this.dispatcher.setEndpoints(this.store.list());
  }

  onLifecycle(ev: LifecycleEvent): void {
    this.dispatcher.dispatch(lifecycleWebhook(ev));
  }

  onAlert(a: Alert): void {
    const slug = this.names.slugOf(a.venue);
    const ev = slug ? alertWebhook(a, slug, this.names.titleOf(a.venue, a.marketId)) : undefined;
    if (ev) this.dispatcher.dispatch(ev);
  }

  /** Feed health changes; the routine catalog refresh is not news. */
  onFeed(ev: FeedEvent): void {
    if (ev.state === 'catalog') return;
    const slug = this.names.slugOf(ev.venue);
    if (slug) this.dispatcher.dispatch(feedWebhook(ev, slug));
  }

  close(): void {
    this.dispatcher.close();
  }
}
