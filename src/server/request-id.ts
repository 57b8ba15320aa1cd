import { randomFillSync } from 'node:crypto';

/** Ids made per batch: one random fill and one string for all of them. */
const BATCH = 256;
const UUID_LENGTH = 36;

/** ASCII codes of the hex digits. */
const HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

const random = Buffer.allocUnsafe(16 * BATCH);
const text = Buffer.allocUnsafe(UUID_LENGTH * BATCH);
let batch = '';
let next = BATCH;

/**
 * A random (version 4) UUID in its canonical lower-case form, as `crypto.randomUUID` makes one:
 * 122 bits from the system's CSPRNG, the version and variant bits set. Ids are made a batch at a
 * time into one string, and each is a slice of it, so a request pays no random fill and no hex
 * formatting of its own.
 */
export function requestId(): string {
  if (next === BATCH) refill();
  const at = next++ * UUID_LENGTH;
  return batch.slice(at, at + UUID_LENGTH);
}

function refill(): void {
  randomFillSync(random);
  let o = 0;
  for (let u = 0; u < BATCH; u++) {
    const b = u * 16;
    random[b + 6] = (random[b + 6]! & 0x0f) | 0x40;
    random[b + 8] = (random[b + 8]! & 0x3f) | 0x80;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text[o++] = 0x2d; // -
      const x = random[b + i]!;
      text[o++] = HEX[x >> 4]!;
      text[o++] = HEX[x & 15]!;
    }
  }
  batch = text.toString('latin1');
  next = 0;
}
