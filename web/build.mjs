// Builds the dashboard (web/src, Preact + uPlot) into dist/web with esbuild: one hashed script and
// one hashed stylesheet under dist/web/app/assets/, and dist/web/index.html that loads them. The
// server (src/server/static.ts) serves index.html at / and /app/<page>, the assets at /app/assets/.
// Prints the bundle size (raw and gzip), which README quotes.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'dist', 'web');
const assets = join(out, 'app', 'assets');
rmSync(out, { recursive: true, force: true });
mkdirSync(assets, { recursive: true });

const result = await build({
  entryPoints: [join(here, 'src', 'main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  platform: 'browser',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: join(here, 'tsconfig.json'),
  outdir: assets,
  entryNames: 'app-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
});

const files = Object.keys(result.metafile.outputs).filter((f) => !f.endsWith('.map'));
const js = files.find((f) => f.endsWith('.js'));
const css = files.find((f) => f.endsWith('.css'));
if (!js || !css) throw new Error(`web build: expected one .js and one .css output, got ${files.join(', ')}`);
const template = readFileSync(join(here, 'index.html'), 'utf8');
writeFileSync(join(out, 'index.html'), template.replace('%CSS%', `/app/assets/${basename(css)}`).replace('%JS%', `/app/assets/${basename(js)}`));
let raw = 0;
let gz = 0;
for (const f of [js, css]) {
  const b = readFileSync(f);
  raw += b.length;
  gz += gzipSync(b, { level: 9 }).length;
}
console.log(`web: dist/web (${basename(js)}, ${basename(css)}): ${(raw / 1024).toFixed(1)} KiB, ${(gz / 1024).toFixed(1)} KiB gzip`);
