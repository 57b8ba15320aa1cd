import { Observable, type OperatorFunction } from 'rxjs';
import type { NormalizedEvent } from '../core/types.js';
import type { Mapper } from '../venues/common/mapper.js';
import { applyEvent, type EngineState } from '../state/engine.js';

/** A raw frame as it arrives: text (or an already-parsed value) and our receive time. */
export interface RawFrame {
  readonly data: string | unknown;
  readonly localTimestamp: number;
}

/**
 * raw frames → normalized events through one protocol mapper. Text is JSON-parsed here; a frame
 * that does not parse is counted as malformed (`json`) and dropped (the mapper counts the rest). One operator, plain loop
 * inside (RxJS costs per operator, not per line of code).
 */
export function mapFrames(mapper: Mapper): OperatorFunction<RawFrame, NormalizedEvent> {
  return (source) =>
    new Observable<NormalizedEvent>((sub) =>
      source.subscribe({
        next(f) {
          let raw: unknown = f.data;
          if (typeof raw === 'string') {
            try {
              raw = JSON.parse(raw);
            } catch {
              mapper.stats.malformedFrame('json', 'frame is not valid JSON', raw);
              return;
            }
          }
          const evs = mapper.map(raw, f.localTimestamp);
          if (Array.isArray(evs)) for (let i = 0; i < evs.length; i++) sub.next(evs[i]);
          else for (const ev of evs) sub.next(ev);
        },
        error: (e) => sub.error(e),
        complete: () => sub.complete(),
      }),
    );
}

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
