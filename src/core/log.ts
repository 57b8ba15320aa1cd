import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * The process logger (pino: structured JSON lines, cheap when a level is off). Level from
 * LOG_LEVEL; tests default to silent so vitest output stays readable.
 */
export const log: Logger = createLogger(process.env['LOG_LEVEL'] ?? (process.env['VITEST'] ? 'silent' : 'info'));

/** A logger with the process logger's configuration (redaction included), to stdout or `destination`. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const opts = { level, base: { pid: process.pid }, redact: { paths: ['apiKey', 'key', 'req.headers["x-api-key"]'], censor: '[redacted]' } };
  return destination ? pino(opts, destination) : pino(opts);
}

/** Sets the level of the process logger (config.logLevel). */
export function setLogLevel(level: string): void {
  log.level = level;
}
