import type { MarketUpsert } from '../../core/types.js';

/** Deletes the keys whose value is undefined (normalized events carry no undefined fields), in place. */
export function without<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

/** The first issue of a zod error as "path: message", for a one-line malformed-frame log. */
export function issue(e: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  const i = e.issues[0];
  return i ? `${i.path.map(String).join('.')}: ${i.message}` : 'invalid';
}

/**
 * What a polled venue's market record says, without its timestamps: polled mappers remember it per
 * market and emit an upsert only when it changed.
 */
export function upsertKey(m: MarketUpsert): string {
  const { timestamp: _t, localTimestamp: _l, ...rest } = m;
  return JSON.stringify(rest);
}
