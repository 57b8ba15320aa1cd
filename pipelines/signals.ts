import { audit, interval, Subscription, timer } from 'rxjs';
import { realClock, type Clock } from '../src/core/clock.js';
import type { MatchingService } from '../src/matching/service.js';
import type { AlertEngine } from '../src/signals/alerts.js';
import type { SignalEngine } from '../src/signals/engine.js';
import type { OpportunityLog } from '../src/signals/lifecycle/log.js';
import type { Webhooks } from '../src/webhooks/webhooks.js';
import type { WalletLedger } from '../src/signals/wallets.js';
import type { EngineState } from '../src/state/engine.js';
import { Turn } from '../src/pipeline/turn.js';

/** How often the matcher looks for operator overrides written by `crossbook groups` (well under a second). */
export const OVERRIDES_POLL_MS = 250;

/** A burst of catalog changes is re-grouped once, at least this long after its first change. */
export const REINDEX_AFTER_MS = 20;

/**
 * And this much longer per cross-venue group held. A re-group walks every group (at 108k markets,
 * 22k groups took 3 s on this 2-core machine), and the venues' catalog refreshes change a market
 * every few ms, so a fixed 20 ms window ran re-groups back to back: the main thread never got to
 * ingest, REST or a SIGTERM, and memory climbed. Growing the window with the groups bounds the
 * share of the thread re-grouping takes. A function of the state, not of measured time, so a
 * replay re-groups exactly when live did.
 */
export const REINDEX_MS_PER_GROUP = 0.5;

/** The re-group window for `groups` held groups, whole ms (the clock's times stay integers). */
export function reindexAfterMs(groups: number): number {
  return Math.max(REINDEX_AFTER_MS, Math.ceil(groups * REINDEX_MS_PER_GROUP));
}

export interface SignalRooms {
  readonly matching: MatchingService;
  readonly signals: SignalEngine;
  /**
   * Absent: trades and settlements are not followed into wallets and alerts (a replay that
   * publishes nothing: none of what it writes reads them, and they feed nothing it does write).
   */
  readonly ledger?: WalletLedger | undefined;
  readonly alerts: AlertEngine;
  /** The closed-opportunity history, pruned past its retention here. */
  readonly history?: OpportunityLog;
  /** Webhook delivery (wired by pipelines/fanout.ts webhookFlow). */
  readonly webhooks?: Webhooks;
}

/**
 * The signal flow, in the order its effects run for one change:
 * 1. matching: a new or changed market is queued for the matcher, which indexes a slice of the
 *    queue per flush of the turn (matchingFlow); a burst of them re-groups
 *    once (`audit`, a window that grows with the groups held) and audits the settlements of groups whose members settled; changed
 *    groups are recomputed (a group the audit found suspect recomputes to no arb/EV). Quote
 *    changes of grouped markets move /status last_updated.
 * 2. arb/EV: a book change, a quote change not from a book, or a record change of a member
 *    marks its group dirty; the turn's flush recomputes each dirty group once (the engine's
 *    `changes$` carries what changed to the fan-out).
 * 3. wallets and alerts: every trade goes through the ledger, settlements realize positions; the
 *    ledger's applied trades and scored entries go to the alert engine. Its timers score entries
 *    whose horizon passed and write dirty wallets.
 * The opportunity history's retention timer runs beside them.
 */
export function signalFlow(state: EngineState, rooms: SignalRooms, turn: Turn = new Turn(), clock: Clock = realClock): Subscription {
  const sub = new Subscription();
  sub.add(matchingFlow(state, rooms.matching, rooms.signals, clock, turn));
  sub.add(arbFlow(state, rooms.signals, turn));
  if (rooms.ledger) sub.add(walletFlow(state, rooms.ledger, rooms.alerts, clock));
  if (rooms.history) sub.add(historyFlow(rooms.history, clock));
  return sub;
}

/** Closed opportunities older than the retention window leave LMDB (once at start, then every `pruneEveryMs`). */
export function historyFlow(history: OpportunityLog, clock: Clock = realClock): Subscription {
  history.prune(clock.now());
  return interval(history.pruneEveryMs, clock.scheduler).subscribe(() => history.prune(clock.now()));
}

