import { z } from 'zod';

/**
 * Query and path parameters, declared once as zod schemas: the same declaration validates
 * requests (every 400 of spec section 7 comes from here) and documents them in the OpenAPI
 * document (`docOf`). Every helper accepts the raw string (or undefined when absent) and
 * produces the typed value, with a message that names what is accepted.
 */

/** OpenAPI schema fragment and description of a parameter. */
export interface ParamDoc {
  /** The schema, or a function of it for parameters whose accepted values follow the data (read when the document is built). */
  readonly schema: Record<string, unknown> | (() => Record<string, unknown>);
  readonly description?: string | undefined;
  readonly required: boolean;
}

const docs = new WeakMap<z.ZodType, ParamDoc>();

/**
 * Documents `s` with a schema computed when the document is built: for a parameter whose accepted
 * values follow the data (a venue's categories), which the handler checks.
 */
export function documentAs<T extends z.ZodType>(s: T, schema: () => Record<string, unknown>): T {
  const d = docs.get(s);
  docs.set(s, { description: d?.description, required: d?.required ?? false, schema });
  return s;
}

/** The OpenAPI description of a parameter schema built by these helpers. */
export function docOf(s: z.ZodType): ParamDoc | undefined {
  return docs.get(s);
}

type Raw = string | undefined;
type Param<T> = z.ZodType<T, Raw>;

function param<T>(doc: ParamDoc, parse: (v: string) => { ok: true; value: T } | { ok: false; message: string }, fallback: () => T): Param<T> {
  const s = z
    .string()
    .optional()
    .transform((v, ctx): T => {
      if (v === undefined) {
        if (doc.required) {
          ctx.addIssue({ code: 'custom', message: 'is required', params: { code: 'validation.missing' } });
          return z.NEVER;
        }
        return fallback();
      }
      const r = parse(v);
      if (!r.ok) {
        ctx.addIssue({ code: 'custom', message: r.message, params: { code: 'validation.invalid' } });
        return z.NEVER;
      }
      return r.value;
    }) as unknown as Param<T>;
  docs.set(s, doc);
  return s;
}

interface Common {
  readonly description?: string;
}

