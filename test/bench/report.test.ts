import { describe, expect, it } from 'vitest';
import type { ResultFile } from '../../bench/lib.js';
import { renderBlock, updateReport } from '../../bench/report.js';

const machine = { cpu: 'CPU', cores: 2, memGiB: 4, node: 'v20', platform: 'linux-x64', date: '2026-11-24T10:00:00.000Z', load1: 1.5 };

function result(name: string, title: string, figure: number, met = true): ResultFile {
  return {
    name,
    title,
    intro: `${title} intro.`,
    command: `node dist/bench/${name}.bench.js`,
    machine,
    sections: [
      {
        title: 'only',
        columns: [{ key: 'v', title: 'ops/s' }],
        rows: [{ label: 'base', v: figure, baseline: true }],
        target: { text: `at least ${figure}`, met },
        interpretation: `ran at ${figure}.`,
      },
    ],
  };
}

describe('BENCHMARKS.md rebuild', () => {
  it('builds a first report with a targets table and one block per result', () => {
    const text = updateReport(undefined, [result('a', 'Alpha', 1), result('b', 'Beta', 2, false)]);
    expect(text).toContain('| Alpha | at least 1 | yes |\n| Beta | at least 2 | **no** |\n<!-- /bench:targets -->');
    expect(text).toContain(renderBlock(result('a', 'Alpha', 1)));
    expect(text.indexOf('<!-- bench:a -->')).toBeLessThan(text.indexOf('<!-- bench:b -->'));
  });

  it('rebuilds only the blocks and target rows it is given, keeping hand-written text byte for byte', () => {
    const first = updateReport(undefined, [result('a', 'Alpha', 1), result('b', 'Beta', 2)]);
    const handA = '\n\n### Live variant of Alpha\n\nwritten by hand, 0.83×.\n';
    const edited = first
      .replace('<!-- /bench:a -->', `<!-- /bench:a -->${handA}`)
      .replace('| Beta | at least 2 | yes |', '| Beta | at least 2, edited by hand | yes |')
      .concat('\n## A section with no result\n\nkept.\n');
    const next = updateReport(edited, [result('a', 'Alpha', 7, false)]);
    expect(next).toContain(renderBlock(result('a', 'Alpha', 7, false)) + handA);
    expect(next).not.toContain('ran at 1.');
    expect(next).toContain('| Alpha | at least 7 | **no** |\n| Beta | at least 2, edited by hand | yes |');
    expect(next).toContain('## A section with no result\n\nkept.\n');
    // Nothing else moved: undoing the rebuilt parts gives the edited text back.
    expect(
      next
        .replace(renderBlock(result('a', 'Alpha', 7, false)), renderBlock(result('a', 'Alpha', 1)))
        .replace('| Alpha | at least 7 | **no** |', '| Alpha | at least 1 | yes |'),
    ).toBe(edited);
  });

  it('appends a result that has no block yet, and its target row after the others', () => {
    const first = updateReport(undefined, [result('a', 'Alpha', 1)]);
    const next = updateReport(first, [result('c', 'Gamma', 3)]);
    expect(next).toContain('| Alpha | at least 1 | yes |\n| Gamma | at least 3 | yes |');
    expect(next.trimEnd().endsWith('<!-- /bench:c -->')).toBe(true);
  });

  it('refuses a report without the targets markers instead of writing over it', () => {
    expect(() => updateReport('# Benchmarks\n\nhand-written only\n', [result('a', 'Alpha', 1)])).toThrow(/bench:targets/);
  });
});
