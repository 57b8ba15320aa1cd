#!/usr/bin/env node
// The `crossbook` command: runs the compiled CLI (npm install builds it via the prepare script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const main = join(root, 'dist', 'src', 'cli', 'main.js');
if (!existsSync(main)) {
  console.error(`crossbook is not built (${main} missing): run \`npm run build\` in ${root}`);
  process.exit(1);
}
const { run } = await import(main);
await run(process.argv);
