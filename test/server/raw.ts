import net from 'node:net';

/** What a raw exchange got back. */
export interface Exchange {
  /** Everything the server sent. */
  readonly text: string;
  /** The server closed the connection (rather than the guard timeout below firing). */
  readonly closed: boolean;
}

/**
 * Sends raw bytes to 127.0.0.1:`port` and collects the answer until the server closes, or until
 * `settleMs` passes without a close (a failure guard, not a timing assertion: a keep-alive answer
 * is complete then). `segment`: bytes per write, each written once the previous one has left this
 * process's socket and a turn of the event loop has passed, as a head arrives over a real network
 * (1,460-byte TCP segments) in several reads.
 */
export function exchange(bytes: string | Buffer, settleMs: number, port: number, segment = 0): Promise<Exchange> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1', noDelay: true });
    let text = '';
    const done = (closed: boolean): void => {
      clearTimeout(t);
      s.destroy();
      resolve({ text, closed });
    };
    const t = setTimeout(() => done(false), settleMs);
    s.on('data', (d) => (text += d.toString('latin1')));
    s.on('error', () => undefined);
    s.on('close', () => done(true));
    const all = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
    if (segment <= 0) return void s.write(all);
    let off = 0;
    const next = (): void => {
      if (off >= all.length || s.destroyed) return;
      const piece = all.subarray(off, off + segment);
      off += segment;
      // The write's callback runs once the piece is handed to the kernel; the next waits a turn more.
      s.write(piece, () => setImmediate(next));
    };
    next();
  });
}

/**
 * The `settleMs` every raw test passes: each expects the server to close (an answer with
 * Connection: close, a refusal, or an unanswered head), so the close is the event waited for and
 * this is only its failure guard, sized for a busy machine (it was 3 s and 5 s per file).
 */
export const CLOSE_GUARD_MS = 30_000;

/** The status codes of every response in `text`. */
export const statuses = (text: string): number[] => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

/** The JSON body of the first response in `text`. */
export const bodyOf = (text: string): Record<string, unknown> => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
