import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCapture, importRecording, readRecording } from '../../src/cli/capture.js';
import { normalizeFrames } from '../../src/cli/normalize.js';
import { loadConfig } from '../../src/config/load.js';

/** `crossbook capture import|export` on the real recordings of test/fixtures, into a temporary DATA_DIR. */

const config = loadConfig({ env: {} });
const FIX = join(__dirname, '../fixtures');
const BURST = join(FIX, 'polymarket/ws_price_change_burst_capture_2026-09-29.json');
const AT = Date.parse('2026-09-29T10:00:00Z');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'cb-capture-cli-'));
  dirs.push(d);
  return d;
}

async function exported(dir: string, events: boolean, from = 0, to = Number.MAX_SAFE_INTEGER): Promise<Record<string, unknown>[]> {
  let text = '';
  await exportCapture(config, dir, { from, to, events }, (c) => void (text += c));
  return text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Every segment file and its bytes, to check that a failed import changed nothing. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out[p] = readFileSync(p).toString('base64');
    }
  };
  walk(join(dir, 'capture'));
  return out;
}

describe('crossbook capture import / export', () => {
  it('imports a real Polymarket recording; its events on export are those `crossbook normalize` gives for the file', async () => {
    const dir = tempDir();
    const r = await importRecording(config, dir, BURST, { protocol: 'polymarket', at: AT });
    expect(r).toEqual({ frames: 51, venue: 'venue_b', from: AT, to: AT });
    const lines = await exported(dir, true);
    expect(lines.at(-1)).toEqual({ type: 'end', count: lines.length - 1 });
    const expected = normalizeFrames(config, 'polymarket', JSON.parse(readFileSync(BURST, 'utf8')) as unknown[]).events;
    const got = lines.slice(0, -1).map(({ seq: _s, recv_ts: _r, platform: _p, market_id: _m, ...e }) => ({ ...e, localTimestamp: 0 }));
    expect(got).toEqual(expected.map((e) => ({ ...JSON.parse(JSON.stringify(e)), localTimestamp: 0 }) as Record<string, unknown>));
    // Frames export: each frame as recorded, in order.
    const frames = await exported(dir, false);
    expect(frames.slice(0, -1).map((f) => JSON.parse(f['payload'] as string) as unknown)).toEqual(JSON.parse(readFileSync(BURST, 'utf8')));
    expect(frames[0]).toMatchObject({ seq: 1, venue: 'venue_b', recv_ts: AT, kind: 'frame', conn: 0 });
  });

  it('takes receive times from the lines that carry them (ms or ISO 8601), in file order', async () => {
    const dir = tempDir();
    const frames = (JSON.parse(readFileSync(join(FIX, 'kalshi/ws_ticker_capture_2026-02-12.json'), 'utf8')) as unknown[]).map((f) => JSON.stringify(f));
    const file = join(dir, 'timed.jsonl');
    writeFileSync(file, frames.map((f, i) => (i % 2 ? `${AT + i * 1000} ${f}` : `${new Date(AT + i * 1000).toISOString()} ${f}`)).join('\n'));
    expect(readRecording(readFileSync(file, 'utf8'), file).map((f) => f.t)).toEqual(frames.map((_, i) => AT + i * 1000));
    await importRecording(config, dir, file, { protocol: 'kalshi' });
    const quotes = (await exported(dir, true, AT + 2000, AT + 4000)).slice(0, -1);
    expect(quotes.map((q) => q['recv_ts'])).toEqual([AT + 2000, AT + 3000, AT + 4000]);
    expect(new Set(quotes.map((q) => q['type']))).toEqual(new Set(['quote']));
  });

  it('a bad file is a clear error and leaves what is stored as it was', async () => {
    const dir = tempDir();
    await importRecording(config, dir, BURST, { protocol: 'polymarket', at: AT });
    const before = snapshot(dir);
    const garbage = join(dir, 'garbage.jsonl');
    writeFileSync(garbage, '{"type":"ticker","msg":{}}\n{"type":"ticker",\n');
    await expect(importRecording(config, dir, garbage, { protocol: 'kalshi' })).rejects.toThrow(/frame 2 is not JSON .*nothing was imported/);
    const empty = join(dir, 'empty.json');
    writeFileSync(empty, '\n\n');
    await expect(importRecording(config, dir, empty, { protocol: 'kalshi' })).rejects.toThrow(/no frames in the file/);
    await expect(importRecording(config, dir, join(dir, 'missing.json'), { protocol: 'kalshi' })).rejects.toThrow(/ENOENT/);
    await expect(importRecording(config, dir, BURST, { protocol: 'kalshi', venue: 'venue_b' })).rejects.toThrow(/speaks polymarket, not kalshi/);
    expect(snapshot(dir)).toEqual(before);
    await expect(exportCapture(config, dir, { from: 0, to: 1, venues: ['venue_zz'] }, () => undefined)).rejects.toThrow(/unknown venue venue_zz/);
  });
});
