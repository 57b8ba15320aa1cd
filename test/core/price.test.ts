import { describe, expect, it } from 'vitest';
import {
  complement,
  parseDollars,
  parseProbabilityDollars,
  parseSize,
  toCents,
  toDollarString,
  unitsFromIntCents,
  unitsFromProbability,
} from '../../src/core/price.js';

describe('parseDollars', () => {
  it('parses wire strings exactly, without float arithmetic', () => {
    expect(parseDollars('0.4800')).toBe(4800);
    expect(parseDollars('.48')).toBe(4800);
    expect(parseDollars('0.5')).toBe(5000);
    expect(parseDollars('1')).toBe(10_000);
    expect(parseDollars('1.0000')).toBe(10_000);
    expect(parseDollars('0.9190')).toBe(9190);
    expect(parseDollars('0.001')).toBe(10);
    expect(parseDollars('0.0001')).toBe(1);
    expect(parseDollars('0.480000')).toBe(4800);
    // 0.29 * 10000 in floats is 2899.9999999999995; the string path is exact.
    expect(parseDollars('0.29')).toBe(2900);
  });
  it('rejects what is not a plain decimal or is finer than a unit', () => {
    for (const bad of ['', '.', 'abc', '-0.5', '0.48.1', '1e-2', ' 0.5', '0.00005', 'NaN', '0x10', '12345678']) expect(parseDollars(bad)).toBeNaN();
  });
  it('bounds probabilities to [0, 1]', () => {
    expect(parseProbabilityDollars('1.5')).toBeNaN();
    expect(parseProbabilityDollars('0')).toBe(0);
  });
});

describe('other conversions', () => {
  it('converts units to cents and dollar strings', () => {
    expect(toCents(4810)).toBe(48.1);
    expect(toCents(0)).toBe(0);
    expect(toDollarString(4810)).toBe('0.4810');
    expect(toDollarString(10_000)).toBe('1.0000');
    expect(complement(4800)).toBe(5200);
  });
  it('accepts legacy integer cents only in range', () => {
    expect(unitsFromIntCents(48)).toBe(4800);
    expect(unitsFromIntCents(100)).toBe(10_000);
    expect(unitsFromIntCents(101)).toBeNaN();
    expect(unitsFromIntCents(4.5)).toBeNaN();
    expect(unitsFromIntCents('48')).toBeNaN();
  });
  it('rounds float probabilities to the nearest unit', () => {
    expect(unitsFromProbability(0.123456)).toBe(1235);
    expect(unitsFromProbability(1.2)).toBeNaN();
    expect(unitsFromProbability(Number.NaN)).toBeNaN();
  });
  it('parses sizes and keeps relative deltas from drifting', () => {
    expect(parseSize('300.00')).toBe(300);
    expect(parseSize('-54.00')).toBe(-54);
    expect(parseSize('.5')).toBe(0.5);
    expect(parseSize('1,000')).toBeNaN();
    expect(parseSize('')).toBeNaN();
  });
});
