import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { flushRecorder } from '../../pipelines/capture.js';
import { Capture, CaptureStore, read, type CaptureRecord } from '../../src/capture/index.js';
import { VirtualClock } from '../../src/core/clock.js';
import { log } from '../../src/core/log.js';
import { clockSchedule, Turn } from '../../src/pipeline/turn.js';

/**
 * One recorder of where the live turn flushes: the turn's schedule tells the capture log (a flush
 * marker) and a replay tap, so both hold the same flushes at the same times.
 */

const T0 = 1_800_000_000_000;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Resolves after the turn's next flush has run its flushers. */
function nextFlush(turn: Turn): Promise<void> {
  return new Promise((resolve) => {
    const remove = turn.add(() => {
      remove();
      resolve();
    });
  });
}

describe('the turn flush recorder', () => {
  it("marks each scheduled flush in the capture log and tells the tap, at the flush's time; a turn with nothing captured is not marked again", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crossbook-flush-'));
    dirs.push(dir);
    const clock = new VirtualClock(T0);
    const cap = new Capture(new CaptureStore(dir), { clock, log });
    const tapped: number[] = [];
    const turn = new Turn(
      clockSchedule(
        clock,
        flushRecorder(cap, (at) => tapped.push(at)),
      ),
    );

    cap.venue('venue_a').frame('{"n":1}', 1, T0);
    let flushed = nextFlush(turn);
    turn.touch();
    await flushed;
    clock.advanceTo(T0 + 7);
    flushed = nextFlush(turn);
    turn.touch();
    await flushed;
    cap.venue('venue_a').frame('{"n":2}', 1, T0 + 9);
    clock.advanceTo(T0 + 9);
    flushed = nextFlush(turn);
    turn.touch();
    await flushed;
    await cap.close();

    const records: CaptureRecord[] = [];
    for await (const r of read(cap.store, { from: 0, to: Number.MAX_SAFE_INTEGER })) records.push(r);
    expect(tapped).toEqual([T0, T0 + 7, T0 + 9]);
    expect(records.map((r) => [r.kind, r.seq, r.t])).toEqual([
      ['frame', 1, T0],
      ['flush', 2, T0],
      ['frame', 3, T0 + 9],
      ['flush', 4, T0 + 9],
    ]);
  });

  it('without a capture log it is the tap itself, and nothing without either', () => {
    const tap = (): void => undefined;
    expect(flushRecorder(undefined, tap)).toBe(tap);
    expect(flushRecorder(undefined)).toBeUndefined();
  });
});
