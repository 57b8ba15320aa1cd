import { filter, Subscription, type Observable } from 'rxjs';
import type { FeedEvent, NormalizedEvent } from '../src/core/types.js';
import type { SignalEngine } from '../src/signals/engine.js';
import type { EngineState } from '../src/state/engine.js';
import type { WsHub } from '../src/ws/hub.js';

/**
 * The fan-out flow: state and signal changes → WebSocket topics. Quotes go to prices (and the
 * catalog venue's ticker channel, and live games), books to orderbook, trades to live games,
 * feed-health events to that venue's subscribers as warnings, group signals to arb and ev. The hub
 * serializes each message once per publish, whatever the number of subscribers.
 */
export function fanoutFlow(events$: Observable<NormalizedEvent>, state: EngineState, hub: WsHub, signals: SignalEngine | undefined): Subscription {
  const sub = new Subscription();
  sub.add(state.quotes.changes$.subscribe((q) => hub.onQuote(q)));
  sub.add(state.books.changes$.subscribe((b) => hub.onBook(b.venue, b.marketId)));
  sub.add(state.trades.trades$.subscribe((t) => hub.onTrade(t)));
  sub.add(events$.pipe(filter((ev): ev is FeedEvent => ev.type === 'feed')).subscribe((ev) => hub.onFeedEvent(ev)));
  if (signals) sub.add(signals.changes$.subscribe((g) => hub.onSignals(g)));
  return sub;
}
