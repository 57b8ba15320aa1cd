/**
 * Runs every benchmark, each in its own `node --expose-gc` process so one cannot pollute another's
 * heap or JIT state, then rebuilds BENCHMARKS.md from bench/results/*.json.
 *
 *   node dist/bench/run.js                 all benchmarks, then BENCHMARKS.md
 *   node dist/bench/run.js ingest memory   only these (others keep their last results)
 *   node dist/bench/run.js --report        only rebuild BENCHMARKS.md
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, relative, resolve } from 'node:path';
import { markdownTable, readResult, repoRoot, RESULTS_DIR, type ResultFile } from './lib.js';

/** The engine benchmarks, first and in this order; any other `*.bench.js` under dist/bench/ follows by name. */
const FIRST = ['book', 'ingest', 'memory', 'restart'];

const root = repoRoot();
const order = (names: Iterable<string>): string[] => {
  const all = [...new Set(names)];
  return [...FIRST.filter((n) => all.includes(n)), ...all.filter((n) => !FIRST.includes(n)).sort()];
};

/** name → script path relative to the root, for every compiled `*.bench.js`. */
function scripts(): Map<string, string> {
  const out = new Map<string, string>();
  const dir = resolve(root, 'dist/bench');
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { recursive: true, encoding: 'utf8' }))
    if (e.endsWith('.bench.js')) out.set(basename(e, '.bench.js'), relative(root, resolve(dir, e)));
  return out;
}

const args = process.argv.slice(2);
const reportOnly = args.includes('--report');
const picked = args.filter((a) => !a.startsWith('--'));
const found = scripts();
for (const p of picked) if (!found.has(p)) throw new Error(`unknown benchmark ${p} (compiled: ${order(found.keys()).join(', ') || 'none, run npx tsc -p .'})`);

const failed: string[] = [];
if (!reportOnly) {
  if (found.size === 0) throw new Error('no dist/bench/**/*.bench.js: build first with npx tsc -p .');
  for (const name of picked.length ? order(picked) : order(found.keys())) {
    const file = found.get(name)!;
    console.log(`\n=== ${name}: node --expose-gc ${file}\n`);
    const t0 = performance.now();
    const r = spawnSync(process.execPath, ['--expose-gc', file], { cwd: root, stdio: 'inherit' });
    const sec = (performance.now() - t0) / 1000;
    console.log(`=== ${name}: ${r.status === 0 ? 'done' : `FAILED (exit ${r.status ?? r.signal})`} in ${sec.toFixed(1)} s`);
    if (r.status !== 0) failed.push(name);
  }
}

const stored = existsSync(RESULTS_DIR)
  ? readdirSync(RESULTS_DIR)
      .filter((f) => f.endsWith('.json'))
      .map((f) => basename(f, '.json'))
  : [];
const results = order(stored)
  .map((n) => readResult(n))
  .filter((r): r is ResultFile => r !== undefined);
writeFileSync(resolve(root, 'BENCHMARKS.md'), render(results));
console.log(`\nBENCHMARKS.md rebuilt from ${results.length} result file(s) in bench/results/`);
if (failed.length) {
  console.error(`failed: ${failed.join(', ')} (their previous results, if any, were kept)`);
  process.exitCode = 1;
}

function render(files: readonly ResultFile[]): string {
  const out: string[] = [];
  out.push(
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
    'the benchmark that ran just before).',
    '',
  );
  const targets = files.flatMap((f) => f.sections.filter((s) => s.target).map((s) => ({ f, s })));
  if (targets.length) {
    out.push('## Targets', '', '| benchmark | target and measurement | met |', '| --- | --- | --- |');
    for (const { f, s } of targets) out.push(`| ${f.title} | ${s.target!.text} | ${s.target!.met ? 'yes' : '**no**'} |`);
    out.push('');
  }
  for (const f of files) {
    const m = f.machine;
    out.push(
      `## ${f.title}`,
      '',
      f.intro,
      '',
      `Measured ${m.date.slice(0, 16).replace('T', ' ')} UTC on ${m.cpu} (${m.cores} cores, ${m.memGiB} GiB), Node ${m.node}, ${m.platform}${typeof m.load1 === 'number' ? `, load average ${m.load1}` : ''}; command \`${f.command}\`.`,
      '',
    );
    for (const s of f.sections) {
      if (f.sections.length > 1) out.push(`### ${s.title}`, '');
      out.push(markdownTable(s), '');
      if (s.target) out.push(`Target: ${s.target.text}: **${s.target.met ? 'met' : 'not met'}**.`, '');
      out.push(s.interpretation, '');
      if (s.notes?.length) out.push(...s.notes.map((n) => `- ${n}`), '');
    }
  }
  return out.join('\n');
}
