import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { Capture, CaptureStore, FLUSH_STREAM, HOUR_MS, readBatches, ReplayFeed, type ReplayItem } from '../../src/capture/index.js';
import { StepClock } from '../../src/core/clock.js';
import { loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { NormLines } from '../../src/capture/normcache.js';
import { HandedFeed, Handoff, handedRecords } from '../../src/history/handoff.js';
import { HISTORY_LIMITS, HistoryIndex } from '../../src/history/index.js';
import { feedEvent } from '../../src/venues/common/frames.js';
import { tempDir } from '../support/temp.js';

/**
 * The main thread's side of the history index's handoff (src/history/handoff.ts): the capture's
 * tap holds each record kept and the live events made of it until a sync takes them, and never
 * more than its bound: past it, or once switched off (the thread stopped, died or closes), it
 * holds nothing, so a thread that no longer takes leaves no queue growing on the main thread.
 * The events are the feed runtime's own `feed` events (`feedEvent`), as it captures them. A record
 * no feed runtime wrote (`Capture.venue`) goes with its payload and the thread maps it, as a replay
 * of the capture does (recorded Polymarket frames, test/fixtures); one inside a runtime's session
 * cannot be, and stops the index.
 */

const T0 = 1_800_000_000_000 - (1_800_000_000_000 % HOUR_MS);

function open(dir: string, limit: number): { cap: Capture; tap: Handoff } {
  const cap = new Capture(new CaptureStore(dir), { clock: new StepClock(-Infinity, () => T0), log });
  const tap = new Handoff(() => limit);
  cap.tap = tap;
  return { cap, tap };
}

/** One `feed` event captured on `venue` and handed as the runtime hands it (`mapped` with its record's seq). */
function feed(cap: Capture, venue: 'venue_a' | 'venue_b', i: number): number {
  const e = feedEvent(venue, 'connected', T0 + i, `n${i}`);
  const w = cap.mapping(venue);
  const seq = w.event(e);
  w.mapped(seq, e);
  return seq;
}

describe('Handoff', () => {
  it('hands each record with its events, in seq order, to the batch a sync takes, then holds nothing', async () => {
    const dir = tempDir('cb-handoff-unit-');
    const { cap, tap } = open(dir, 100);
    const a = feed(cap, 'venue_a', 1);
    cap.markFlush(T0 + 2);
    // A record appended while another's events come out (a protocol's hook): its events are its own.
    const w = cap.mapping('venue_b');
    const outer = feedEvent('venue_b', 'connected', T0 + 3, 'outer');
    const seq = w.event(outer);
    const inner = feed(cap, 'venue_a', 4);
    w.mapped(seq, outer);
    expect(tap.held).toBe(4);
    const b = tap.take()!;
    expect(tap.held).toBe(0);
    expect(tap.take()).toBeUndefined();
    const got = handedRecords(b).map(({ record, items }) => [
      record.seq,
      record.venue,
      record.kind,
      items.map((it) => (it.type === 'event' ? it.event : it.type)),
    ]);
    expect(got).toEqual([
      [a, 'venue_a', 'event', [feedEvent('venue_a', 'connected', T0 + 1, 'n1')]],
      [a + 1, FLUSH_STREAM, 'flush', ['flush']],
      [seq, 'venue_b', 'event', [outer]],
      [inner, 'venue_a', 'event', [feedEvent('venue_a', 'connected', T0 + 4, 'n4')]],
    ]);
    await cap.close();
  });

  it('past its bound without a take lets go of everything, holds nothing more, and says how many it let go of', async () => {
    const dir = tempDir('cb-handoff-unit-');
    const { cap, tap } = open(dir, 3);
    for (let i = 0; i < 3; i++) feed(cap, 'venue_a', i);
    expect(tap.held).toBe(3);
    expect(tap.overflow).toBeUndefined();
    feed(cap, 'venue_a', 3);
    expect(tap.held).toBe(0);
    expect(tap.overflow).toBe(3);
    for (let i = 4; i < 50; i++) feed(cap, 'venue_b', i);
    expect(tap.held).toBe(0);
    expect(tap.take()).toBeUndefined();
    // The capture itself goes on.
    expect(cap.lastSeq).toBe(50);
    await cap.close();
  });

  it('a large batch taken leaves no buffer of its size behind on the main thread (msgpackr keeps its largest)', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const arrayBuffers = (): number => {
      gc();
      gc();
      return process.memoryUsage().arrayBuffers;
    };
    const tap = new Handoff(() => 1e9);
    const before = arrayBuffers();
    // A listing burst's worth: 30k records, each one `feed` event with a long detail (~500 bytes packed).
    const detail = 'x'.repeat(500);
    for (let s = 1; s <= 30_000; s++) {
      tap.record(s, 'venue_a', 3, T0 + s, true, 0, '');
      tap.event(s, feedEvent('venue_a', 'connected', T0 + s, `${s}${detail}`));
    }
    const size = tap.take()!.bytes.byteLength;
    expect(size).toBeGreaterThan(12 * 2 ** 20);
    // The batch is gone (transferred, in the service); what is left is the packer's buffer.
    expect(arrayBuffers() - before).toBeLessThan(size / 2);
  });

  it('once it holds a batch, calls its holder after the record being mapped has its events out, so a take never holds more nor splits a record', async () => {
    const dir = tempDir('cb-handoff-unit-');
    const cap = new Capture(new CaptureStore(dir), { clock: new StepClock(-Infinity, () => T0), log });
    const taken: number[][] = [];
    let most = 0;
    const tap: Handoff = new Handoff(
      () => 1e9,
      () => 8,
      () => taken.push(handedRecords(tap.take()!).map((r) => r.items.length)),
    );
    cap.tap = tap;
    const w = cap.mapping('venue_a');
    // 60 records of 3 events each, one record a turn (a frame mapped into three events).
    for (let i = 0; i < 60; i++) {
      const seq = w.event(feedEvent('venue_a', 'connected', T0 + i, `r${i}`));
      for (let k = 0; k < 3; k++) w.mapped(seq, feedEvent('venue_a', 'connected', T0 + i, `r${i}e${k}`));
      most = Math.max(most, tap.held);
      await Promise.resolve();
    }
    // Two records (8 records and events passed within the second), each with its three events whole.
    expect(most).toBeLessThanOrEqual(2);
    expect(taken.length).toBe(30);
    expect(taken.every((b) => b.length === 2 && b.every((n) => n === 3))).toBe(true);
    await cap.close();
  });

  it('switched off (its thread stopped, died or closes) drops what it held and holds nothing after', async () => {
    const dir = tempDir('cb-handoff-unit-');
    const { cap, tap } = open(dir, 100);
    for (let i = 0; i < 5; i++) feed(cap, 'venue_a', i);
    tap.off();
    expect(tap.held).toBe(0);
    for (let i = 5; i < 20; i++) feed(cap, 'venue_a', i);
    expect(tap.held).toBe(0);
    expect(tap.take()).toBeUndefined();
    await cap.close();
  });
});

