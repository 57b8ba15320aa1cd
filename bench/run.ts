/**
 * Runs every benchmark, each in its own `node --expose-gc` process so one cannot pollute another's
 * heap or JIT state, then rebuilds their blocks of BENCHMARKS.md from bench/results/*.json
 * (bench/report.ts: text written by hand around the blocks is kept).
 *
 *   node dist/bench/run.js                 all benchmarks, then their blocks
 *   node dist/bench/run.js ingest memory   only these, and only their blocks
 *   node dist/bench/run.js --report        only rebuild every stored result's block
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, relative, resolve } from 'node:path';
import { readResult, repoRoot, RESULTS_DIR, type ResultFile } from './lib.js';
import { updateReport } from './report.js';

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

// The results to rebuild: the benchmarks this run picked, or every stored one.
const stored = existsSync(RESULTS_DIR)
  ? readdirSync(RESULTS_DIR)
      .filter((f) => f.endsWith('.json'))
      .map((f) => basename(f, '.json'))
  : [];
const results = order(picked.length ? picked.filter((n) => stored.includes(n)) : stored)
  .map((n) => readResult(n))
  .filter((r): r is ResultFile => r !== undefined);
const reportPath = resolve(root, 'BENCHMARKS.md');
writeFileSync(reportPath, updateReport(existsSync(reportPath) ? readFileSync(reportPath, 'utf8') : undefined, results));
console.log(`\nBENCHMARKS.md: ${results.length} block(s) rebuilt from bench/results/ (${results.map((r) => r.name).join(', ')}); the rest kept`);
if (failed.length) {
  console.error(`failed: ${failed.join(', ')} (their previous results, if any, were kept)`);
  process.exitCode = 1;
}
