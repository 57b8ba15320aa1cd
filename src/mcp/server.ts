import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CrossbookError, getJson, type CrossbookTarget } from './http.js';
import { TOOLS, type ToolSpec } from './tools.js';

/** The MCP server of crossbook: the read-only tools of `TOOLS`, each answered by one API request. */
export function mcpServer(target: CrossbookTarget, version: string): McpServer {
  const server = new McpServer(
    { name: 'crossbook', version },
    {
      instructions:
        'Read-only access to a crossbook instance: prediction markets of several venues, cross-venue match groups, order books, live arbitrage and EV, smart-money alerts. Prices are cents (0 to 100); ROI is percent, net of fees.',
    },
  );
  for (const t of TOOLS) register(server, target, t);
  return server;
}

function register(server: McpServer, target: CrossbookTarget, t: ToolSpec): void {
  server.registerTool(
    t.name,
    { title: t.title, description: t.description, inputSchema: t.input, annotations: { readOnlyHint: true, openWorldHint: false } },
    async (args: Record<string, unknown>): Promise<CallToolResult> => {
      try {
        const { path, query } = t.request(args as z.infer<z.ZodObject<z.ZodRawShape>>);
        const body = await getJson(target, path, query);
        return { content: [{ type: 'text', text: JSON.stringify(body) }] };
      } catch (e) {
        if (e instanceof CrossbookError || e instanceof RangeError) return { isError: true, content: [{ type: 'text', text: e.message }] };
        const cause = e instanceof Error ? e.message : String(e);
        return { isError: true, content: [{ type: 'text', text: `cannot reach crossbook at ${target.url}: ${cause}` }] };
      }
    },
  );
}

/** Serves the MCP server over stdio until the client closes stdin. */
export async function serveStdio(target: CrossbookTarget, version: string): Promise<void> {
  const server = mcpServer(target, version);
  await server.connect(new StdioServerTransport());
}
