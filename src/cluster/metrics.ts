import { Gauge, type Registry } from 'prom-client';
import { totalCounter } from '../server/routes/metrics.js';
import type { LinkHealth } from './health.js';
import type { PublisherStats } from './publisher.js';

/** A cluster core's publisher on /metrics: messages acknowledged, failed, dropped from the full buffer, waiting. */
export function registerPublisherMetrics(registry: Registry, stats: PublisherStats): void {
  const registers = [registry];
  totalCounter(registers, 'crossbook_cluster_published_total', 'Stream messages the core published and JetStream acknowledged', () => stats.published);
  totalCounter(registers, 'crossbook_cluster_publish_failed_total', 'Stream publishes refused or unacknowledged in time', () => stats.failed);
  totalCounter(
    registers,
    'crossbook_cluster_dropped_total',
    'Stream messages dropped, oldest first, from the full buffer while NATS was away or slow',
    () => stats.dropped,
  );
  new Gauge({
    name: 'crossbook_cluster_buffered',
    help: 'Stream messages waiting in the core buffer (NATS unreachable or slow to acknowledge)',
    registers,
    collect() {
      this.set(stats.buffered);
    },
  });
  new Gauge({
    name: 'crossbook_cluster_nats_connected',
    help: '1 when NATS is reachable',
    registers,
    collect() {
      this.set(stats.connected ? 1 : 0);
    },
  });
}

/** A cluster edge's link on /metrics: interruptions, re-bootstraps, and whether it follows now. */
export function registerLinkMetrics(registry: Registry, health: LinkHealth): void {
  const registers = [registry];
  totalCounter(
    registers,
    'crossbook_cluster_interruptions_total',
    'Times the edge lost the core stream (NATS unreachable or the stream silent)',
    () => health.interruptions,
  );
  totalCounter(registers, 'crossbook_cluster_rebootstraps_total', 'Times the edge started again from a core snapshot', () => health.rebootstraps);
  new Gauge({
    name: 'crossbook_cluster_following',
    help: '1 when the edge follows the core stream',
    registers,
    collect() {
      this.set(health.status().link === 'following' ? 1 : 0);
    },
  });
}