/**
 * Catalog changes the matcher indexes per flush of the turn. A change's candidate search costs
 * ~0.1 ms at 108k markets (11.6 s for one venue's catalog document at load 17, all inside the
 * call that applied the document); this many a flush keeps a slice to a few tens of ms on an idle
 * core, and the event loop runs I/O (frames, REST, WebSocket) between slices. A count, not a time
 * budget: a replay flushes where live did and so indexes the same changes at the same flushes.
 */
export const MATCH_SLICE = 500;

/**
 * Catalog changes → the matcher and the settlement audit → changed groups recomputed (step 1 above).
 * A change is queued at once and indexed at the turn's flush, `slice` a flush (the flush touches
 * the turn again while some are left, so a large catalog is indexed over as many turns); each
 * slice indexed starts or extends a re-group window, so groups converge a window after the last.
 */
export function matchingFlow(
  state: EngineState,
  matching: MatchingService,
  signals?: SignalEngine,
  clock: Clock = realClock,
  turn: Turn = new Turn(),
  slice: number = MATCH_SLICE,
): Subscription {
  const sub = new Subscription();
  sub.add(
    turn.add(() => {
      if (matching.drain(slice) > 0) turn.touch();
    }),
  );
  sub.add(() => turn.stop());
  sub.add(
    state.catalog.changes$.subscribe((c) => {
      matching.enqueue(c.market);
      turn.touch();
    }),
  );
  sub.add(matching.indexed$.pipe(audit(() => timer(reindexAfterMs(matching.groupCount), clock.scheduler))).subscribe(() => matching.reindex()));
  sub.add(state.quotes.changes$.subscribe((q) => matching.onQuote(q)));
  // Overrides written by another process re-group at once; changed groups recompute below.
  if (matching.overrides) sub.add(interval(OVERRIDES_POLL_MS, clock.scheduler).subscribe(() => matching.reloadOverrides()));
  if (signals)
    sub.add(
      matching.changes$.subscribe((ids) => {
        for (const id of ids) signals.recompute(id);
      }),
    );
  return sub;
}

/**
 * A member's book, quote (not from a book) or record changed → its group's arb/EV (step 2 above),
 * conflated: a change marks the market's groups dirty, and the turn's flush (after the fan-out's,
 * as `turn` runs flushers in the order they were added) recomputes each dirty group once. A book
 * change that reached none of the levels its group's last recompute read (below the best, past
 * what a pair could take) only refreshes the group's time (`SignalEngine.markBook`).
 */
export function arbFlow(state: EngineState, signals: SignalEngine, turn: Turn = new Turn()): Subscription {
  const sub = new Subscription();
  const mark = (venue: string, marketId: string): void => {
    if (signals.mark(venue, marketId)) turn.touch();
  };
  sub.add(turn.add(() => signals.flush()));
  sub.add(() => turn.stop());
  sub.add(
    state.books.changes$.subscribe((b) => {
      if (signals.markBook(b.venue, b.marketId, b.book)) turn.touch();
    }),
  );
  sub.add(
    state.quotes.changes$.subscribe((q) => {
      if (!q.fromBook) mark(q.venue, q.marketId);
    }),
  );
  sub.add(state.catalog.changes$.subscribe((c) => mark(c.market.venue, c.market.marketId)));
  return sub;
}

/** Trades and settlements → the wallet ledger → alerts (step 3 above), with the ledger's timers. */
export function walletFlow(state: EngineState, ledger: WalletLedger, alerts?: AlertEngine, clock: Clock = realClock): Subscription {
  const sub = new Subscription();
  if (alerts) {
    sub.add(ledger.applied$.subscribe((a) => alerts.onTrade(a)));
    sub.add(ledger.scored$.subscribe((s) => alerts.onScored(s)));
  }
  sub.add(state.trades.trades$.subscribe((t) => ledger.apply(t)));
  sub.add(state.catalog.changes$.subscribe((c) => ledger.onCatalog(c)));
  const { advanceMs, flushMs } = ledger.intervals;
  if (advanceMs > 0) sub.add(interval(advanceMs, clock.scheduler).subscribe(() => ledger.advance(ledger.time())));
  if (flushMs > 0) sub.add(interval(flushMs, clock.scheduler).subscribe(() => void ledger.flush()));
  return sub;
}
