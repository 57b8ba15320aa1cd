/**
 * The capture log (src/capture/): how small the segments are, and how fast a window is read back as
 * normalized events. (What capturing costs ingest: bench/ingest.bench.ts, capture on vs off on the
 * path that runs.)
 *
 * (a) Kalshi `orderbook_delta` text frames enter the real Kalshi mapper on the feed runtime
 *     (createVenueFeed: socket events, the capture hook, FramePath), every event applied to an
 *     EngineState, and the runtime appends each frame to a Capture on a temporary DATA_DIR.
 * (b) bytes per frame on disk against the raw frame text (that run's segments).
 * (c) replay: the window read back (readBatches: k-way merge, Brotli decompress) through ReplayFeed
 *     (the live frame path and mapper) into NDJSON lines (the /replay line writer and 64 KiB chunks),
 *     against reading the records alone; and GET /api/v2/replay over HTTP on the real server.
 *
 * Synthetic, seeded traffic in Kalshi's wire format (bench/gen.ts). Env: CAPTURE_DELTAS, CAPTURE_MARKETS.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type WebSocket from 'ws';
import { Capture, CaptureStore, readBatches, ReplayFeed, type CaptureSink } from '../src/capture/index.js';
import { eventLineWriter, itemLine, ndjsonChunks } from '../src/capture/ndjson.js';
import { buildCore, buildHttp } from '../src/compose.js';
import { loadConfig } from '../src/config/load.js';
import { VirtualClock, type Clock } from '../src/core/clock.js';
import { log } from '../src/core/log.js';
import { Persistence } from '../src/persist/store.js';
import { applyEvent, EngineState } from '../src/state/engine.js';
import { createVenueFeed } from '../src/venues/common/runtime.js';
import { KalshiMapper } from '../src/venues/kalshi/mappers.js';
import { kalshiStream, T0 } from './gen.js';
import { begin, record } from './lib.js';

const num = (name: string, def: number): number => Number(process.env[name] ?? def);
const DELTAS = num('CAPTURE_DELTAS', 300_000);
const MARKETS = num('CAPTURE_MARKETS', 2_000);
/** Frames handed to the runtime per event-loop turn, about one socket read. */
const BATCH = 256;

const config = loadConfig({ env: {} });
const kalshi = config.venues.find((v) => v.protocol === 'kalshi')!;
const stream = kalshiStream({ seed: 7, markets: MARKETS, sids: Math.ceil(MARKETS / 200), levels: 10, deltas: DELTAS });
const frames = [...stream.snapshots, ...stream.deltas];
const rawBytes = frames.reduce((n, f) => n + Buffer.byteLength(f), 0);

class Socket extends EventEmitter {
  readyState = 1;
  send(): void {}
  ping(): void {}
  terminate(): void {}
}

/** One timed ingest: frames through the runtime (capture on when `sink`), applied to a fresh state. */
async function ingest(sink: Capture | undefined): Promise<{ sec: number; events: number }> {
  const state = new EngineState(config.venues, { tradeCapacity: 10_000 });
  let socket: Socket | undefined;
  const feed = createVenueFeed(
    {
      venue: kalshi,
      endpoints: { rest: 'http://127.0.0.1:9/', ws: 'ws://127.0.0.1:9/' },
      ingest: { ...config.ingest, heartbeatMs: 3_600_000 },
      log,
      capture: sink as CaptureSink | undefined,
    },
    'kalshi',
    (rt) => ({
      mapper: new KalshiMapper(rt.venue, rt.log, { stats: rt.stats }),
      start: () => void rt.stream({ url: 'ws://127.0.0.1:9/', onOpen: () => undefined }),
    }),
    { createWebSocket: () => (socket = new Socket()) as unknown as WebSocket },
  );
  let events = 0;
  const sub = feed.events$.subscribe((e) => {
    events++;
    applyEvent(state, e);
  });
  socket!.emit('open');
  const bufs = frames.map((f) => Buffer.from(f));
  const t0 = performance.now();
  for (let i = 0; i < bufs.length; i += BATCH) {
    for (let j = i; j < Math.min(i + BATCH, bufs.length); j++) socket!.emit('message', bufs[j], false);
    await new Promise<void>((r) => setImmediate(r));
  }
  if (sink) await sink.flush();
  const sec = (performance.now() - t0) / 1000;
  sub.unsubscribe();
  return { sec, events };
}

// A clock that stands still at T0: the bench times the capture, not timers.
const clock: Clock = new VirtualClock(T0);

begin(
  'Capture log',
  `Capturing every frame a feed receives (src/capture/): its cost to ingest, bytes on disk per frame, and reading a window back as normalized events. ${frames.length.toLocaleString('en-US')} Kalshi frames (${MARKETS.toLocaleString('en-US')} snapshots, ${DELTAS.toLocaleString('en-US')} deltas; synthetic, seeded, bench/gen.ts).`,
);