export const p = {
  /** An integer in [min, max]. */
  int(o: Common & { min: number; max: number; default?: number; required?: boolean }): Param<number | undefined> {
    const range = `an integer from ${o.min} to ${o.max}`;
    return param(
      {
        schema: { type: 'integer', minimum: o.min, maximum: o.max, ...(o.default !== undefined ? { default: o.default } : {}) },
        description: o.description,
        required: o.required ?? false,
      },
      (v) => {
        if (!/^-?\d{1,16}$/.test(v)) return { ok: false, message: `must be ${range}, got "${clip(v)}"` };
        const n = Number(v);
        return n >= o.min && n <= o.max ? { ok: true, value: n } : { ok: false, message: `must be ${range}, got ${n}` };
      },
      () => o.default,
    );
  },

  /** A finite number ≥ min. */
  number(o: Common & { min: number; max?: number; default?: number }): Param<number | undefined> {
    const what = o.max === undefined ? `a number >= ${o.min}` : `a number from ${o.min} to ${o.max}`;
    return param(
      {
        schema: {
          type: 'number',
          minimum: o.min,
          ...(o.max !== undefined ? { maximum: o.max } : {}),
          ...(o.default !== undefined ? { default: o.default } : {}),
        },
        description: o.description,
        required: false,
      },
      (v) => {
        if (!/^-?(\d+\.?\d*|\.\d+)$/.test(v)) return { ok: false, message: `must be ${what}, got "${clip(v)}"` };
        const n = Number(v);
        return n >= o.min && (o.max === undefined || n <= o.max) ? { ok: true, value: n } : { ok: false, message: `must be ${what}, got ${n}` };
      },
      () => o.default,
    );
  },

  /** A boolean flag: true/false, 1/0, yes/no (case-insensitive); anything else is a 400. */
  bool(o: Common & { default: boolean }): Param<boolean> {
    return param(
      {
        schema: {
          anyOf: [{ type: 'boolean' }, { type: 'string', pattern: `^(${['true', 'false', '1', '0', 'yes', 'no'].map(ci).join('|')})$` }],
          default: o.default,
          description: 'true/false, 1/0 or yes/no (case-insensitive)',
        },
        description: o.description,
        required: false,
      },
      (v) => {
        const l = v.toLowerCase();
        if (l === 'true' || l === '1' || l === 'yes') return { ok: true, value: true };
        if (l === 'false' || l === '0' || l === 'no') return { ok: true, value: false };
        return { ok: false, message: `must be true/false, 1/0 or yes/no, got "${clip(v)}"` };
      },
      () => o.default,
    );
  },

  /** One of `values`; `retired` values (earlier published enums) get a message saying so. */
  enum<const T extends string>(values: readonly T[], o: Common & { default?: T; required?: boolean; retired?: readonly string[] } = {}): Param<T | undefined> {
    return param(
      {
        schema: { type: 'string', enum: values, ...(o.default !== undefined ? { default: o.default } : {}) },
        description: o.description,
        required: o.required ?? false,
      },
      (v) => {
        if ((values as readonly string[]).includes(v)) return { ok: true, value: v as T };
        if (o.retired?.includes(v)) return { ok: false, message: `"${v}" is no longer accepted; use one of ${values.join(', ')}` };
        if (v.includes(',')) return { ok: false, message: `takes a single value, one of ${values.join(', ')}; got "${clip(v)}"` };
        return { ok: false, message: `must be one of ${values.join(', ')}; got "${clip(v)}"` };
      },
      () => o.default,
    );
  },

  /** A string of bounded length. */
  string(
    o: Common & {
      min?: number;
      max?: number;
      required?: boolean;
      pattern?: RegExp;
      patternText?: string;
      /** A pattern the handler enforces (documented, not checked here: the handler's 400 names the rule). */
      handlerPattern?: RegExp;
      format?: string;
    } = {},
  ): Param<string | undefined> {
    const min = o.min ?? 1;
    const max = o.max ?? 1000;
    return param(
      {
        schema: {
          type: 'string',
          minLength: min,
          maxLength: max,
          ...(o.pattern || o.handlerPattern ? { pattern: (o.pattern ?? o.handlerPattern)!.source } : {}),
          ...(o.format ? { format: o.format } : {}),
        },
        description: o.description,
        required: o.required ?? false,
      },
      (v) => {
        const len = [...v].length;
        if (len < min || len > max) return { ok: false, message: `must be ${min} to ${max} characters, got ${len}` };
        if (o.pattern && !o.pattern.test(v)) return { ok: false, message: `must be ${o.patternText ?? `like ${o.pattern.source}`}` };
        return { ok: true, value: v };
      },
      () => undefined,
    );
  },

  /** A comma-separated list, each item one of `values` when given; empty items are rejected. */
  list<const T extends string>(o: Common & { values?: readonly T[]; max?: number; allowAll?: boolean } = {}): Param<T[] | 'all' | undefined> {
    return param<T[] | 'all' | undefined>(
      {
        schema: {
          type: 'string',
          pattern: listPattern(o.values, o.allowAll),
          description: `comma-separated${o.values ? `: ${o.values.join(', ')}` : ''}${o.allowAll ? ', or all' : ''}; no empty items${o.max !== undefined ? `; at most ${o.max} items` : ''}`,
        },
        description: o.description,
        required: false,
      },
      (v) => {
        if (o.allowAll && v === 'all') return { ok: true, value: 'all' };
        const items = v.split(',').map((s) => s.trim());
        if (items.some((s) => s === '')) return { ok: false, message: 'must be a comma-separated list without empty items' };
        if (o.max !== undefined && items.length > o.max) return { ok: false, message: `takes at most ${o.max} items, got ${items.length}` };
        if (o.values) {
          const bad = items.filter((s) => !(o.values as readonly string[]).includes(s));
          if (bad.length)
            return {
              ok: false,
              message: `unknown value${bad.length > 1 ? 's' : ''} ${bad.map((b) => `"${clip(b)}"`).join(', ')}; accepted: ${o.values.join(', ')}${o.allowAll ? ', all' : ''}`,
            };
        }
        return { ok: true, value: items as T[] };
      },
      () => undefined,
    );
  },

  /** A calendar date YYYY-MM-DD (a real date: 2026-02-30 is rejected). */
  date(o: Common = {}): Param<string | undefined> {
    return param(
      { schema: { type: 'string', format: 'date', pattern: DATE_DOC }, description: o.description, required: false },
      (v) => {
        const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
        if (m) {
          const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
          if (d.toISOString().slice(0, 10) === v) return { ok: true, value: v };
        }
        return { ok: false, message: `must be a date YYYY-MM-DD, got "${clip(v)}"` };
      },
      () => undefined,
    );
  },

  /** An ISO 8601 date-time (or date), to ms since epoch. */
  isoTime(o: Common = {}): Param<number | undefined> {
    return param(
      { schema: { type: 'string', pattern: ISO_TIME_DOC, description: 'ISO 8601 date or date-time' }, description: o.description, required: false },
      (v) => {
        if (!ISO_TIME.test(v)) return { ok: false, message: `must be an ISO 8601 time such as 2026-11-22T10:00:00Z, got "${clip(v)}"` };
        const t = Date.parse(v);
        return Number.isNaN(t) || !realDate(v) ? { ok: false, message: `is not a valid time: "${clip(v)}"` } : { ok: true, value: t };
      },
      () => undefined,
    );
  },

  /** A time as ms since the epoch (integer) or an ISO 8601 date-time, to ms. */
  msOrIso(o: Common & { required?: boolean } = {}): Param<number | undefined> {
    return param(
      {
        schema: {
          anyOf: [
            { type: 'integer', minimum: 0, maximum: 99_999_999_999_999 },
            { type: 'string', pattern: ISO_TIME_DOC },
          ],
        },
        description: o.description,
        required: o.required ?? false,
      },
      (v) => {
        const t = msOrIsoTime(v);
        return t === undefined
          ? { ok: false, message: `must be ms since the epoch or an ISO 8601 time such as 2026-11-22T10:00:00Z, got "${clip(v)}"` }
          : { ok: true, value: t };
      },
      () => undefined,
    );
  },

  /** Unix seconds (integer), to ms. */
  unixSeconds(o: Common & { orIso?: boolean } = {}): Param<number | undefined> {
    return param(
      {
        schema: o.orIso
          ? {
              anyOf: [
                { type: 'integer', minimum: 0, maximum: 999_999_999_999 },
                { type: 'string', pattern: ISO_TIME_DOC },
              ],
            }
          : { type: 'integer', minimum: 0, maximum: 999_999_999_999 },
        description: o.description,
        required: false,
      },
      (v) => {
        if (/^\d{1,12}$/.test(v)) return { ok: true, value: Number(v) * 1000 };
        if (o.orIso) {
          const t = /^\d{4}-\d{2}-\d{2}/.test(v) && realDate(v) ? Date.parse(v) : NaN;
          if (!Number.isNaN(t)) return { ok: true, value: t };
        }
        return { ok: false, message: `must be unix seconds${o.orIso ? ' or an ISO 8601 time' : ''}, got "${clip(v)}"` };
      },
      () => undefined,
    );
  },
};

