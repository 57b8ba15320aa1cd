/**
 * BENCHMARKS.md from bench/results/*.json, without losing what people wrote around it.
 *
 * Each result file owns one block, `<!-- bench:NAME -->` … `<!-- /bench:NAME -->` (its heading,
 * machine line, tables, targets and interpretation), and its rows of the targets table, whose
 * first cell is the result's title. A rebuild replaces the blocks and rows of the results it is
 * given and nothing else: subsections written by hand after a block (before/after runs, live
 * variants, profiles) and sections with no result file stay as they are. A result with no block
 * yet is appended at the end.
 */
import { markdownTable, type ResultFile } from './lib.js';

const HEADER = [
  '# Benchmarks',
  '',
  'What the engine foundation costs, measured by the scripts in `bench/` (STYLE.md rule 9). Every figure',
  'comes with the date, machine, Node version and command of its run, and each table compares against a',
  "baseline measured in the same run. Workloads are synthetic and seeded (`bench/gen.ts`), in the venues'",
  'real wire formats. Benchmarks measure; no test asserts a timing.',
  '',
  'Reproduce: `npx tsc -p . && node dist/bench/run.js` (each benchmark runs in its own',
  '`node --expose-gc` process; `node dist/bench/run.js ingest` runs one). The 1-minute load average at',
  'the start of each run is shown because other work on the machine lowers every figure (it also counts',
  'the benchmark that ran just before). Text between `<!-- bench:… -->` markers is rebuilt from',
  '`bench/results/`; write anything else outside them.',
  '',
];

const TARGETS_OPEN = '<!-- bench:targets -->';
const TARGETS_CLOSE = '<!-- /bench:targets -->';
const TARGETS_HEAD = ['## Targets', '', '| benchmark | target and measurement | met |', '| --- | --- | --- |'];

const open = (name: string): string => `<!-- bench:${name} -->`;
const close = (name: string): string => `<!-- /bench:${name} -->`;

/** The generated text of one result file, between its markers. */
export function renderBlock(f: ResultFile): string {
  const m = f.machine;
  const out = [
    open(f.name),
    `## ${f.title}`,
    '',
    f.intro,
    '',
    `Measured ${m.date.slice(0, 16).replace('T', ' ')} UTC on ${m.cpu} (${m.cores} cores, ${m.memGiB} GiB), Node ${m.node}, ${m.platform}${typeof m.load1 === 'number' ? `, load average ${m.load1}` : ''}; command \`${f.command}\`.`,
    '',
  ];
  for (const s of f.sections) {
    if (f.sections.length > 1) out.push(`### ${s.title}`, '');
    out.push(markdownTable(s), '');
    if (s.target) out.push(`Target: ${s.target.text}: **${s.target.met ? 'met' : 'not met'}**.`, '');
    out.push(s.interpretation);
    if (s.notes?.length) out.push('', ...s.notes.map((n) => `- ${n}`));
    out.push('');
  }
  out[out.length - 1] = close(f.name);
  return out.join('\n');
}

/** The targets-table rows of one result file (one per section with a target). */
export function targetRows(f: ResultFile): string[] {
  return f.sections.filter((s) => s.target).map((s) => `| ${f.title} | ${s.target!.text} | ${s.target!.met ? 'yes' : '**no**'} |`);
}

const firstCell = (row: string): string => row.split('|')[1]?.trim() ?? '';

/** `rows` with every row of `f` replaced by its new rows, where the first of them stood (else at the end). */
function replaceRows(rows: readonly string[], f: ResultFile): string[] {
  const fresh = targetRows(f);
  const at = rows.findIndex((r) => firstCell(r) === f.title);
  const kept = rows.filter((r) => firstCell(r) !== f.title);
  if (at < 0) return [...kept, ...fresh];
  const before = rows.slice(0, at).filter((r) => firstCell(r) !== f.title).length;
  return [...kept.slice(0, before), ...fresh, ...kept.slice(before)];
}

/**
 * The report with the blocks and target rows of `results` rebuilt in `existing` (the current
 * BENCHMARKS.md, or undefined for a first build); everything else in it is kept byte for byte.
 */
export function updateReport(existing: string | undefined, results: readonly ResultFile[]): string {
  let text = existing ?? [...HEADER, TARGETS_OPEN, ...TARGETS_HEAD, TARGETS_CLOSE, ''].join('\n');
  const t0 = text.indexOf(TARGETS_OPEN);
  const t1 = text.indexOf(TARGETS_CLOSE);
  if (t0 < 0 || t1 < t0) throw new Error(`BENCHMARKS.md has no ${TARGETS_OPEN} … ${TARGETS_CLOSE} block: add the markers around the targets table`);
  const tableLines = text.slice(t0 + TARGETS_OPEN.length, t1).split('\n');
  let rows = tableLines.filter((l) => l.startsWith('| ') && !l.startsWith('| benchmark |') && !l.startsWith('| --- |'));
  for (const f of results) rows = replaceRows(rows, f);
  text = `${text.slice(0, t0)}${[TARGETS_OPEN, ...TARGETS_HEAD, ...rows, TARGETS_CLOSE].join('\n')}${text.slice(t1 + TARGETS_CLOSE.length)}`;
  for (const f of results) {
    const a = text.indexOf(open(f.name));
    const b = text.indexOf(close(f.name));
    if (a >= 0 && b > a) text = `${text.slice(0, a)}${renderBlock(f)}${text.slice(b + close(f.name).length)}`;
    else text = `${text.replace(/\n*$/, '')}\n\n${renderBlock(f)}\n`;
  }
  return text;
}