const dir = mkdtempSync(join(tmpdir(), 'crossbook-bench-capture-'));
try {
  // Capture on: the frames through the feed runtime into a Capture, written and flushed. What
  // capturing costs ingest is measured on the path that runs, in bench/ingest.bench.ts.
  const kept = new Capture(new CaptureStore(join(dir, 'round-0', 'capture')), { clock, log });
  await ingest(kept);
  await kept.close();

  const stats = kept.stats;
  record(
    {
      title: 'Bytes per captured frame',
      columns: [
        { key: 'bytes', title: 'bytes' },
        { key: 'perFrame', title: 'bytes per frame', digits: 1 },
      ],
      ratio: { metric: 'bytes', title: 'vs raw' },
      target: { text: 'segments ≥ 5× smaller than the raw frames', met: rawBytes / stats.written >= 5 },
      interpretation: `A frame of ${(rawBytes / frames.length).toFixed(0)} bytes takes ${(stats.written / frames.length).toFixed(1)} bytes on disk: ${(rawBytes / stats.written).toFixed(1)}× smaller (Brotli over blocks of about 1 MiB of one venue's frames; record headers of 24 bytes inside the block included).`,
    },
    [
      { label: 'raw frame text', baseline: true, bytes: rawBytes, perFrame: rawBytes / frames.length },
      { label: 'capture segments on disk', bytes: stats.written, perFrame: stats.written / frames.length },
    ],
  );

  // (c) Reading back.
  const store = new CaptureStore(join(dir, 'round-0', 'capture'));
  const range = { from: 0, to: Number.MAX_SAFE_INTEGER, flushes: false };
  let t0 = performance.now();
  let records = 0;
  for await (const b of readBatches(store, range)) records += b.length;
  const readSec = (performance.now() - t0) / 1000;
  t0 = performance.now();
  let bytes = 0;
  let count = 0;
  const write = eventLineWriter(config.venues);
  const line = (seq: number, e: Parameters<typeof write>[1]): string | undefined => {
    const l = write(seq, e);
    if (l !== undefined) count++;
    return l;
  };
  for await (const c of ndjsonChunks(new ReplayFeed(config.venues).items(readBatches(store, range)), itemLine(line))) bytes += c.length;
  const replaySec = (performance.now() - t0) / 1000;
  const http = await overHttp(join(dir, 'round-0'));
  record(
    {
      title: 'Replay: a window read back as normalized events',
      columns: [
        { key: 'count', title: 'records or events' },
        { key: 'sec', title: 'seconds', digits: 3 },
        { key: 'rate', title: 'per second' },
        { key: 'mb', title: 'NDJSON MiB', digits: 1 },
      ],
      ratio: { metric: 'rate', title: 'rate vs reading alone' },
      // The /replay target is judged on the normalized cache, in bench/replay.bench.ts; this is the frames path.
      interpretation: `Reading the segments alone (decompress, decode, merge) gives ${Math.round(records / readSec).toLocaleString('en-US')} records/s; through the live mapper into NDJSON lines ${Math.round(count / replaySec).toLocaleString('en-US')} events/s; over HTTP (GET /api/v2/replay, uWS with backpressure, fetch reading the body) ${Math.round(http.events / http.sec).toLocaleString('en-US')} events/s. The mapper and JSON.stringify of each event are most of the cost.`,
    },
    [
      { label: 'read records (readBatches)', baseline: true, count: records, sec: readSec, rate: records / readSec },
      { label: 'records → ReplayFeed → NDJSON lines', count, sec: replaySec, rate: count / replaySec, mb: bytes / 1024 ** 2 },
      { label: 'GET /api/v2/replay over HTTP (frames path)', count: http.events, sec: http.sec, rate: http.events / http.sec, mb: http.bytes / 1024 ** 2 },
    ],
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** GET /api/v2/replay of the whole capture on the real HTTP layer, the body read by fetch. */
async function overHttp(dataDir: string): Promise<{ sec: number; events: number; bytes: number }> {
  const core = buildCore(config, { persistence: new Persistence(dataDir), log });
  const { http } = buildHttp(core);
  const port = await http.listen('127.0.0.1', 0);
  const key = core.keys.create('enterprise', 'bench').key;
  try {
    const t0 = performance.now();
    // The socket stamps receive times with the wall clock: the window is the last hour.
    const now = Date.now();
    const r = await fetch(`http://127.0.0.1:${port}/api/v2/replay?from=${now - 3_600_000}&to=${now + 60_000}`, { headers: { 'x-api-key': key } });
    let bytes = 0;
    let tail = '';
    for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      tail = (tail + Buffer.from(chunk).toString('utf8')).slice(-200);
    }
    const sec = (performance.now() - t0) / 1000;
    const end = JSON.parse(tail.trimEnd().split('\n').at(-1)!) as { type: string; count: number };
    if (end.type !== 'end') throw new Error(`replay ended with ${JSON.stringify(end)}`);
    return { sec, events: end.count, bytes };
  } finally {
    http.close();
    await core.capture?.close();
    await core.persistence.close();
  }
}
