import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Level } from '../../src/core/types.js';
import { groupArbs, ladders, type GroupMember } from '../../src/signals/arb.js';
import { groupEv } from '../../src/signals/ev.js';
import type { TrackedArb, TrackedEv } from '../../src/signals/lifecycle/record.js';
import { sameArb, sameEv } from '../../src/signals/same.js';

/**
 * The comparisons that decide whether a recompute keeps the opportunity it published: a copy reads
 * the same, and a change to any one field (found by walking a real opportunity's keys, so a field
 * added later is walked too) reads different.
 */
const venues = Object.fromEntries(loadConfig({ env: {} }).venues.map((v) => [v.label, v]));
const member = (label: string): GroupMember => ({ venue: venues[label]!, marketId: `${label}-M`, inverted: false, fee: {}, url: `https://${label}.example/M` });
const c = (cents: number, size: number): Level => [cents * 100, size];

/** A value other than `v` of the same kind. */
function other(v: unknown): unknown {
  if (typeof v === 'number') return v + 1;
  if (typeof v === 'string') return `${v}x`;
  if (v === null) return 'x';
  if (v === undefined) return 'x';
  throw new Error(`no other value for ${JSON.stringify(v)}`);
}

/** Every copy of `o` with exactly one field (of it, of a leg, or of a nested list) changed, named by its path. */
function variants(o: Record<string, unknown>): [string, Record<string, unknown>][] {
  const out: [string, Record<string, unknown>][] = [];
  for (const k of [...Object.keys(o), 'opportunity_id']) {
    const v = o[k];
    if (Array.isArray(v)) {
      out.push([`${k}.length`, { ...o, [k]: v.slice(1) }]);
      v.forEach((e, i) => {
        if (typeof e === 'object' && e !== null)
          for (const [path, changed] of variants(e as Record<string, unknown>))
            if (!path.startsWith('opportunity_id')) out.push([`${k}[${i}].${path}`, { ...o, [k]: v.map((x, j) => (j === i ? changed : x)) }]);
        if (typeof e === 'string') out.push([`${k}[${i}]`, { ...o, [k]: v.map((x, j) => (j === i ? other(x) : x)) }]);
      });
    } else out.push([k, { ...o, [k]: other(v) }]);
  }
  return out;
}

describe('sameArb and sameEv', () => {
  const a = ladders(member('venue_a'), [c(48, 100)], [c(40, 100)]);
  const b = ladders(member('venue_b'), [c(55, 50), c(52, 100)], [c(57, 10)]);
  const e = ladders(member('venue_e'), [c(44, 80)], [c(47, 60)]);

  it('read a copy of an arbitrage as the same, and any one changed field as different', () => {
    const arb = groupArbs(1, [a, b, e])[0]! as TrackedArb & Record<string, unknown>;
    (arb as { opportunity_id?: string }).opportunity_id = 'arb_1';
    expect(sameArb({ ...arb, legs: [{ ...arb.legs[0] }, { ...arb.legs[1] }] }, arb)).toBe(true);
    const vs = variants(arb);
    // Every field of the opportunity and of both legs is walked.
    expect(vs.length).toBeGreaterThan(Object.keys(arb).length + 2 * Object.keys(arb.legs[0]).length);
    for (const [path, changed] of vs) {
      expect(sameArb(changed as unknown as TrackedArb, arb), path).toBe(false);
      expect(sameArb(arb, changed as unknown as TrackedArb), path).toBe(false);
    }
  });

  it('read a copy of an EV opportunity as the same, and any one changed field as different', () => {
    const ev = groupEv(1, [a, b, e])[0]! as TrackedEv & Record<string, unknown>;
    expect(ev.consensus_sources.length).toBeGreaterThan(1);
    expect(sameEv({ ...ev, consensus_sources: [...ev.consensus_sources], legs: [{ ...ev.legs[0] }] }, ev)).toBe(true);
    const vs = variants(ev);
    expect(vs.map(([p]) => p)).toContain('consensus_sources[1]');
    for (const [path, changed] of vs) {
      expect(sameEv(changed as unknown as TrackedEv, ev), path).toBe(false);
      expect(sameEv(ev, changed as unknown as TrackedEv), path).toBe(false);
    }
  });
});
