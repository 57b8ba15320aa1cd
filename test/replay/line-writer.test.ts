import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LineWriter } from '../../src/replay/run.js';

/**
 * The NDJSON writer of `crossbook replay` (events.ndjson and the others) encodes each line into one
 * reused buffer: the file must hold exactly the lines, each followed by a newline, whatever their
 * characters and lengths, across the buffer's boundaries and for a line longer than the buffer.
 */
const dir = mkdtempSync(join(tmpdir(), 'cb-linewriter-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('LineWriter', () => {
  it('writes every line as UTF-8 followed by a newline, across buffer refills and past the buffer size', () => {
    const lines: string[] = [];
    // Small lines with one-, two-, three- and four-byte characters, enough to refill the 1 MiB buffer many times.
    for (let i = 0; i < 40_000; i++) lines.push(JSON.stringify({ i, s: `é€😀${'x'.repeat(i % 97)}`, v: i * 0.25 }));
    // A line whose worst-case size is past the buffer (written on its own), then small ones again.
    lines.push(JSON.stringify({ big: 'ab€'.repeat(200_000) }));
    lines.push('', '{"after":true}');
    const file = join(dir, 'a', 'events.ndjson');
    const w = new LineWriter(file, true);
    for (const l of lines) w.line(l);
    w.close();
    w.close();
    expect(readFileSync(file).equals(Buffer.from(`${lines.join('\n')}\n`, 'utf8'))).toBe(true);
  });

  it('writes an empty file when given no line', () => {
    const file = join(dir, 'empty.ndjson');
    new LineWriter(file, false).close();
    expect(readFileSync(file).length).toBe(0);
  });
});
