import type { ApiCtx } from '../access/api.js';
import { p } from '../access/params.js';
import type { CaptureSettings, CaptureStore } from '../capture/index.js';
import type { HistoryClient } from '../history/client.js';
import { NotIndexedError, type MarketRef } from '../history/index.js';
import { errorReply, type Reply } from '../server/http.js';
import { iso, type Clock } from '../core/clock.js';
import type { EngineState } from '../state/engine.js';
import type { ApiContext } from './context.js';

/** What `as_of` reads rebuild the past from: the history index over the capture, and the capture's retention. */
export interface HistorySource {
  readonly index: HistoryClient;
  readonly settings: CaptureSettings;
  readonly store: CaptureStore;
}

/** The name plans block (config/plans.json `blocked`) to leave `as_of` reads out. */
export const AS_OF_FEATURE = 'as_of';

/** The `as_of` query parameter of the state reads that take it. */
export const asOfParam = (): ReturnType<typeof p.msOrIso> =>
  p.msOrIso({
    description:
      'the state at this receive time instead of now: ms since the epoch or ISO 8601 (an as_of / as_of_ms an earlier answer carried gives the same body). Within what capture retains (a 400 names the window); rebuilt from the capture log by the live mappers and book code; a moment the history index holds nothing of (the service was stopped then, or its index closed short) is a 400 as_of.not_indexed naming the gap (gap_from, gap_to). Plans: dev, pro and enterprise (free: 403 auth.endpoint_blocked); 400 when capture is off.',
  });

/** Text added to the description of a route that takes `as_of`. */
/** The 503 of an as_of read once the history index has stopped (a memory bound passed). */
export const AS_OF_STOPPED =
  'as_of: the history index stopped following the capture (a memory bound passed, or its thread died; code as_of.index_stopped, the message says which), or it has not reached the moment asked for within capture.asOfWaitMs (code as_of.index_behind, with indexed_to and Retry-After)';

export const AS_OF_DOC =
  ' With as_of=<ms or ISO 8601> the answer is the state at that receive time, rebuilt from the capture log (see the as_of parameter); the catalog fields (titles, group members) are today’s.';

/**
 * The state of `markets` at `t` for an `as_of` read, or the reply refusing it: 403 for a plan
 * without `as_of`, 400 with capture off or for a moment outside the retained window (named in the
 * message and in `retained_from` / `retained_to`) or inside it where the index holds nothing (the
 * gap in `gap_from` / `gap_to`). Indexes what the capture holds up to `t` first when `t` is that recent.
 */
export async function stateAsOf(ctx: ApiContext, c: ApiCtx<unknown>, t: number, markets: readonly MarketRef[]): Promise<EngineState | Reply> {
  if (c.plan?.blocked.includes(AS_OF_FEATURE))
    return errorReply(403, 'auth.endpoint_blocked', `the ${c.plan.name} plan does not include as_of reads; upgrade to a plan that includes ${AS_OF_FEATURE}`);
  const h = ctx.history;
  if (h === undefined)
    return errorReply(
      400,
      'as_of.capture_off',
      'as_of reads are turned off on this server: they need the capture log and its history index (capture.enabled and capture.history true)',
    );
  if (h.index.stopped !== undefined) return errorReply(503, 'as_of.index_stopped', h.index.stopped);
  const now = ctx.clock.now();
  const retainedFrom = Math.max(h.store.oldest() ?? now, now - h.settings.retentionMs);
  // A moment the index may not have reached: what the capture buffers is written and indexed first, within the wait's bound.
  if (t <= now && t > h.index.indexedTo - 1000 && !(await within(h.index.sync(), h.settings.asOfWaitMs, ctx.clock)) && t > h.index.indexedTo) {
    const behind = h.index.indexedTo;
    return errorReply(
      503,
      'as_of.index_behind',
      `as_of ${iso(t)}: the history index has not reached it yet (indexed to ${iso(behind)}; it catches up on its own thread, behind the live feeds); retry later, or ask for an earlier moment`,
      { indexed_to: behind },
      Math.max(1, Math.ceil(h.settings.asOfWaitMs / 1000)),
    );
  }
  const w = h.index.window(now, retainedFrom);
  if (w === undefined) return errorReply(400, 'as_of.outside_retention', 'as_of: nothing has been captured and indexed yet');
  if (t < w.from || t > w.to)
    return errorReply(400, 'as_of.outside_retention', `as_of ${iso(t)} is outside what capture retains: ${iso(w.from)} .. now (${iso(w.to)})`, {
      retained_from: w.from,
      retained_to: w.to,
    });
  try {
    return await h.index.stateAt(t, markets);
  } catch (e) {
    if (e instanceof NotIndexedError)
      return errorReply(
        400,
        'as_of.not_indexed',
        `as_of ${iso(t)} falls where the history index holds nothing: from ${e.before === undefined ? 'before it' : iso(e.before)} to ${e.after === undefined ? 'now' : iso(e.after)} the service was stopped, or its index was closed short (capture.historyCloseMs); what the capture holds of it /replay reads`,
        { gap_from: e.before ?? null, gap_to: e.after ?? null },
      );
    // The index's thread died while the read waited: the same 503 as a read after it.
    if (h.index.stopped !== undefined) return errorReply(503, 'as_of.index_stopped', h.index.stopped);
    throw e;
  }
}

/** A market of the catalog as `stateAt` takes it (the instruments of its YES and NO books). */
export function marketRef(ctx: ApiContext, venue: string, marketId: string): MarketRef {
  const m = ctx.state.catalog.get(venue, marketId);
  return { venue, marketId, yes: m?.yesInstrument, no: m?.noInstrument };
}

/** Whether `p` settles within `ms` on `clock` (0: not waited for at all). A rejection counts as settled. */
function within(p: Promise<unknown>, ms: number, clock: Clock): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    const cancel = clock.after(ms, () => resolve(false));
    const done = (): void => {
      cancel();
      resolve(true);
    };
    p.then(done, done);
  });
}

export function isReply(x: EngineState | Reply): x is Reply {
  return 'status' in x;
}