const venues = loadConfig({ env: {} }).venues;
const polyFrames = (JSON.parse(readFileSync(new URL('../fixtures/polymarket/ws_book_captures_2026-02-12.json', import.meta.url), 'utf8')) as unknown[]).map(
  (f) => JSON.stringify(f),
);

describe('Handoff of records no feed runtime maps', () => {
  it('carries their connection and payload, and the thread maps them to what ReplayFeed over the capture gives', async () => {
    const dir = tempDir('cb-handoff-unit-');
    const { cap, tap } = open(dir, 1_000);
    const raw = cap.venue('venue_b');
    feed(cap, 'venue_a', 0);
    polyFrames.forEach((f, i) => {
      raw.frame(f, 2, T0 + i);
      // Built events, each packed over the one before it in msgpackr's buffer: each keeps its own bytes.
      raw.event(feedEvent('venue_b', 'connected', T0 + i, `raw${i}`));
      feed(cap, 'venue_a', i + 1);
    });
    const records = handedRecords(tap.take()!);
    expect(records.filter((r) => !r.handed).map((r) => r.record.venue)).toEqual(polyFrames.flatMap(() => ['venue_b', 'venue_b']));
    expect(records.find((r) => !r.handed)!.record.conn).toBe(2);
    const thread = new HandedFeed(venues);
    const got: ReplayItem[] = [];
    for (const r of records) {
      const items = thread.apply(r, []);
      if (typeof items === 'string') throw new Error(items);
      got.push(...items);
    }
    await cap.flush();
    const want: ReplayItem[] = [];
    for await (const batch of new ReplayFeed(venues).items(readBatches(cap.store, { from: 0, to: Number.MAX_SAFE_INTEGER, flushes: false })))
      want.push(...batch);
    expect(got.filter((it) => it.type === 'event' && it.event.venue === 'venue_b').length).toBeGreaterThan(polyFrames.length);
    expect(got).toEqual(want);
    await cap.close();
  });

  it("a record written otherwise inside a feed runtime's session stops the index, and its normalized cache, saying why", async () => {
    const dir = tempDir('cb-handoff-unit-');
    const { cap, tap } = open(dir, 1_000);
    const lines = new NormLines(cap.store, cap.lastSeq, venues, { version: 'test', maxBytes: 2 ** 30 });
    const index = new HistoryIndex(cap.store, venues, { sliceMs: 60_000, after: cap.lastSeq, from: T0, handed: true, lines });
    // A session of its own (a mapper record first) written otherwise is mapped; a runtime's session on another stream is handed.
    cap.venue('venue_b').session({});
    cap.venue('venue_b').frame(polyFrames[0]!, 1, T0);
    cap.mapping('venue_a').session({});
    feed(cap, 'venue_a', 1);
    index.hand(tap.take()!);
    await index.sync(cap.lastSeq);
    expect(index.stopped).toBeUndefined();
    const seq = cap.venue('venue_a').frame('{"type":"orderbook_delta"}', 1, T0 + 2);
    feed(cap, 'venue_a', 3);
    index.hand(tap.take()!);
    await index.sync(cap.lastSeq);
    expect(index.stopped).toContain(`record ${seq} of venue_a was appended by a writer other than its feed runtime during the runtime's session`);
    expect(lines.stopped).toContain(`record ${seq} of venue_a was appended by a writer other than its feed runtime`);
    await cap.close();
  });
});

