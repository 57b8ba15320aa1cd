import { Observable, type OperatorFunction } from 'rxjs';
import type { NormalizedEvent } from '../core/types.js';
import { applyEvent, type EngineState } from '../state/engine.js';

/** Applies every event to the engine state and passes it on (for change-stream consumers). */
export function applyToState(state: EngineState): OperatorFunction<NormalizedEvent, NormalizedEvent> {
  return (source) =>
    new Observable<NormalizedEvent>((sub) =>
      source.subscribe({
        next(ev) {
          applyEvent(state, ev);
          sub.next(ev);
        },
        error: (e) => sub.error(e),
        complete: () => sub.complete(),
      }),
    );
}
