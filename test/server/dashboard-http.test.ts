import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCore, buildHttp } from '../../src/compose.js';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { log } from '../../src/core/log.js';
import { Persistence } from '../../src/persist/store.js';
import type { HttpServer } from '../../src/server/http.js';

/**
 * What the HTTP layer adds for the web dashboard: the built files at / and /app/… (content types,
 * caching, the page's policy, 404s), the answer without a build, and CORS for configured origins.
 */
const dirs: string[] = [];
const tmp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};

async function serve(dashboardDir: string, corsOrigins: string[] = []): Promise<{ http: HttpServer; base: string; close: () => Promise<void> }> {
  const persistence = new Persistence(tmp('cb-dash-'));
  const core = buildCore(loadConfig({ env: {}, overrides: { server: { host: '127.0.0.1', port: 0, baseUrl: null, corsOrigins } } }), { persistence, log });
  const { http } = buildHttp(core, undefined, { dashboardDir });
  const port = await http.listen('127.0.0.1', 0);
  return {
    http,
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      http.close();
      await persistence.close();
    },
  };
}

const built = tmp('cb-web-');
mkdirSync(join(built, 'app', 'assets'), { recursive: true });
writeFileSync(join(built, 'index.html'), '<!doctype html><div id="app"></div><script type="module" src="/app/assets/app-ABC.js"></script>');
writeFileSync(join(built, 'app', 'assets', 'app-ABC.js'), 'console.log(1)');
writeFileSync(join(built, 'app', 'assets', 'app-ABC.css'), 'body{}');
writeFileSync(join(built, 'app', 'assets', 'notes.unknown'), 'x');

let site: Awaited<ReturnType<typeof serve>>;
let cors: Awaited<ReturnType<typeof serve>>;
beforeAll(async () => {
  site = await serve(built);
  cors = await serve(built, ['https://dash.example.com']);
});
afterAll(async () => {
  await site?.close();
  await cors?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the dashboard files', () => {
  it('answers / and every page path with index.html, not cached, under a same-origin policy', async () => {
    for (const path of ['/', '/app/board', '/app/market', '/app/groups', '/app/health']) {
      const r = await fetch(`${site.base}${path}?platform=venue_a&id=X`);
      expect([path, r.status, r.headers.get('content-type')]).toEqual([path, 200, 'text/html; charset=utf-8']);
      expect(r.headers.get('cache-control')).toBe('no-cache');
      expect(r.headers.get('content-security-policy')).toMatch(/default-src 'self'.*connect-src 'self' ws: wss:/);
      expect(await r.text()).toContain('<div id="app">');
    }
  });

  it('serves hashed assets with their content type, cached for good, and HEAD alike', async () => {
    const js = await fetch(`${site.base}/app/assets/app-ABC.js`);
    expect([js.status, js.headers.get('content-type'), js.headers.get('cache-control')]).toEqual([
      200,
      'text/javascript; charset=utf-8',
      'public, max-age=31536000, immutable',
    ]);
    expect(await js.text()).toBe('console.log(1)');
    const css = await fetch(`${site.base}/app/assets/app-ABC.css`, { method: 'HEAD' });
    expect([css.status, css.headers.get('content-type'), css.headers.get('content-length')]).toEqual([200, 'text/css; charset=utf-8', '6']);
  });

  it('answers 404 with a JSON error for an unknown asset, a file of an unknown type, a path outside the assets and an unknown page', async () => {
    for (const path of ['/app/assets/app-NOPE.js', '/app/assets/notes.unknown', '/app/assets/..%2Findex.html', '/app/nope', '/app/assets/a/b']) {
      const r = await fetch(`${site.base}${path}`);
      expect([path, r.status]).toEqual([path, 404]);
      expect(((await r.json()) as { success: boolean }).success).toBe(false);
    }
  });

  it('without a build, / says where the API is and how to build the dashboard', async () => {
    const bare = await serve(tmp('cb-noweb-'));
    try {
      const r = await fetch(`${bare.base}/`);
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({ name: 'crossbook', api: '/api/v2', dashboard: expect.stringMatching(/npm run build/) });
    } finally {
      await bare.close();
    }
  });
});

describe('CORS', () => {
  it('lets a configured origin read answers, and answers its preflight', async () => {
    const r = await fetch(`${cors.base}/api/v2/status`, { headers: { Origin: 'https://dash.example.com' } });
    expect(r.headers.get('access-control-allow-origin')).toBe('https://dash.example.com');
    expect(r.headers.get('vary')).toBe('Origin');
    expect(r.headers.get('access-control-expose-headers')).toMatch(/X-RateLimit-Remaining-Second/);
    const pre = await fetch(`${cors.base}/api/v2/markets`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://dash.example.com', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://dash.example.com');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/X-API-Key/);
    expect(pre.headers.get('access-control-allow-methods')).toMatch(/GET/);
    // a refused key keeps its 401 and still carries the header, so the page can read why
    const bad = await fetch(`${cors.base}/api/v2/markets`, { headers: { Origin: 'https://dash.example.com', 'X-API-Key': 'pmx_wrong' } });
    expect([bad.status, bad.headers.get('access-control-allow-origin')]).toEqual([401, 'https://dash.example.com']);
  });

  it('gives another origin no CORS headers, and its OPTIONS the 405 any OPTIONS gets', async () => {
    const r = await fetch(`${cors.base}/api/v2/status`, { headers: { Origin: 'https://evil.example.com' } });
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await fetch(`${cors.base}/api/v2/markets`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example.com' } });
    expect([pre.status, pre.headers.get('access-control-allow-origin')]).toEqual([405, null]);
    // and a server without configured origins sends none
    const none = await fetch(`${site.base}/api/v2/status`, { headers: { Origin: 'https://dash.example.com' } });
    expect(none.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses an origin in the configuration that is not one, naming the key', () => {
    for (const bad of ['https://dash.example.com/', 'https://dash.example.com/path', 'ftp://x.example.com', 'dash.example.com', ''])
      expect(() => loadConfig({ env: {}, overrides: { server: { corsOrigins: [bad] } } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, overrides: { server: { corsOrigins: ['nope'] } } })).toThrow(/server\.corsOrigins\.0: must be an origin/);
    expect(loadConfig({ env: { CROSSBOOK__server__corsOrigins: '["*"]' } }).server.corsOrigins).toEqual(['*']);
  });
});
