import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMatchCommand } from '../support/pair-report.js';

const dir = mkdtempSync(join(tmpdir(), 'crossbook-match-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(content: string | undefined): { code: number; out: string[]; err: string[] } {
  const file = join(dir, `in-${Math.random().toString(36).slice(2)}.json`);
  if (content !== undefined) writeFileSync(file, content);
  return runMatchCommand(file);
}

const PAIRS = JSON.parse(readFileSync(new URL('../fixtures/matching/dev-pairs.json', import.meta.url), 'utf8')) as { a: object; b: object }[];

describe('crossbook match FILE', () => {
  it('prints the cross-platform groups of the records', () => {
    const records = [PAIRS[29]!.a, PAIRS[29]!.b, PAIRS[35]!.a, PAIRS[35]!.b, PAIRS[6]!.a];
    const r = run(JSON.stringify(records));
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    const { groups } = JSON.parse(r.out.join('\n')) as { groups: Record<string, unknown>[] };
    expect(groups).toEqual([
      {
        group_id: 1,
        title: 'Buffalo Bills at Jacksonville Jaguars: Buffalo Bills to win',
        market_class: 'moneyline',
        market_type: 'moneyline',
        period: 'full',
        line: null,
        side: 'away',
        player: null,
        team: 'Buffalo Bills',
        event_id: 'nfl-2026-01-11-buf-jax',
        event_name: 'Buffalo Bills at Jacksonville Jaguars',
        game_title: 'Buffalo Bills at Jacksonville Jaguars',
        event_date: '2026-01-11',
        markets: [
          {
            platform: 'kalshi',
            market_id: 'KXNFLGAME-26JAN11BUFJAC-BUF',
            inverted: false,
            confidence: 1,
            reasons: ['kind', 'league', 'period', 'date', 'teams', 'team'],
          },
          {
            platform: 'polymarket',
            market_id: 'nfl-buf-jax-2026-01-11',
            inverted: false,
            confidence: 1,
            reasons: ['kind', 'league', 'period', 'date', 'teams', 'team'],
          },
        ],
      },
      {
        group_id: 2,
        title: 'New England Patriots at Seattle Seahawks: Seattle Seahawks -2.5',
        market_class: 'spread',
        market_type: 'spread',
        period: 'full',
        line: -2.5,
        side: 'home',
        player: null,
        team: 'Seattle Seahawks',
        event_id: 'nfl-2026-09-09-ne-sea',
        event_name: 'New England Patriots at Seattle Seahawks',
        game_title: 'New England Patriots at Seattle Seahawks',
        event_date: '2026-09-09',
        markets: [
          {
            platform: 'kalshi',
            market_id: 'KXNFLSPREAD-26SEP09NESEA-SEA2',
            inverted: false,
            confidence: 0.85,
            reasons: ['kind', 'league', 'period', 'team', 'line'],
          },
          { platform: 'polymarket', market_id: null, inverted: true, confidence: 0.85, reasons: ['kind', 'league', 'period', 'team', 'line'] },
        ],
      },
    ]);
  });

  it('prints no group for records of one platform', () => {
    const r = run(JSON.stringify([PAIRS[0]!.a, { ...PAIRS[0]!.b, platform: 'kalshi', market_id: 'X' }]));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out.join('\n'))).toEqual({ groups: [] });
  });

  it.each([
    ['not JSON', '[{"platform": "kalshi", "title": "x"', /is not valid JSON/],
    ['not an array', '{"platform": "kalshi", "title": "x"}', /must hold a JSON array of market records, got object/],
    ['null', 'null', /got null/],
    ['a record without title', '[{"platform": "kalshi", "title": "Will X?"}, {"platform": "kalshi"}]', /record 1: title: required/],
    ['a record without platform', '[{"title": "Will X?"}]', /record 0: platform: required/],
    ['an empty title', '[{"platform": "kalshi", "title": "  "}]', /record 0: title: title must be a non-empty string/],
    ['a wrong type', '[{"platform": "kalshi", "title": "x", "close_time": true}]', /record 0: close_time:/],
    ['a record that is not an object', '["kalshi"]', /record 0:/],
  ])('rejects %s with exit code 2', (_name, content, message) => {
    const r = run(content);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(message);
  });

  it('rejects a missing file with exit code 2', () => {
    const r = run(undefined);
    expect(r.code).toBe(2);
    expect(r.err[0]).toMatch(/cannot read/);
  });
});
