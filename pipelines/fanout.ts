import { filter, interval, Subscription, type Observable } from 'rxjs';
import type { KeyRecord } from '../src/access/keys.js';
import type { FeedEvent, FrameTimes, NormalizedEvent } from '../src/core/types.js';
import type { AlertEngine } from '../src/signals/alerts.js';
import type { SignalEngine } from '../src/signals/engine.js';
import type { Webhooks } from '../src/webhooks/webhooks.js';
import type { EngineState } from '../src/state/engine.js';
import { HubConflation } from '../src/ws/conflate.js';
import type { WsHub } from '../src/ws/hub.js';
import { routeAlert, type FanoutTarget } from '../src/ws/route.js';
import { Turn } from '../src/pipeline/turn.js';
import { realClock, type Clock } from '../src/core/clock.js';

/**
 * The fan-out flow: state and signal changes → WebSocket topics. Quotes go to prices (and the
 * catalog venue's ticker channel, and live games), books to orderbook, trades to live games,
 * feed-health events to that venue's subscribers as warnings, group signals to arb and ev, and an
 * opportunity that closed to arb/ev as arb_expired / ev_expired (before the group's list without
 * it: the engine's tracker emits inside the recompute), and the alert engine's alerts to
 * smart_money / fade_finder (each fade alert followed by its fade_finder_update, which only
 * connections in the hosted dialect get). The hub serializes each message once per publish, whatever the number
 * of subscribers.
 *
 * Books and quotes are conflated: a change only marks its market dirty (src/ws/conflate.ts), and
 * the turn's flush (`turn`, shared with the signal flow, which flushes after this one) publishes
 * each dirty market once with its book and quote as they stand, so a burst of deltas costs one
 * orderbook_update and at most one price_update per market, at most one event-loop turn later.
 * Those messages carry the times of the latest venue frame conflated into them: a change fires
 * while its event is applied, so the state's current event is that frame's when it is about the
 * same market. Trades are events, not state: each goes out at once. A feed-health event first
 * flushes the turn, so what was applied before a disconnect or gap goes out before its warning.
 */
export function fanoutFlow(
  events$: Observable<NormalizedEvent>,
  state: EngineState,
  hub: FanoutTarget,
  signals: SignalEngine | undefined,
  alerts?: AlertEngine,
  turn: Turn = new Turn(),
): Subscription {
  const sub = new Subscription();
  const at = (venue: string, marketId: string): FrameTimes | undefined => {
    const ev = state.current;
    return ev !== undefined && ev.venue === venue && 'marketId' in ev && ev.marketId === marketId ? ev : undefined;
  };
  const dirty = new HubConflation(hub);
  // With no subscriber a quote or book change could reach (REST-only use, or nobody connected), a
  // change is not marked: its flush would have published nothing.
  const quiet = hub.quiet === undefined ? (): boolean => false : (): boolean => hub.quiet!();
  sub.add(turn.add(() => dirty.flush()));
  sub.add(() => turn.stop());
  sub.add(
    state.quotes.changes$.subscribe((q) => {
      if (quiet()) return;
      dirty.markQuote(q, at(q.venue, q.marketId));
      turn.touch();
    }),
  );
  sub.add(
    state.books.changes$.subscribe((b) => {
      if (quiet()) return;
      dirty.markBook(b.venue, b.marketId, at(b.venue, b.marketId), b.book);
      turn.touch();
    }),
  );
  sub.add(state.trades.trades$.subscribe((t) => hub.onTrade(t)));
  sub.add(
    feedEvents(events$).subscribe((ev) => {
      turn.flush();
      hub.onFeedEvent(ev);
    }),
  );
  if (signals) {
    sub.add(signals.lifecycle$.pipe(filter((ev) => ev.type === 'expired')).subscribe((ev) => hub.onExpired(ev.record)));
    sub.add(signals.changes$.subscribe((g) => hub.onSignals(g)));
  }
  // Each alert's message, and after a fade alert's the same alert as the hosted API's fade_finder_update.
  if (alerts) sub.add(alerts.alerts$.subscribe((a) => routeAlert(hub, state, a)));
  return sub;
}

const feedEvents = (events$: Observable<NormalizedEvent>): Observable<FeedEvent> => events$.pipe(filter((ev): ev is FeedEvent => ev.type === 'feed'));

/** A feed-health event flushes the turn (what was applied before it is recomputed first), where no fan-out does it. */
export function feedEventsFlush(events$: Observable<NormalizedEvent>, turn: Turn): Subscription {
  return feedEvents(events$).subscribe(() => turn.flush());
}

/**
 * The webhook flow: opportunities opened and expired, alerts and feed-health events → the webhook
 * room, which only enqueues (deliveries run on their own). The endpoint table is re-read every
 * `pollMs`, so `crossbook webhooks add/remove` beside the running server takes effect within it.
 * Unsubscribing stops deliveries and retries.
 */
export function webhookFlow(
  events$: Observable<NormalizedEvent>,
  webhooks: Webhooks,
  signals?: SignalEngine,
  alerts?: AlertEngine,
  clock: Clock = realClock,
): Subscription {
  const sub = new Subscription();
  if (signals) sub.add(signals.lifecycle$.subscribe((ev) => webhooks.onLifecycle(ev)));
  if (alerts) sub.add(alerts.alerts$.subscribe((a) => webhooks.onAlert(a)));
  sub.add(events$.pipe(filter((ev): ev is FeedEvent => ev.type === 'feed')).subscribe((ev) => webhooks.onFeed(ev)));
  sub.add(interval(webhooks.pollMs, clock.scheduler).subscribe(() => webhooks.reload()));
  sub.add(() => webhooks.close());
  return sub;
}

/**
 * The key flow: every key record that changes in the process's key table (created, revoked, or on
 * another plan; changed here, by `crossbook keys` on this DATA_DIR (KeyStore's poll), or merged from
 * a cluster's shared table by pipelines/replicate.ts) → the hub, which closes a revoked key's
 * connections and trims a downgraded key's subscriptions. Every process that serves WebSockets
 * (single, core, edge) wires it, so a revocation reaches every connection within the window README
 * gives (the poll, plus a NATS round trip on other processes).
 */
export function keyFlow(keys: { readonly changes$: Observable<KeyRecord> }, hub: Pick<WsHub, 'keyChanged'>): Subscription {
  return keys.changes$.subscribe((r) => hub.keyChanged(r));
}