describe('HistoryIndex fed handed batches', () => {
  const limits = { ...HISTORY_LIMITS };
  afterEach(() => void Object.assign(HISTORY_LIMITS, limits));

  it('a close hurried while it indexes a handed batch ends within a read batch of records, however many the batch holds', async () => {
    HISTORY_LIMITS.readBatch = 20;
    const dir = tempDir('cb-handoff-unit-');
    const { cap, tap } = open(dir, 100_000);
    // 10 ms slices over 2,000 records a millisecond apart: a slice written every 10 records, each a file's I/O, between which the hurry comes.
    const index = new HistoryIndex(cap.store, loadConfig({ env: {} }).venues, { sliceMs: 10, after: cap.lastSeq, from: T0, handed: true });
    const n = 2_000;
    for (let i = 0; i < n; i++) feed(cap, 'venue_a', i);
    await cap.flush();
    index.hand(tap.take()!);
    const closed = index.close(cap.lastSeq, T0 + n);
    await vi.waitFor(() => expect(index.indexedTo).toBeGreaterThan(T0), { timeout: 30_000, interval: 1 });
    const at = index.indexedTo;
    index.hurry();
    await closed;
    expect(index.indexedTo).toBeLessThan(T0 + n - 1);
    // Records are a millisecond apart: within a read batch (and the slice being written when it came) of the hurry.
    expect(index.indexedTo - at).toBeLessThanOrEqual(2 * HISTORY_LIMITS.readBatch + 10);
    await cap.close();
  });
});
