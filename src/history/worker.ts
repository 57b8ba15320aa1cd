/**
 * The history index's thread (`client.ts` starts it): opens the capture store on DATA_DIR itself,
 * follows what the main thread's writer wrote (`sync` with the last sequence number written),
 * writes its slices, answers `rebuild` (the markets of an `as_of` read at a moment) and, on
 * `close`, indexes the rest, writes its open slice and ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CaptureStore } from '../capture/index.js';
import { createLogger } from '../core/log.js';
import { HISTORY_LIMITS, HistoryIndex } from './index.js';
import type { HistoryAnswer, HistoryProgress, HistoryRequest, HistoryWorkerData } from './protocol.js';

const data = workerData as HistoryWorkerData;
const port = parentPort!;
const log = createLogger(data.logLevel).child({ component: 'history', thread: 'history' });
const index = new HistoryIndex(new CaptureStore(data.dir), data.venues, { sliceMs: data.sliceMs, after: data.after, from: data.from, tail: data.tail, log });

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

async function answer(m: HistoryRequest): Promise<HistoryAnswer> {
  switch (m.type) {
    case 'sync':
      Object.assign(HISTORY_LIMITS, m.limits);
      await index.sync(m.upTo);
      return { type: 'done', id: m.id, progress: progress() };
    case 'rebuild':
      return { type: 'done', id: m.id, progress: progress(), rebuilt: index.rebuild(m.t, m.markets) };
    case 'close':
      await index.close(m.upTo);
      return { type: 'done', id: m.id, progress: progress() };
  }
}

port.on('message', (m: HistoryRequest) => {
  answer(m).then(
    (a) => {
      port.postMessage(a);
      if (m.type === 'close') port.close();
    },
    (e: unknown) => port.postMessage({ type: 'failed', id: m.id, progress: progress(), error: (e as Error).message } satisfies HistoryAnswer),
  );
});
