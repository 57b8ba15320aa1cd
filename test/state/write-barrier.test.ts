import { describe, expect, it } from 'vitest';
import { WriteBarrier } from '../../src/persist/barrier.js';

/** A write whose outcome the test decides. */
function write(): { p: Promise<boolean>; ok: () => void; fail: (e: Error) => void } {
  let ok!: () => void;
  let fail!: (e: Error) => void;
  const p = new Promise<boolean>((res, rej) => {
    ok = () => res(true);
    fail = rej;
  });
  return { p, ok, fail };
}

/** Lets every settled promise's reactions run (one turn of the loop). */
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

function watch(p: Promise<void>): { done: boolean } {
  const s = { done: false };
  void p.then(() => (s.done = true));
  return s;
}

describe('WriteBarrier', () => {
  it('resolves at once with nothing in flight', async () => {
    const b = new WriteBarrier();
    const s = watch(b.settled());
    await turn();
    expect(s.done).toBe(true);
    expect(b.inFlight).toBe(0);
  });

  it('waits for the writes issued before the wait, not those issued after', async () => {
    const b = new WriteBarrier();
    const [w1, w2] = [write(), write()];
    b.track(w1.p, () => undefined);
    b.track(w2.p, () => undefined);
    const s = watch(b.settled());
    const w3 = write();
    b.track(w3.p, () => undefined);
    const all = watch(b.settled());
    expect(b.inFlight).toBe(3);
    w1.ok();
    await turn();
    expect(s.done).toBe(false);
    w2.ok();
    await turn();
    expect(s.done).toBe(true);
    expect(all.done).toBe(false);
    expect(b.inFlight).toBe(1);
    w3.ok();
    await turn();
    expect(all.done).toBe(true);
    expect(b.inFlight).toBe(0);
  });

  it('counts a write settled whatever order the writes settle in', async () => {
    const b = new WriteBarrier();
    const ws = [write(), write(), write()];
    for (const w of ws) b.track(w.p, () => undefined);
    const s = watch(b.settled());
    ws[2]!.ok();
    ws[0]!.ok();
    await turn();
    expect(s.done).toBe(false);
    expect(b.inFlight).toBe(1);
    ws[1]!.ok();
    await turn();
    expect(s.done).toBe(true);
    expect(b.inFlight).toBe(0);
  });

  it('hands a failed write to onError before the wait on it resolves', async () => {
    const b = new WriteBarrier();
    const seen: string[] = [];
    const w = write();
    b.track(w.p, (e) => seen.push(e.message));
    const done = b.settled().then(() => seen.push('settled'));
    w.fail(new Error('MDB_MAP_FULL'));
    await done;
    expect(seen).toEqual(['MDB_MAP_FULL', 'settled']);
  });

  it('serves many waits over many writes in flight, each once', async () => {
    const b = new WriteBarrier();
    const ws: ReturnType<typeof write>[] = [];
    const resolved: number[] = [];
    for (let i = 0; i < 5_000; i++) {
      const w = write();
      ws.push(w);
      b.track(w.p, () => undefined);
      if (i % 2 === 1) void b.settled().then(() => resolved.push(i));
    }
    for (const w of ws) w.ok();
    await b.settled();
    await turn();
    expect(resolved).toHaveLength(2_500);
    expect(resolved).toEqual([...resolved].sort((x, y) => x - y));
    expect(b.inFlight).toBe(0);
  });
});
