import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The process logger (pino: structured JSON lines, cheap when a level is off). Level from
 * LOG_LEVEL; tests default to silent so vitest output stays readable.
 */
export const log: Logger = pino({
  level: process.env['LOG_LEVEL'] ?? (process.env['VITEST'] ? 'silent' : 'info'),
  base: { pid: process.pid },
  redact: { paths: ['apiKey', 'key', 'req.headers["x-api-key"]'], censor: '[redacted]' },
});

/** Sets the level of the process logger (config.logLevel). */
export function setLogLevel(level: string): void {
  log.level = level;
}
