import type { PropMeta } from '../phrasing/index.js';
import type { Rng } from '../rng.js';
import type { SimEvent, SimProposition } from '../types.js';

/** Milliseconds in a day and an hour. */
export const DAY = 86_400_000;
export const HOUR = 3_600_000;

/** The fields a generator gives a new proposition (the world adds id, event and resolution). */
export type PropFields = Omit<SimProposition, 'id' | 'event' | 'fair' | 'resolved'> & { fair: number };

/**
 * What the domain generators need of the world under construction. Generators draw from `rng` in
 * a fixed order, and `prop` lists the proposition on the venues at once (drawing too), so the
 * order of calls is part of the seed → world mapping.
 */
export interface WorldBuilder {
  readonly rng: Rng;
  /** Midnight UTC of the world's first day, ms. */
  readonly anchor: number;
  /** The next event id: E00001, E00002, … */
  eventId(): string;
  event(e: Omit<SimEvent, 'props' | 'state'>): SimEvent;
  /** Adds a proposition to `ev` and lists it on the venues. */
  prop(ev: SimEvent, fields: PropFields, meta: PropMeta): SimProposition;
  /** Marks two propositions as complements: setting one's fair value sets the other's. */
  complements(a: SimProposition, b: SimProposition): void;
}
