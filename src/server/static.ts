import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorReply, type HttpServer, type Reply } from './http.js';

/** Content types of the files the dashboard build writes. */
const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/**
 * The page's policy: everything from this origin (no CDN), WebSockets to it, inline style
 * attributes (uPlot sizes its canvas with them), no framing.
 */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-cache',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};
/** Asset names carry a hash of their content: cached for a year and never revalidated. */
const ASSET_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'public, max-age=31536000, immutable',
  'x-content-type-options': 'nosniff',
};

/** The dashboard's pages: each path answers with the same index.html, whose script routes. */
export const DASHBOARD_PAGES = ['board', 'market', 'groups', 'health'] as const;

/** Where `npm run build` (web/build.mjs) writes the dashboard, from src/ (tests) or dist/src/ (built). */
export function dashboardDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, here.includes('/dist/') ? '../../web' : '../../dist/web');
}

/**
 * Serves the web dashboard built into `dir` (README "Dashboard"): `/` and `/app/<page>` answer
 * index.html (no-cache, with a content security policy), `/app/assets/<file>` the hashed bundle
 * (immutable). The files are read once, at start: the build is part of the release, not data.
 * Without a build, `/` says where the API is and how to build the dashboard.
 */
export function registerDashboard(http: HttpServer, dir: string, api: string): void {
  const index = join(dir, 'index.html');
  if (!existsSync(index)) {
    http.get('/', () => ({
      status: 200,
      body: JSON.stringify({
        name: 'crossbook',
        api,
        status: `${api}/status`,
        openapi: `${api}/openapi.json`,
        dashboard: 'not built: run `npm run build` to build the web dashboard served here',
      }),
    }));
    return;
  }
  const page: Reply = { status: 200, body: readFileSync(index), contentType: TYPES['.html'], headers: PAGE_HEADERS };
  http.get('/', () => page);
  for (const p of DASHBOARD_PAGES) http.get(`/app/${p}`, () => page);
  const assets = new Map<string, Reply>();
  const assetDir = join(dir, 'app', 'assets');
  for (const name of existsSync(assetDir) ? readdirSync(assetDir) : []) {
    const type = TYPES[extname(name)];
    if (type) assets.set(name, { status: 200, body: readFileSync(join(assetDir, name)), contentType: type, headers: ASSET_HEADERS });
  }
  http.get(
    '/app/assets/:file',
    (ctx) => assets.get(ctx.params['file'] ?? '') ?? errorReply(404, 'not_found', `no dashboard asset ${ctx.params['file'] ?? ''}`),
  );
}
