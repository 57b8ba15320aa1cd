import { Observable, type OperatorFunction } from 'rxjs';
import { realClock, type Clock } from '../core/clock.js';
import type { NormalizedEvent } from '../core/types.js';
import { applyEvent, type EngineState } from '../state/engine.js';

/**
 * Applies every event to the engine state and passes it on (for change-stream consumers), each as
 * one unit of the clock at its receive time: timers due by then run first, and everything the event
 * sets off reads that time (so a replay that feeds the same events reads the same times).
 */
export function applyToState(state: EngineState, clock: Clock = realClock): OperatorFunction<NormalizedEvent, NormalizedEvent> {
  return (source) =>
    new Observable<NormalizedEvent>((sub) =>
      source.subscribe({
        next(ev) {
          clock.run(ev.localTimestamp, () => {
            applyEvent(state, ev);
            sub.next(ev);
          });
        },
        error: (e) => sub.error(e),
        complete: () => sub.complete(),
      }),
    );
}
