import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * clients/typescript as a package: built with its own tsconfig, and imported from a project outside
 * this repository as `crossbook/client` (the root package's `exports`) and as `@crossbook/client`
 * (its own package.json), with types.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const outside = mkdtempSync(join(tmpdir(), 'cb-consumer-'));

beforeAll(() => {
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'clients', 'typescript', 'tsconfig.json')], {
    stdio: 'pipe',
  });
  mkdirSync(join(outside, 'node_modules', '@crossbook'), { recursive: true });
  symlinkSync(ROOT, join(outside, 'node_modules', 'crossbook'), 'dir');
  symlinkSync(join(ROOT, 'clients', 'typescript'), join(outside, 'node_modules', '@crossbook', 'client'), 'dir');
  writeFileSync(join(outside, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
});

afterAll(() => rmSync(outside, { recursive: true, force: true }));

/** Runs an ES module in the outside project and returns what it printed. */
function run(code: string): string {
  const file = join(outside, `probe-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, code);
  return execFileSync(process.execPath, [file], { cwd: outside, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

describe('the typed client as a package', () => {
  it('resolves crossbook/client from outside the repository to the built client', () => {
    const out = run(`
      import * as c from 'crossbook/client';
      const client = c.createCrossbookClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'pmx_x' });
      console.log(JSON.stringify({ exports: Object.keys(c).sort(), get: typeof client.GET, resolved: import.meta.resolve('crossbook/client') }));
    `);
    const r = JSON.parse(out) as { exports: string[]; get: string; resolved: string };
    expect(r.exports).toEqual(['CrossbookStream', 'createCrossbookClient']);
    expect(r.get).toBe('function');
    expect(r.resolved).toMatch(/clients\/typescript\/dist\/index\.js$/);
  });

  it('is also its own package, @crossbook/client, with type declarations where its exports say', () => {
    expect(run(`import { CrossbookStream } from '@crossbook/client'; console.log(typeof CrossbookStream);`)).toBe('function');
    const own = JSON.parse(readFileSync(join(ROOT, 'clients', 'typescript', 'package.json'), 'utf8')) as { exports: { '.': { types: string } } };
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: { './client': { types: string } } };
    expect(existsSync(join(ROOT, 'clients', 'typescript', own.exports['.'].types))).toBe(true);
    expect(existsSync(join(ROOT, root.exports['./client'].types))).toBe(true);
    expect(readFileSync(join(ROOT, root.exports['./client'].types), 'utf8')).toMatch(/export declare function createCrossbookClient/);
  });

  it('refuses a path the exports do not list', () => {
    expect(() => run(`await import('crossbook/src/service.js');`)).toThrow(/ERR_PACKAGE_PATH_NOT_EXPORTED|not exported/);
  });
});
