import { randomFillSync } from 'node:crypto';

/** Ids made per batch: one random fill and one string for all of them. */
const BATCH = 256;
const UUID_LENGTH = 36;

/** ASCII codes of the hex digits. */
const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** Each byte's two hex digits as one little-endian 16-bit store (one write per byte, not two lookups and two writes). */
const PAIR = Uint16Array.from({ length: 256 }, (_, x) => HEX[x >> 4]! | (HEX[x & 15]! << 8));

/** Where each of a UUID's 16 bytes goes in its text (two hex digits each, dashes at 8, 13, 18 and 23). */
const AT = Uint8Array.from([0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]);

const random = new Uint8Array(16 * BATCH);
/** The batch's text; the dashes never change, so they are written once. */
const text = Buffer.alloc(UUID_LENGTH * BATCH);
for (let u = 0; u < BATCH; u++) for (const d of [8, 13, 18, 23]) text[u * UUID_LENGTH + d] = 0x2d;
/** The text for the 16-bit stores (four of the sixteen digit pairs sit at odd offsets: a DataView takes those). */
const digits = new DataView(text.buffer, text.byteOffset, text.byteLength);
let batch = '';
let next = BATCH;

/**
 * A random (version 4) UUID in its canonical lower-case form, as `crypto.randomUUID` makes one:
 * 122 bits from the system's CSPRNG, the version and variant bits set. Ids are made a batch at a
 * time into one string, and each is a slice of it (which keeps that 9 KB string alive while it is
 * held), so a request pays no random fill and no hex formatting of its own.
 */
export function requestId(): string {
  if (next === BATCH) refill();
  const at = next++ * UUID_LENGTH;
  return batch.slice(at, at + UUID_LENGTH);
}

function refill(): void {
  randomFillSync(random);
  for (let u = 0; u < BATCH; u++) {
    const b = u * 16;
    const t = u * UUID_LENGTH;
    random[b + 6] = (random[b + 6]! & 0x0f) | 0x40; // version 4
    random[b + 8] = (random[b + 8]! & 0x3f) | 0x80; // variant 10
    for (let i = 0; i < 16; i++) digits.setUint16(t + AT[i]!, PAIR[random[b + i]!]!, true);
  }
  batch = text.toString('latin1');
  next = 0;
}
