import type { Registry } from 'prom-client';
import { readGauge, totalCounter } from '../server/routes/metrics.js';
import type { Capture } from './capture.js';

/** The capture's /metrics, read at scrape time: bytes on disk, records waiting to be written (lag), drops, paused. */
export function registerCaptureMetrics(registry: Registry, capture: Capture): void {
  const registers = [registry];
  readGauge(registers, 'crossbook_capture_bytes', 'Capture segment bytes on disk (DATA_DIR/capture, after retention)', () => capture.stats.bytes);
  readGauge(
    registers,
    'crossbook_capture_lag_records',
    'Captured records not yet written (buffered, compressing or being written)',
    () => capture.stats.pending,
  );
  readGauge(registers, 'crossbook_capture_paused', '1 while capture is paused (disk nearly full)', () => (capture.stats.paused ? 1 : 0));
  totalCounter(registers, 'crossbook_capture_records_total', 'Records appended to the capture log', () => capture.stats.records);
  totalCounter(registers, 'crossbook_capture_dropped_total', 'Records not kept: capture paused, its buffer full, or a failed write', () => capture.stats.drops);
  totalCounter(registers, 'crossbook_capture_written_bytes_total', 'Compressed bytes written to capture segments', () => capture.stats.written);
  totalCounter(registers, 'crossbook_capture_raw_bytes_total', 'Raw bytes of the records written to capture segments', () => capture.stats.rawWritten);
}
