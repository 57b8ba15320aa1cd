// Compares the history slices two builds wrote over the same capture (e.g. `SLICED=1
// bench/scale/history-heap.mjs` run by each build on its own copy of one DATA_DIR):
//   node bench/scale/history-slices-cmp.mjs DIR_A DIR_B
// DIR_*: a `capture/_history` directory. For each slice file: whether the files are byte-identical
// (`cmp`), whether they hold the same markets and venues, and how many parts (a market's start and
// events, a venue's feed events; each Brotli-compressed on its own) decompress to the same bytes.
// Files whose parts are all the same bytes but not in the same order are the same slice to a read.
// Prints a JSON line per slice, then the differing parts of the first few slices, decoded.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { Packr, unpack } from 'msgpackr';

const [a, b] = process.argv.slice(2);
if (!a || !b) {
  console.error('usage: node bench/scale/history-slices-cmp.mjs HISTORY_DIR_A HISTORY_DIR_B');
  process.exit(2);
}
const MAGIC2 = Buffer.from('CBHIST2\n');
const packr = new Packr({ variableMapSize: true });

/** A slice file's directory and a reader of its parts' bytes (the CBHIST2 layout, src/history/slice.ts). */
function open(file) {
  const buf = readFileSync(file);
  if (!buf.subarray(0, 8).equals(MAGIC2) || !buf.subarray(buf.length - 8).equals(MAGIC2)) throw new Error(`${file}: not a CBHIST2 slice`);
  const len = buf.readUInt32LE(buf.length - 12);
  const dir = packr.unpack(buf.subarray(buf.length - 12 - len, buf.length - 12));
  const part = ([off, n]) => brotliDecompressSync(buf.subarray(8 + off, 8 + off + n));
  return { buf, dir, part };
}

const names = (d) =>
  readdirSync(d)
    .filter((n) => n.endsWith('.hist'))
    .sort();
const na = names(a);
const nb = names(b);
if (na.join() !== nb.join()) console.log(JSON.stringify({ onlyA: na.filter((n) => !nb.includes(n)), onlyB: nb.filter((n) => !na.includes(n)) }));
let shown = 0;
const total = { files: 0, identicalFiles: 0, parts: 0, sameParts: 0 };
for (const n of na.filter((x) => nb.includes(x))) {
  const fa = open(join(a, n));
  const fb = open(join(b, n));
  const r = {
    slice: n,
    bytes: [fa.buf.length, fb.buf.length],
    identical: fa.buf.equals(fb.buf),
    markets: [0, 0],
    onlyA: 0,
    onlyB: 0,
    sameParts: 0,
    diffParts: [],
  };
  for (const kind of ['m', 'v']) {
    const ka = Object.keys(fa.dir[kind]);
    const kb = new Set(Object.keys(fb.dir[kind]));
    if (kind === 'm') r.markets = [ka.length, kb.size];
    for (const k of ka) {
      if (!kb.has(k)) {
        r.onlyA++;
        continue;
      }
      const pa = fa.part(fa.dir[kind][k]);
      const pb = fb.part(fb.dir[kind][k]);
      if (pa.equals(pb)) r.sameParts++;
      else r.diffParts.push([kind, k, pa, pb]);
    }
    r.onlyB += [...kb].filter((k) => fa.dir[kind][k] === undefined).length;
  }
  total.files++;
  if (r.identical) total.identicalFiles++;
  total.sameParts += r.sameParts;
  total.parts += r.sameParts + r.diffParts.length;
  const diffs = r.diffParts;
  console.log(JSON.stringify({ ...r, diffParts: diffs.length }));
  for (const [kind, k, pa, pb] of diffs.slice(0, 3)) {
    if (shown++ >= 6) break;
    console.log(`  ${kind} ${JSON.stringify(k)}\n    A ${JSON.stringify(unpack(pa)).slice(0, 600)}\n    B ${JSON.stringify(unpack(pb)).slice(0, 600)}`);
  }
}
console.log(JSON.stringify(total));