/** The ISO 8601 times `p.isoTime` accepts: a date, or a date and time with optional seconds, fraction and offset. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Calendar dates (leap years included; no year below 0100, which Date.UTC reads as 19xx) and
 * times of day as documented patterns: what they match, the validators accept, so a client
 * generating values from the document is never refused.
 */
const CALENDAR_DATE =
  '(?!00)(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8])))';
const TIME_OF_DAY = '(?:[T ](?:(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d{1,9})?)?|24:00(?::00(?:\\.0{1,9})?)?)(?:Z|[+-](?:[01]\\d|2[0-3]):?[0-5]\\d)?)?';
const DATE_DOC = `^${CALENDAR_DATE}$`;
const ISO_TIME_DOC = `^${CALENDAR_DATE}${TIME_OF_DAY}$`;

/** A time given as ms since the epoch (integer) or an ISO 8601 date(-time), in ms; undefined when it is neither. */
export function msOrIsoTime(v: string): number | undefined {
  if (/^\d{1,14}$/.test(v)) return Number(v);
  const t = ISO_TIME.test(v) && realDate(v) ? Date.parse(v) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

/** A regular expression source matching `word` in any letter case (JSON Schema patterns have no `i` flag). */
export function ci(word: string): string {
  return [...word]
    .map((c) => {
      const l = c.toLowerCase();
      const u = c.toUpperCase();
      return l !== u ? `[${l}${u}]` : c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
    })
    .join('');
}

/** The pattern of a comma-separated list `p.list` accepts: items (trimmed) non-empty, one of `values` when given. */
function listPattern(values: readonly string[] | undefined, allowAll: boolean | undefined): string {
  const item = values ? `\\s*(${values.map((v) => v.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('|')})\\s*` : '[^,]*[^,\\s][^,]*';
  const list = `${item}(,${item})*`;
  return allowAll ? `^(all|${list})$` : `^${list}$`;
}

/**
 * The leading YYYY-MM-DD of `v` is a calendar date. Date.parse rolls 2026-02-30 over to March 2
 * instead of failing, and a malformed time bound must be a 400 (spec 7), not another day.
 */
function realDate(v: string): boolean {
  const d = v.slice(0, 10);
  const t = Date.UTC(Number(d.slice(0, 4)), Number(d.slice(5, 7)) - 1, Number(d.slice(8, 10)));
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === d;
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

/** A failed parameter check: becomes a 400 with `code`. */
export class ParamError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Splits a raw query string into parameters. Strict where URLSearchParams is lenient: malformed
 * percent-encoding and a parameter given twice are errors, not silent guesses.
 */
export function parseQuery(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === '') return out;
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const k = eq < 0 ? part : part.slice(0, eq);
    const v = eq < 0 ? '' : part.slice(eq + 1);
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(k.replace(/\+/g, ' '));
      value = decodeURIComponent(v.replace(/\+/g, ' '));
    } catch {
      throw new ParamError('validation.malformed_query', `malformed percent-encoding in query parameter "${clip(k)}"`);
    }
    if (Object.prototype.hasOwnProperty.call(out, key)) throw new ParamError('validation.duplicate', `parameter "${clip(key)}" is given more than once`);
    out[key] = value;
  }
  return out;
}

/** Decodes a path segment strictly (malformed percent-encoding → ParamError). */
export function decodePathSegment(name: string, raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ParamError('validation.malformed_path', `malformed percent-encoding in path parameter ${name}`);
  }
}

/** Runs a route's schema; throws ParamError naming the first bad parameter. */
export function validate<T>(schema: z.ZodType<T>, input: Record<string, string>): T {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const i = r.error.issues[0]!;
  const name = i.path.length ? String(i.path[0]) : '';
  const code = (i as { params?: { code?: string } }).params?.code ?? 'validation.invalid';
  throw new ParamError(code, name ? `invalid parameter "${name}": ${i.message}` : i.message);
}

/** A refinement for "exactly one of these parameters" (spec 4.2). */
export function exactlyOne<T extends Record<string, unknown>>(keys: readonly (keyof T & string)[]) {
  return (v: T, ctx: z.RefinementCtx): void => {
    const given = keys.filter((k) => v[k] !== undefined);
    if (given.length !== 1)
      ctx.addIssue({
        code: 'custom',
        message: `exactly one of ${keys.join(', ')} is required (got ${given.length ? given.join(', ') : 'none'})`,
        params: { code: 'validation.exactly_one' },
      });
  };
}
