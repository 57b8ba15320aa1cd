import { describe, expect, it } from 'vitest';
import { RestartPolicy } from '../../src/sim/child.js';

/** When the service restarts a simulator child that died (times are plain ms values, no clock). */
describe('RestartPolicy', () => {
  const o = { baseMs: 1_000, maxMs: 8_000, maxFailures: 5, stableMs: 60_000 };

  it('backs off exponentially up to the cap, then gives up after maxFailures in a row', () => {
    const p = new RestartPolicy(o);
    p.ready(0);
    const delays = [1, 2, 3, 4, 5, 6].map((t) => p.exited(t * 100));
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, undefined]);
  });

  it('a child that stayed up for stableMs starts a new run of failures', () => {
    const p = new RestartPolicy(o);
    p.ready(0);
    expect(p.exited(10)).toBe(1_000);
    p.ready(1_010);
    expect(p.exited(2_000)).toBe(2_000);
    p.ready(4_000);
    expect(p.exited(4_000 + 60_000)).toBe(1_000);
  });

  it('a restart that fails before it is ready counts as a failure', () => {
    const p = new RestartPolicy(o);
    p.ready(0);
    expect(p.exited(100_000)).toBe(1_000);
    expect(p.exited(101_000)).toBe(2_000);
  });
});
