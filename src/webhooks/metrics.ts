import { Counter, Gauge, type Registry } from 'prom-client';
import type { LifecycleTracker } from '../signals/lifecycle/tracker.js';
import type { WebhookDispatcher, EndpointStats } from './dispatcher.js';

/**
 * Webhook and opportunity-lifecycle metrics on the /metrics registry, read at scrape time:
 * deliveries, failures, retries and queue overflow per webhook id, deliveries waiting, and
 * opportunities open, opened and closed.
 */
export function registerLifecycleMetrics(registry: Registry, webhooks: WebhookDispatcher, lifecycle?: LifecycleTracker): void {
  const registers = [registry];
  const perHook = (name: string, help: string, read: (s: EndpointStats) => number): void => {
    const last = new Map<string, number>();
    new Counter({
      name,
      help,
      labelNames: ['webhook'],
      registers,
      collect() {
        for (const [id, s] of webhooks.stats()) {
          const v = read(s);
          const prev = last.get(id) ?? 0;
          if (v > prev) this.inc({ webhook: id }, v - prev);
          last.set(id, v);
        }
      },
    });
  };
  perHook('crossbook_webhook_delivered_total', 'Webhook deliveries answered with a 2xx', (s) => s.delivered);
  perHook('crossbook_webhook_failed_total', 'Webhook deliveries that failed every attempt', (s) => s.failed);
  perHook('crossbook_webhook_retries_total', 'Webhook delivery retries', (s) => s.retries);
  perHook('crossbook_webhook_dropped_total', "Webhook deliveries dropped because the endpoint's queue was full", (s) => s.dropped);
  new Gauge({
    name: 'crossbook_webhook_waiting',
    help: 'Webhook deliveries waiting in the queues',
    labelNames: ['webhook'],
    registers,
    collect() {
      this.reset();
      for (const [id, s] of webhooks.stats()) this.set({ webhook: id }, s.waiting);
    },
  });
  if (!lifecycle) return;
  new Gauge({
    name: 'crossbook_opportunities_open',
    help: 'Arbitrage and EV opportunities open (tracked by the lifecycle)',
    registers,
    collect() {
      this.set(lifecycle.openCount);
    },
  });
  let lastClosed = 0;
  new Counter({
    name: 'crossbook_opportunities_closed_total',
    help: 'Arbitrage and EV opportunities closed (written to the history)',
    registers,
    collect() {
      if (lifecycle.closed > lastClosed) this.inc(lifecycle.closed - lastClosed);
      lastClosed = lifecycle.closed;
    },
  });
}
