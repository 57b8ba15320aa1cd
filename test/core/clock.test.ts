import { auditTime, interval, Subject, take, timer } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StepClock, VirtualClock } from '../../src/core/clock.js';

const T0 = Date.UTC(2026, 10, 28, 12, 0, 0);

describe('VirtualClock', () => {
  it('runs every timer due by advanceTo(t) in due order, each at its due time, then reads t', () => {
    const c = new VirtualClock(T0);
    const seen: string[] = [];
    c.after(30, () => seen.push(`c@${c.now() - T0}`));
    c.after(10, () => seen.push(`a@${c.now() - T0}`));
    c.after(10, () => seen.push(`b@${c.now() - T0}`)); // a tie runs in the order it was set
    c.after(31, () => seen.push('late'));
    c.advanceTo(T0 + 30);
    expect(seen).toEqual(['a@10', 'b@10', 'c@30']);
    expect(c.now()).toBe(T0 + 30);
    expect(c.pending).toBe(1);
    // It never moves back: an earlier time only runs what is due (nothing here).
    c.advanceTo(T0 + 5);
    expect(c.now()).toBe(T0 + 30);
    c.advanceTo(T0 + 31);
    expect(seen.at(-1)).toBe('late');
  });

  it('counts a timer set inside a timer or a unit from that time, and cancels what is cancelled', () => {
    const c = new VirtualClock(T0);
    const seen: number[] = [];
    c.after(10, () => c.after(5, () => seen.push(c.now() - T0)));
    const cancel = c.after(12, () => seen.push(-1));
    cancel();
    c.run(T0 + 100, () => c.after(1, () => seen.push(c.now() - T0)));
    expect(seen).toEqual([15]);
    c.advanceTo(T0 + 101);
    expect(seen).toEqual([15, 101]);
  });

  it('runs a unit at its time: the timers due first, and every read inside sees that time', () => {
    const c = new VirtualClock(T0);
    const log: string[] = [];
    c.after(20, () => log.push(`timer@${c.now() - T0}`));
    c.run(T0 + 50, () => {
      log.push(`unit@${c.now() - T0}`);
      log.push(`again@${c.now() - T0}`);
    });
    expect(log).toEqual(['timer@20', 'unit@50', 'again@50']);
  });

  it("drives RxJS operators on its scheduler: interval ticks, auditTime's window and timer", () => {
    const c = new VirtualClock(T0);
    const ticks: [number, number][] = [];
    interval(1000, c.scheduler)
      .pipe(take(3))
      .subscribe((i) => ticks.push([i, c.now() - T0]));
    const changes = new Subject<string>();
    const audited: [string, number][] = [];
    changes.pipe(auditTime(20, c.scheduler)).subscribe((v) => audited.push([v, c.now() - T0]));
    const fired: number[] = [];
    // An absolute due date is read against the scheduler's now(): the clock's.
    timer(new Date(T0 + 2500), c.scheduler).subscribe(() => fired.push(c.now() - T0));
    // A burst at 5, 12 and 30 ms: one audit at 25 (the first change + 20) with the last value then, one at 50.
    c.run(T0 + 5, () => changes.next('a'));
    c.run(T0 + 12, () => changes.next('b'));
    c.run(T0 + 30, () => changes.next('c'));
    c.advanceTo(T0 + 5000);
    expect(audited).toEqual([
      ['b', 25],
      ['c', 50],
    ]);
    expect(ticks).toEqual([
      [0, 1000],
      [1, 2000],
      [2, 3000],
    ]);
    expect(fired).toEqual([2500]);
    expect(c.pending).toBe(0);
  });
});

describe('a timer that throws', () => {
  it('fails alone: the timers due with it and the unit that moved the clock still run, and its error is reported', () => {
    const errors: unknown[] = [];
    const c = new VirtualClock(T0, (e) => errors.push(e));
    const seen: string[] = [];
    c.after(10, () => {
      throw new Error('first');
    });
    c.after(10, () => seen.push(`second@${c.now() - T0}`));
    c.after(15, () => {
      throw new Error('third');
    });
    c.advanceTo(T0 + 10);
    expect(seen).toEqual(['second@10']);
    expect(c.run(T0 + 20, () => `unit@${c.now() - T0}`)).toBe('unit@20');
    expect(errors.map((e) => (e as Error).message)).toEqual(['first', 'third']);
    expect(c.pending).toBe(0);
  });
});

describe('StepClock on a wall (the live service)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads the wall outside a unit, fires a timer on its own when the wall passes it, at its due time', async () => {
    vi.useFakeTimers({ now: T0 });
    const c = new StepClock(T0, () => Date.now());
    const seen: number[] = [];
    c.after(100, () => seen.push(c.now() - T0));
    vi.setSystemTime(T0 + 40);
    expect(c.now()).toBe(T0 + 40);
    // The OS timer is late (the wall is at 130 when it runs): the work still reads its due time.
    vi.setSystemTime(T0 + 130);
    await vi.advanceTimersByTimeAsync(100);
    expect(seen).toEqual([100]);
    expect(c.pending).toBe(0);
  });

  it('keeps firing its timers on their own after one of them throws', async () => {
    vi.useFakeTimers({ now: T0 });
    const errors: unknown[] = [];
    const c = new StepClock(
      T0,
      () => Date.now(),
      (e) => errors.push(e),
    );
    const seen: number[] = [];
    c.after(10, () => {
      throw new Error('boom');
    });
    c.after(10, () => seen.push(c.now() - T0));
    c.after(50, () => seen.push(c.now() - T0));
    await vi.advanceTimersByTimeAsync(100);
    expect(seen).toEqual([10, 50]);
    expect(errors).toHaveLength(1);
    expect(c.pending).toBe(0);
  });

  it('runs a due timer before a unit stamped after it, whether or not the OS timer has fired', () => {
    vi.useFakeTimers({ now: T0 });
    const c = new StepClock(T0, () => Date.now());
    const log: string[] = [];
    c.after(10, () => log.push(`timer@${c.now() - T0}`));
    vi.setSystemTime(T0 + 15);
    const stamp = c.now();
    c.run(stamp, () => log.push(`event@${c.now() - T0}`));
    expect(log).toEqual(['timer@10', 'event@15']);
  });
});
