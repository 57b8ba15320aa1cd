import { filter, interval, Subscription, type Observable } from 'rxjs';
import type { FeedEvent, FrameTimes, NormalizedEvent } from '../src/core/types.js';
import type { AlertEngine } from '../src/signals/alerts.js';
import type { SignalEngine } from '../src/signals/engine.js';
import type { Webhooks } from '../src/webhooks/webhooks.js';
import type { EngineState } from '../src/state/engine.js';
import type { WsHub } from '../src/ws/hub.js';

/**
 * The fan-out flow: state and signal changes → WebSocket topics. Quotes go to prices (and the
 * catalog venue's ticker channel, and live games), books to orderbook, trades to live games,
 * feed-health events to that venue's subscribers as warnings, group signals to arb and ev, and an
 * opportunity that closed to arb/ev as arb_expired / ev_expired (before the group's list without
 * it: the engine's tracker emits inside the recompute), and the alert engine's alerts to
 * smart_money / fade_finder. The hub serializes each message once per publish, whatever the number
 * of subscribers. Price, book and trade messages carry the times of the venue frame behind them:
 * a change fires while its event is applied, so the state's current event is that frame's when it
 * is about the same market.
 */
export function fanoutFlow(
  events$: Observable<NormalizedEvent>,
  state: EngineState,
  hub: WsHub,
  signals: SignalEngine | undefined,
  alerts?: AlertEngine,
): Subscription {
  const sub = new Subscription();
  const at = (venue: string, marketId: string): FrameTimes | undefined => {
    const ev = state.current;
    return ev !== undefined && ev.venue === venue && 'marketId' in ev && ev.marketId === marketId ? ev : undefined;
  };
  sub.add(state.quotes.changes$.subscribe((q) => hub.onQuote(q, at(q.venue, q.marketId))));
  sub.add(state.books.changes$.subscribe((b) => hub.onBook(b.venue, b.marketId, at(b.venue, b.marketId))));
  sub.add(state.trades.trades$.subscribe((t) => hub.onTrade(t)));
  sub.add(events$.pipe(filter((ev): ev is FeedEvent => ev.type === 'feed')).subscribe((ev) => hub.onFeedEvent(ev)));
  if (signals) {
    sub.add(signals.lifecycle$.pipe(filter((ev) => ev.type === 'expired')).subscribe((ev) => hub.onExpired(ev.record)));
    sub.add(signals.changes$.subscribe((g) => hub.onSignals(g)));
  }
  if (alerts) sub.add(alerts.alerts$.subscribe((a) => hub.onAlert(a)));
  return sub;
}

/**
 * The webhook flow: opportunities opened and expired, alerts and feed-health events → the webhook
 * room, which only enqueues (deliveries run on their own). The endpoint table is re-read every
 * `pollMs`, so `crossbook webhooks add/remove` beside the running server takes effect within it.
 * Unsubscribing stops deliveries and retries.
 */
export function webhookFlow(events$: Observable<NormalizedEvent>, webhooks: Webhooks, signals?: SignalEngine, alerts?: AlertEngine): Subscription {
  const sub = new Subscription();
  if (signals) sub.add(signals.lifecycle$.subscribe((ev) => webhooks.onLifecycle(ev)));
  if (alerts) sub.add(alerts.alerts$.subscribe((a) => webhooks.onAlert(a)));
  sub.add(events$.pipe(filter((ev): ev is FeedEvent => ev.type === 'feed')).subscribe((ev) => webhooks.onFeed(ev)));
  sub.add(interval(webhooks.pollMs).subscribe(() => webhooks.reload()));
  sub.add(() => webhooks.close());
  return sub;
}
