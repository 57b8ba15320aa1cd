/**
 * The history index's thread (`client.ts` starts it): opens the capture store on DATA_DIR itself,
 * follows what the main thread's writer wrote (`sync` with the last sequence number written),
 * writes its slices and, with capture.replayCache, the normalized cache's lines (`NormLines`, from
 * the events it maps anyway), answers `rebuild` (the markets of an `as_of` read at a moment),
 * `norm` (the cache written up to a seq, for a /replay read) and, on
 * `close`, indexes the rest, writes its open slice and ends.
 */
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { CaptureStore } from '../capture/index.js';
import { NormLines } from '../capture/normcache.js';
import { createLogger } from '../core/log.js';
import { BACKGROUND_NICE, lowerThreadPriority } from '../core/priority.js';
import { HISTORY_LIMITS, HistoryIndex, NotIndexedError } from './index.js';
import type { HistoryAnswer, HistoryProgress, HistoryRequest, HistoryWorkerData } from './protocol.js';

const data = workerData as HistoryWorkerData;
// Its second pass over every frame wakes once a second for the second's records: at the main
// thread's priority it took the core the event loop was about to run on (issue 34's fan-out tail).
lowerThreadPriority(BACKGROUND_NICE);
const port = parentPort!;
const log = createLogger(data.logLevel).child({ component: 'history', thread: 'history' });
const store = new CaptureStore(data.dir);
const lines =
  data.lines &&
  new NormLines(store, data.after, data.venues, { log: log.child({ component: 'normcache' }), version: data.lines.version, maxBytes: data.lines.maxBytes });
const index = new HistoryIndex(store, data.venues, {
  sliceMs: data.sliceMs,
  after: data.after,
  from: data.from,
  tail: data.tail,
  log,
  lines,
  handed: data.handed,
});

// A bench's look at the thread's own heap (BENCHMARKS.md, the history index at 108k): every HISTORY_HEAP_SEC seconds, off by default.
const heapSec = Number(process.env['HISTORY_HEAP_SEC'] ?? 0);
if (heapSec > 0)
  setInterval(() => {
    const h = getHeapStatistics();
    const mib = (b: number): number => Math.round(b / 2 ** 20);
    log.warn(
      { heapUsed: mib(h.used_heap_size), heapTotal: mib(h.total_heap_size), external: mib(h.external_memory), indexedTo: index.indexedTo },
      'history thread heap',
    );
  }, heapSec * 1000).unref();

function progress(): HistoryProgress {
  return {
    indexedTo: index.indexedTo,
    first: index.first,
    slicesOnDisk: [...index.slicesOnDisk],
    inMemory: index.inMemory,
    stopped: index.stopped,
    written: index.written,
    gaps: index.gaps,
  };
}

async function answer(m: Exclude<HistoryRequest, { type: 'hand' }>): Promise<HistoryAnswer> {
  switch (m.type) {
    case 'sync':
      Object.assign(HISTORY_LIMITS, m.limits);
      await index.sync(m.upTo);
      return { type: 'done', id: m.id, progress: progress() };
    case 'rebuild':
      try {
        return { type: 'done', id: m.id, progress: progress(), rebuilt: index.rebuild(m.t, m.markets) };
      } catch (e) {
        if (!(e instanceof NotIndexedError)) throw e;
        return { type: 'done', id: m.id, progress: progress(), notIndexed: [e.before ?? null, e.after ?? null] };
      }
    case 'norm':
      Object.assign(HISTORY_LIMITS, m.limits);
      return { type: 'done', id: m.id, progress: progress(), norm: await index.normView(m.upTo) };
    case 'close':
      await index.close(m.upTo, m.at);
      return { type: 'done', id: m.id, progress: progress() };
    case 'hurry':
      // Read while a close catches up (before `answer`'s first await): the client waits for the close's answer, not this one.
      index.hurry();
      return { type: 'done', id: m.id, progress: progress() };
  }
}

port.on('message', (m: HistoryRequest) => {
  // Taken as the messages come, in order (a catch-up in progress indexes them when it gets to them).
  if (m.type === 'sync' || m.type === 'norm' || m.type === 'close' || m.type === 'hand') {
    if (m.lost !== undefined) index.lose(m.lost);
    if (m.handed !== undefined) index.hand(m.handed);
  }
  if (m.type === 'hand') return;
  answer(m).then(
    (a) => {
      port.postMessage(a);
      if (m.type === 'close') port.close();
    },
    (e: unknown) => port.postMessage({ type: 'failed', id: m.id, progress: progress(), error: (e as Error).message } satisfies HistoryAnswer),
  );
});
