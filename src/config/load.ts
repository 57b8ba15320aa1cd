import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { appConfig, venueRegistry, type Config } from './schema.js';

/** Thrown for any configuration problem; the message names the file and the key. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** The project's `config/` folder, found from this file in both src/ (tests) and dist/src/ (built). */
export function configDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const up = here.includes(`${'/dist/'}`) ? '../../../config' : '../../config';
  return resolve(here, up);
}

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(e as Error).message}`);
  }
}

function formatIssues(source: string, error: z.ZodError): string {
  const lines = error.issues.map((i) => `  ${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
  return `invalid configuration in ${source}:\n${lines.join('\n')}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep merge of plain objects; arrays and scalars in `over` replace. */
export function merge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
}

/** Parses an env value: JSON when it parses (numbers, booleans, null, objects), else the string. */
function envValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * Environment overrides. Friendly names for the common ones (PORT, HOST, DATA_DIR, LOG_LEVEL,
 * SIM_SEED, SIM_RATE), and `CROSSBOOK__a__b=value` for any key `a.b` of the app config.
 * Venue keys: `CROSSBOOK_VENUE__venue_a__slug=kalshi` (by label).
 */
function envOverrides(env: NodeJS.ProcessEnv): { app: Record<string, unknown>; venues: Record<string, unknown> } {
  const app: Record<string, unknown> = {};
  const venues: Record<string, unknown> = {};
  const set = (target: Record<string, unknown>, path: string[], value: unknown): void => {
    let o = target;
    for (const k of path.slice(0, -1)) {
      if (!isObject(o[k])) o[k] = {};
      o = o[k] as Record<string, unknown>;
    }
    o[path[path.length - 1]!] = value;
  };
  const friendly: Record<string, string[]> = {
    PORT: ['server', 'port'],
    HOST: ['server', 'host'],
    BASE_URL: ['server', 'baseUrl'],
    DATA_DIR: ['dataDir'],
    LOG_LEVEL: ['logLevel'],
    SIM_SEED: ['sim', 'seed'],
    SIM_RATE: ['sim', 'ticksPerSecond'],
  };
  for (const [name, path] of Object.entries(friendly)) {
    const v = env[name];
    if (v !== undefined && v !== '') set(app, path, name === 'DATA_DIR' || name === 'HOST' ? v : envValue(v));
  }
  for (const [name, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (name.startsWith('CROSSBOOK__')) set(app, name.slice('CROSSBOOK__'.length).split('__'), envValue(v));
    else if (name.startsWith('CROSSBOOK_VENUE__')) set(venues, name.slice('CROSSBOOK_VENUE__'.length).split('__'), envValue(v));
  }
  return { app, venues };
}

/**
 * The slug overrides of a venue-name preset (config/venue-names.json), by label. Throws
 * ConfigError for an unknown preset, naming the known ones.
 */
export function venueNamePreset(name: string, dir: string = configDir()): Record<string, { slug: string }> {
  const file = readJson(resolve(dir, 'venue-names.json'));
  const presets = isObject(file) && isObject(file['presets']) ? file['presets'] : {};
  const preset = presets[name];
  if (!isObject(preset)) throw new ConfigError(`unknown venue-name preset "${name}" (known: ${Object.keys(presets).join(', ')})`);
  const out: Record<string, { slug: string }> = {};
  for (const [label, slug] of Object.entries(preset)) {
    if (typeof slug !== 'string') throw new ConfigError(`config/venue-names.json: presets.${name}.${label} must be a string`);
    out[label] = { slug };
  }
  return out;
}

export interface LoadOptions {
  /** A venue-name preset (config/venue-names.json); default: env CROSSBOOK_VENUE_NAMES, else neutral. */
  readonly venueNames?: string;
  /** Extra override object (tests, CLI flags), applied last. */
  readonly overrides?: Record<string, unknown>;
  /** Venue overrides by label, applied last. */
  readonly venueOverrides?: Record<string, Record<string, unknown>>;
  readonly env?: NodeJS.ProcessEnv;
  readonly dir?: string;
}

/**
 * Loads config/default.json and config/venues.json, then the venue-name preset, then
 * CROSSBOOK_CONFIG (a JSON file whose
 * keys mirror default.json plus an optional `venues` object keyed by label), then environment
 * variables, then `overrides`. Throws ConfigError naming the bad key.
 */
export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const dir = opts.dir ?? configDir();
  let app = readJson(resolve(dir, 'default.json'));
  const registry = readJson(resolve(dir, 'venues.json'));
  const sources = ['config/default.json', 'config/venues.json'];

  const applyVenueOverrides = (byLabel: unknown, source: string): void => {
    if (byLabel === undefined) return;
    if (!isObject(byLabel)) throw new ConfigError(`${source}: venues must be an object keyed by venue label`);
    if (!isObject(registry) || !Array.isArray(registry['venues'])) return;
    const list = registry['venues'] as unknown[];
    for (const [label, over] of Object.entries(byLabel)) {
      const i = list.findIndex((v) => isObject(v) && v['label'] === label);
      if (i < 0) throw new ConfigError(`${source}: venues.${label}: unknown venue label (expected venue_a … venue_h)`);
      list[i] = merge(list[i], over);
    }
  };

  const names = opts.venueNames ?? env['CROSSBOOK_VENUE_NAMES'];
  if (names) applyVenueOverrides(venueNamePreset(names, dir), `venue-name preset ${names}`);
  const file = env['CROSSBOOK_CONFIG'];
  if (file) {
    const over = readJson(resolve(file));
    if (!isObject(over)) throw new ConfigError(`${file}: must hold a JSON object`);
    const { venues, ...rest } = over;
    app = merge(app, rest);
    applyVenueOverrides(venues, file);
    sources.push(file);
  }
  const fromEnv = envOverrides(env);
  app = merge(app, fromEnv.app);
  applyVenueOverrides(fromEnv.venues, 'environment');
  if (opts.overrides) app = merge(app, opts.overrides);
  if (opts.venueOverrides) applyVenueOverrides(opts.venueOverrides, 'overrides');

  const a = appConfig.safeParse(app);
  if (!a.success) throw new ConfigError(formatIssues(sources.join(' + ') + ' + environment', a.error));
  const r = venueRegistry.safeParse(registry);
  if (!r.success) throw new ConfigError(formatIssues('config/venues.json + overrides', r.error));
  const { $comment: _c, ...rest } = a.data;
  return { ...rest, venues: r.data.venues };
}
