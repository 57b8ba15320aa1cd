#!/usr/bin/env node
// The `crossbook` command: runs the compiled CLI (npm install builds it via the prepare script).
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const main = join(root, 'dist', 'src', 'cli', 'main.js');
if (!existsSync(main)) {
  console.error(`crossbook is not built (${main} missing): run \`npm run build\` in ${root}`);
  process.exit(1);
}
// The service's heap is mostly long-lived state (100k markets: over 1 GB live); V8's default growth
// lets it grow up to about twice that between full collections. Growing by 15% keeps RSS near the
// live heap. Set before the state is built, unless the command line or NODE_OPTIONS says otherwise.
const heapFlag = '--heap-growing-percent';
if (process.argv[2] === 'serve' && ![...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes(heapFlag.slice(2))))
  setFlagsFromString(`${heapFlag}=15`);
const { run } = await import(main);
await run(process.argv);
