import { randomFillSync } from 'node:crypto';

/** Ids made per batch: one string for all of them. */
const BATCH = 256;
const UUID_LENGTH = 36;
/** The counter's 48 bits: the UUID's last group, twelve hex digits. */
const COUNTER_END = 2 ** 48;
/** Where the counter's digits start in a UUID's text (after "xxxxxxxx-xxxx-8xxx-yxxx-"). */
const COUNTER_AT = 24;

/** ASCII codes of the hex digits. */
const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** Each byte's two hex digits as one little-endian 16-bit store (one write per byte, not two lookups and two writes). */
const PAIR = Uint16Array.from({ length: 256 }, (_, x) => HEX[x >> 4]! | (HEX[x & 15]! << 8));
/** Where each of the prefix's 10 bytes goes in a UUID's text (two hex digits each, dashes at 8, 13 and 18). */
const PREFIX_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21] as const;

/**
 * Request ids (spec 4: a generated UUID when the client sent none): unique, not secret. Each is a
 * version 8 UUID (RFC 9562's custom layout) of a prefix of 74 random bits drawn from the system's
 * CSPRNG when the ids start (again when the counter wraps) and a 48-bit counter, so ids from one
 * process never repeat, and two processes (a cluster's edges, a restart) share a prefix with
 * probability 2^-74. Made a batch at a time into one string, each a slice of it (which keeps that 9 KB
 * string alive while it is held), so a request pays neither a random fill nor hex formatting of its
 * own: only the counter's six digit pairs are written per id, the prefix once per batch buffer.
 */
export class RequestIds {
  /** The batch's text; the prefix and dashes are written once per prefix, the counter per batch. */
  private readonly text = Buffer.alloc(UUID_LENGTH * BATCH);
  private readonly digits = new DataView(this.text.buffer, this.text.byteOffset, this.text.byteLength);
  private batch = '';
  private next = BATCH;
  /** The counter of the next batch's first id. */
  private counter: number;

  /** `random` fills the prefix's bytes (the CSPRNG by default); `counter` is where the counter starts (tests: near its end). */
  constructor(
    private readonly random: (into: Uint8Array) => void = (into) => void randomFillSync(into),
    counter = 0,
  ) {
    this.counter = counter;
    this.prefix();
  }

  /** The next id, in canonical lower-case form. */
  id(): string {
    if (this.next === BATCH) this.refill();
    const at = this.next++ * UUID_LENGTH;
    return this.batch.slice(at, at + UUID_LENGTH);
  }

  /** A fresh random prefix, written into every id of the batch buffer (with the dashes). */
  private prefix(): void {
    const bytes = new Uint8Array(10);
    this.random(bytes);
    bytes[6] = (bytes[6]! & 0x0f) | 0x80; // version 8
    bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10
    for (let u = 0; u < BATCH; u++) {
      const t = u * UUID_LENGTH;
      for (const d of [8, 13, 18, 23]) this.text[t + d] = 0x2d;
      for (let i = 0; i < PREFIX_AT.length; i++) this.digits.setUint16(t + PREFIX_AT[i]!, PAIR[bytes[i]!]!, true);
    }
  }

  private refill(): void {
    // The whole batch's counters fit below the end: a batch never straddles a wrap.
    if (this.counter + BATCH > COUNTER_END) {
      this.prefix();
      this.counter = 0;
    }
    for (let u = 0; u < BATCH; u++) {
      const c = this.counter + u;
      const hi = Math.floor(c / 0x1000000);
      const lo = c % 0x1000000;
      const t = u * UUID_LENGTH + COUNTER_AT;
      const d = this.digits;
      d.setUint16(t, PAIR[hi >>> 16]!, true);
      d.setUint16(t + 2, PAIR[(hi >>> 8) & 255]!, true);
      d.setUint16(t + 4, PAIR[hi & 255]!, true);
      d.setUint16(t + 6, PAIR[lo >>> 16]!, true);
      d.setUint16(t + 8, PAIR[(lo >>> 8) & 255]!, true);
      d.setUint16(t + 10, PAIR[lo & 255]!, true);
    }
    this.counter += BATCH;
    this.batch = this.text.toString('latin1');
    this.next = 0;
  }
}

const ids = new RequestIds();

/** The process's next request id (see RequestIds). */
export function requestId(): string {
  return ids.id();
}
