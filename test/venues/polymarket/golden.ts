import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';

/**
 * Golden pairs (STYLE.md): `<fixture>.json` holds the venue's real frames, `<fixture>.expected.jsonl`
 * beside it the events we expect, one JSON document a line, so a reader sees what the mapper does.
 * A test compares; to regenerate after a deliberate change, run the test with UPDATE_GOLDEN=1
 * (`UPDATE_GOLDEN=1 npx vitest run test/venues/polymarket/golden.test.ts`) and review the diff.
 */
export function expectGolden(fixturePath: string, events: readonly unknown[]): void {
  const expectedPath = fixturePath.replace(/\.json$/, '.expected.jsonl');
  const lines = events.map((e) => JSON.stringify(e));
  if (process.env['UPDATE_GOLDEN'] === '1') {
    writeFileSync(expectedPath, `${lines.join('\n')}\n`);
    return;
  }
  expect(existsSync(expectedPath), `${expectedPath} is missing: run with UPDATE_GOLDEN=1 to create it`).toBe(true);
  const expected = readFileSync(expectedPath, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
  expect(events).toEqual(expected);
}
