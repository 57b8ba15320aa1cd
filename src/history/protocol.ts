import type { NormView } from '../capture/normcache.js';
import type { VenueConfig } from '../config/schema.js';
import type { HISTORY_LIMITS, MarketRef, Rebuilt } from './index.js';
import type { HandedBatch } from './handoff.js';
import type { TailStart } from './tail.js';

/** What the history index's thread starts from (`worker.ts`). */
export interface HistoryWorkerData {
  /** The capture store's directory (DATA_DIR/capture): the thread opens the store itself and reads what the writer wrote. */
  readonly dir: string;
  readonly venues: readonly VenueConfig[];
  readonly sliceMs: number;
  /** The capture's last sequence number when the service opened it. */
  readonly after: number;
  /** The receive time it starts at. */
  readonly from: number;
  /** Where its tail starts, taken with `after` on the writer's thread. */
  readonly tail: TailStart;
  readonly logLevel: string;
  /** The normalized cache behind /replay, written on the thread from the events it maps (absent: capture.replayCache off). */
  readonly lines?: { readonly version: string; readonly maxBytes: number } | undefined;
  /** Whether the main thread hands it the records with their live events (`handed` of sync, norm and close) instead of it reading the capture. */
  readonly handed: boolean;
}

/** What a sync, norm or close request hands over (`handed` workers): the records since the last, or how many the main thread let go of. */
export interface Handing {
  readonly handed?: HandedBatch | undefined;
  /** Records the main thread's handoff let go of past its bound: the index stops. */
  readonly lost?: number | undefined;
}

/** A request of the main thread (`client.ts`); each is answered once, with its `id`. */
export type HistoryRequest =
  | ({ readonly type: 'sync'; readonly id: number; readonly upTo: number; readonly limits: typeof HISTORY_LIMITS } & Handing)
  | { readonly type: 'rebuild'; readonly id: number; readonly t: number; readonly markets: readonly MarketRef[] }
  /** `at`: the moment of the close, up to which the open slice covers once every record is indexed. */
  | ({ readonly type: 'close'; readonly id: number; readonly upTo: number; readonly at: number } & Handing)
  /** Cuts a close short (posted when the close's time is up): its catch-up stops, an open slice still being written is dropped. */
  | { readonly type: 'hurry'; readonly id: number }
  /** The records since the last request, handed while a sync waits for its answer (`HistoryClient.syncTo`): queued for the next, not answered. */
  | ({ readonly type: 'hand'; readonly id: number } & Handing)
  /** Index up to `upTo`, write the normalized cache's open blocks, answer its view. */
  | ({ readonly type: 'norm'; readonly id: number; readonly upTo: number; readonly limits: typeof HISTORY_LIMITS } & Handing);

/** Where the index stands, sent with every answer. */
export interface HistoryProgress {
  readonly indexedTo: number;
  /** The first moment it can answer for (undefined: nothing indexed yet). */
  readonly first: number | undefined;
  readonly slicesOnDisk: readonly number[];
  /** The starts of the slices only the thread holds (the one being written, the open one). */
  readonly inMemory: readonly number[];
  readonly stopped: string | undefined;
  readonly written: number;
  readonly gaps: number;
}

/** An answer of the index's thread. */
export type HistoryAnswer =
  | {
      readonly type: 'done';
      readonly id: number;
      readonly progress: HistoryProgress;
      readonly rebuilt?: Rebuilt | undefined;
      /** A `rebuild` of a moment no slice covers: the gap's ends (`NotIndexedError`), null where unknown. */
      readonly notIndexed?: readonly [before: number | null, after: number | null] | undefined;
      readonly norm?: NormView | undefined;
    }
  | { readonly type: 'failed'; readonly id: number; readonly progress: HistoryProgress; readonly error: string };
