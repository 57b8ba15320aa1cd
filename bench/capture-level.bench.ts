/**
 * Which Brotli quality the capture log's blocks use (src/capture/store.ts): bytes on disk against
 * compression CPU, on blocks built as the writer builds them (BlockBuilder: 1 MiB of one venue's
 * records, 24-byte record headers, a flush marker per 256 frames) from Kalshi `orderbook_delta`
 * frames, and the same blocks with deflate for reference. Compression runs on libuv's thread pool,
 * so this is CPU the machine pays beside ingest, not event-loop time. Synthetic, seeded frames
 * (bench/gen.ts), whose random ids and sizes compress worse than a real venue's.
 */
import { brotliCompressSync, constants, deflateRawSync } from 'node:zlib';
import { BlockBuilder, KIND } from '../src/capture/record.js';
import { BROTLI_QUALITY } from '../src/capture/store.js';
import { kalshiStream, T0 } from './gen.js';
import { begin, record, type Row } from './lib.js';

const DELTAS = Number(process.env['LEVEL_DELTAS'] ?? 60_000);
const REPEAT = 3;

const frames = kalshiStream({ seed: 11, markets: 10_000, sids: 50, levels: 10, deltas: DELTAS }).deltas;
const rawFrames = frames.reduce((n, f) => n + Buffer.byteLength(f), 0);
const blocks: Buffer[] = [];
const b = new BlockBuilder();
let seq = 1;
for (let i = 0; i < frames.length; i++) {
  b.push(KIND.frame, 1, seq++, T0 + i, frames[i]!);
  if (i % 256 === 255) b.push(KIND.flush, 0, seq++, T0 + i, '');
  if (b.size >= 1 << 20) blocks.push(b.finish().body);
}
if (b.length > 0) blocks.push(b.finish().body);
const rawBlocks = blocks.reduce((n, x) => n + x.length, 0);

/** Compressed bytes and CPU ns per frame of `fn` over every block (best of REPEAT, CPU of this thread). */
function measure(fn: (x: Buffer) => Buffer): { bytes: number; ns: number } {
  let best = Infinity;
  let bytes = 0;
  for (let r = 0; r < REPEAT; r++) {
    const u0 = process.cpuUsage();
    bytes = 0;
    for (const x of blocks) bytes += fn(x).length;
    const u = process.cpuUsage(u0);
    best = Math.min(best, ((u.user + u.system) * 1000) / frames.length);
  }
  return { bytes, ns: best };
}

begin(
  'Capture block compression',
  `Brotli quality for the capture log's blocks: ${frames.length.toLocaleString('en-US')} Kalshi delta frames (${(rawFrames / frames.length).toFixed(0)} bytes each) in ${blocks.length} blocks of about 1 MiB as the capture writer builds them. Synthetic, seeded (bench/gen.ts).`,
);
const brotli = (q: number) => (x: Buffer) =>
  brotliCompressSync(x, { params: { [constants.BROTLI_PARAM_QUALITY]: q, [constants.BROTLI_PARAM_LGWIN]: 22, [constants.BROTLI_PARAM_SIZE_HINT]: x.length } });
const rows: Row[] = [];
for (const q of [1, 2, 3, 4, 5]) {
  const m = measure(brotli(q));
  rows.push({
    label: `Brotli quality ${q}${q === 2 ? ' (used)' : ''}`,
    baseline: q === 2,
    ns: m.ns,
    perFrame: m.bytes / frames.length,
    smaller: rawFrames / m.bytes,
  });
}
const d = measure((x) => deflateRawSync(x, { level: 6 }));
rows.push({ label: 'deflate level 6', ns: d.ns, perFrame: d.bytes / frames.length, smaller: rawFrames / d.bytes });
const pick = rows[BROTLI_QUALITY - 1]!;
record(
  {
    title: 'Bytes on disk against compression CPU',
    columns: [
      { key: 'ns', title: 'CPU ns per frame', digits: 0 },
      { key: 'perFrame', title: 'bytes per frame on disk', digits: 1 },
      { key: 'smaller', title: 'raw frame ÷ on disk', digits: 2 },
    ],
    ratio: { metric: 'ns', title: 'CPU vs the quality used' },
    target: { text: 'captured frames ≥ 5× smaller on disk than the raw frames', met: (pick['smaller'] as number) >= 5 },
    interpretation: `Quality ${BROTLI_QUALITY} keeps a ${(rawFrames / frames.length).toFixed(0)}-byte frame in ${(pick['perFrame'] as number).toFixed(1)} bytes (record header and flush markers included) for ${Math.round(pick['ns'] as number).toLocaleString('en-US')} ns of compression per frame; the table says what each other level buys or costs against it. Raw block bytes ${rawBlocks.toLocaleString('en-US')}.`,
    notes: [`Best of ${REPEAT} passes over every block, CPU time of the compressing thread (process.cpuUsage, synchronous calls).`],
  },
  rows,
);
