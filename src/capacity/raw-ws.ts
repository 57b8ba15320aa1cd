import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/**
 * Called once per complete text or binary message with the bytes `data[start, end)`. The bytes are
 * only valid during the call (they live in a shared read buffer): copy what you keep.
 */
export type OnMessage = (data: Buffer, start: number, end: number) => void;

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const HEADER_END = Buffer.from('\r\n\r\n');
/**
 * One read buffer for every client: `onread` fills it and calls back synchronously, and nothing
 * outlives the callback without a copy, so a thousand sockets need one buffer, not a Buffer per read.
 */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

/**
 * A minimal WebSocket client (RFC 6455) over a plain TCP socket, for load generation only.
 *
 * The `ws` library spends most of a load generator's core on per-message work we do not need
 * (an event and a Buffer per message, UTF-8 validation, fragment bookkeeping), and on a 2-core
 * machine the generator shares the CPU with the server it measures. This client reads with `onread` into one shared buffer (no stream, no Buffer
 * per read), parses frames in place and hands the caller byte offsets.
 *
 * It speaks what a load test needs against uWebSockets.js: the upgrade (the Sec-WebSocket-Accept
 * checked), unmasked server frames, fragmented messages, ping → pong, close, and masked client
 * text frames. No extensions (no permessage-deflate), no TLS. The service's tests keep using `ws`.
 */
export class RawWebSocket {
  private pending: Buffer | undefined;
  private upgraded = false;
  private fragments: Buffer[] = [];
  private closed = false;
  private readonly socket: Socket;
  private readonly accept: string;

  /**
   * Connects to `url` (ws://host:port/path?query) with the extra upgrade `headers`. `onOpen` runs
   * after the 101; `onClose` once, with the reason (an HTTP status line when the upgrade is refused).
   */
  constructor(
    url: string,
    headers: Readonly<Record<string, string>>,
    private readonly onMessage: OnMessage,
    private readonly onOpen: () => void,
    private readonly onClose: (reason: string) => void,
  ) {
    const u = new URL(url);
    if (u.protocol !== 'ws:') throw new Error(`RawWebSocket speaks ws:// only, not ${u.protocol}`);
    const key = randomBytes(16).toString('base64');
    this.accept = createHash('sha1')
      .update(key + GUID)
      .digest('base64');
    this.socket = connect({
      host: u.hostname,
      port: Number(u.port || 80),
      noDelay: true,
      onread: {
        buffer: READ_BUFFER,
        callback: (n) => {
          this.read(READ_BUFFER.subarray(0, n));
          return true;
        },
      },
    });
    this.socket.once('connect', () => {
      const extra = Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      this.socket.write(
        `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
      );
    });
    this.socket.on('error', (e) => this.fail(e.message));
    this.socket.on('close', () => this.fail('socket closed'));
  }

  /** One read's bytes (in the shared buffer): the upgrade response first, then frames. */
  private read(chunk: Buffer): void {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    if (this.upgraded) return this.frames(buf);
    const end = buf.indexOf(HEADER_END);
    if (end < 0) {
      this.pending = Buffer.from(buf);
      return;
    }
    const head = buf.toString('latin1', 0, end);
    const status = head.slice(0, head.indexOf('\r\n'));
    if (!/^HTTP\/1\.1 101 /.test(status)) return this.fail(status);
    const got = /\r\nsec-websocket-accept:\s*(\S+)/i.exec(head)?.[1];
    if (got !== this.accept) return this.fail(`bad Sec-WebSocket-Accept ${got ?? '(none)'}`);
    this.upgraded = true;
    this.onOpen();
    if (buf.length > end + 4) this.frames(buf.subarray(end + 4));
  }

  /** Sends one text message (masked, as RFC 6455 requires of clients). */
  send(text: string): void {
    this.write(0x1, Buffer.from(text));
  }

  /** Stops reading the socket (a client that stops reading: the server's backpressure then builds up). */
  pause(): void {
    this.socket.pause();
  }

  /** Reads the socket again. */
  resume(): void {
    this.socket.resume();
  }

  /**
   * Sends one frame as given (`mask` false: an unmasked client frame, which RFC 6455 §5.1 says the
   * server must close the connection on), for tests of what the server does with frames a
   * conforming client never sends.
   */
  sendFrame(op: number, payload: Buffer, mask = true): void {
    if (mask) return this.write(op, payload);
    const n = payload.length;
    if (n >= 126) throw new Error('sendFrame: unmasked frames of 126 bytes or more are not needed');
    this.socket.write(Buffer.concat([Buffer.from([0x80 | op, n]), payload]));
  }

  /** Closes the TCP connection at once (no close handshake): a load generator tearing down. */
  terminate(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private fail(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    this.onClose(reason);
  }

  /** Parses every complete frame in `buf`; keeps a partial one for the next chunk. */
  private frames(buf: Buffer): void {
    let o = 0;
    while (buf.length - o >= 2) {
      const b0 = buf[o]!;
      const b1 = buf[o + 1]!;
      if (b1 & 0x80) return this.fail('masked frame from the server');
      let len = b1 & 0x7f;
      let h = 2;
      if (len === 126) {
        if (buf.length - o < 4) break;
        len = buf.readUInt16BE(o + 2);
        h = 4;
      } else if (len === 127) {
        if (buf.length - o < 10) break;
        len = Number(buf.readBigUInt64BE(o + 2));
        h = 10;
      }
      if (buf.length - o < h + len) break;
      const start = o + h;
      const end = start + len;
      o = end;
      const op = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      if (op === 0x9) this.write(0xa, buf.subarray(start, end));
      else if (op === 0x8)
        return this.fail(`closed by the server: ${len >= 2 ? `${buf.readUInt16BE(start)} ${buf.toString('utf8', start + 2, end)}` : 'no code'}`);
      else if (op === 0x1 || op === 0x2 || op === 0x0) {
        if (fin && this.fragments.length === 0) this.onMessage(buf, start, end);
        else {
          // Copied: the chunk's memory is only ours until this call returns.
          this.fragments.push(Buffer.from(buf.subarray(start, end)));
          if (fin) {
            const whole = Buffer.concat(this.fragments);
            this.fragments = [];
            this.onMessage(whole, 0, whole.length);
          }
        }
      }
    }
    if (o < buf.length) this.pending = Buffer.from(buf.subarray(o));
  }

  private write(op: number, payload: Buffer): void {
    if (this.closed) return;
    const n = payload.length;
    const h = n < 126 ? 2 : n < 65536 ? 4 : 10;
    const frame = Buffer.allocUnsafe(h + 4 + n);
    frame[0] = 0x80 | op;
    if (h === 2) frame[1] = 0x80 | n;
    else if (h === 4) {
      frame[1] = 0x80 | 126;
      frame.writeUInt16BE(n, 2);
    } else {
      frame[1] = 0x80 | 127;
      frame.writeBigUInt64BE(BigInt(n), 2);
    }
    const mask = randomBytes(4);
    mask.copy(frame, h);
    for (let i = 0; i < n; i++) frame[h + 4 + i] = payload[i]! ^ mask[i & 3]!;
    this.socket.write(frame);
  }
}
