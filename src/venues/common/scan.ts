/**
 * Reading JSON text in place, for the frames an ingest hot path sees most (a protocol's scanner
 * reads the one shape it expects and gives up on anything else). Each function takes the index
 * where a token starts and returns the index just past it, or -1 when the text is not the plain
 * form accepted here. Accepted text means what JSON.parse would make of it; -1 says nothing
 * about validity: the caller falls back to JSON.parse, which judges the frame.
 */

const QUOTE = 34;
const BACKSLASH = 92;

/**
 * A string whose opening quote is at `i`: the index past its closing quote. -1 for an escape
 * (its value would differ from the text), a control character (invalid JSON) or no closing quote.
 */
export function stringEnd(s: string, i: number): number {
  if (s.charCodeAt(i) !== QUOTE) return -1;
  const n = s.length;
  for (let k = i + 1; k < n; k++) {
    const c = s.charCodeAt(k);
    if (c === QUOTE) return k + 1;
    if (c === BACKSLASH || c < 32) return -1;
  }
  return -1;
}

/** Most digits of an integer read here: it stays exact in a double. */
const MAX_DIGITS = 15;

/** A non-negative integer without sign, fraction or exponent (and without a leading zero, as JSON wants). */
export function uintEnd(s: string, i: number): number {
  const n = Math.min(s.length, i + MAX_DIGITS + 1);
  let k = i;
  while (k < n) {
    const c = s.charCodeAt(k);
    if (c < 48 || c > 57) break;
    k++;
  }
  if (k === i || k - i > MAX_DIGITS || (s.charCodeAt(i) === 48 && k - i > 1)) return -1;
  return k;
}

/** The value of the digits in [i, end), as read by `uintEnd`. */
export function uintAt(s: string, i: number, end: number): number {
  let v = 0;
  for (let k = i; k < end; k++) v = v * 10 + (s.charCodeAt(k) - 48);
  return v;
}

/** Any number without an exponent (`-12.5`), only to step over it. */
export function numberEnd(s: string, i: number): number {
  let k = s.charCodeAt(i) === 45 /* - */ ? i + 1 : i;
  k = uintEnd(s, k);
  if (k < 0 || s.charCodeAt(k) !== 46 /* . */) return k;
  const f = k + 1;
  const n = s.length;
  for (k = f; k < n; k++) {
    const c = s.charCodeAt(k);
    if (c < 48 || c > 57) break;
  }
  return k === f ? -1 : k;
}
