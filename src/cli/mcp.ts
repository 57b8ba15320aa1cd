import type { Command } from 'commander';

/**
 * `crossbook mcp`: a Model Context Protocol server over stdio with read-only tools over a running
 * crossbook, found with CROSSBOOK_URL (default http://127.0.0.1:8080) and CROSSBOOK_API_KEY.
 */
export function addMcp(p: Command): void {
  p.command('mcp')
    .description('Model Context Protocol server over stdio: read-only tools over a running crossbook (env CROSSBOOK_URL, CROSSBOOK_API_KEY)')
    .option('--url <url>', 'crossbook base URL (env CROSSBOOK_URL)')
    .option('--key <key>', 'API key (env CROSSBOOK_API_KEY)')
    .action(async (o: { url?: string; key?: string }) => {
      const { serveStdio } = await import('../mcp/server.js');
      const url = o.url ?? process.env['CROSSBOOK_URL'] ?? 'http://127.0.0.1:8080';
      const key = o.key ?? process.env['CROSSBOOK_API_KEY'];
      if (!key) process.stderr.write('crossbook mcp: no CROSSBOOK_API_KEY (or --key): crossbook will refuse every tool call with 401\n');
      await serveStdio({ url, key }, '2.1.0');
    });
}
