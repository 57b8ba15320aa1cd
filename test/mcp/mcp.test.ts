import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRunning, type Running } from '../contract/service.js';

/**
 * `crossbook mcp` spoken to as an MCP client does: JSON-RPC 2.0, one message a line on stdio
 * (needs `npm run build`: the test runs bin/crossbook.js), against a running simulated service.
 */
let run: Running;
let child: ChildProcess;
const pending = new Map<number, (m: Rpc) => void>();
let nextId = 1;

interface Rpc {
  id?: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

beforeAll(async () => {
  run = await startRunning();
  child = spawn(process.execPath, [join(__dirname, '../../bin/crossbook.js'), 'mcp'], {
    env: { ...process.env, CROSSBOOK_URL: run.url, CROSSBOOK_API_KEY: run.key },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  createInterface({ input: child.stdout! }).on('line', (l) => {
    const m = JSON.parse(l) as Rpc;
    if (m.id !== undefined) pending.get(m.id)?.(m);
  });
}, 60_000);

afterAll(async () => {
  child?.stdin?.end();
  child?.kill();
  await run?.close();
});

function request(method: string, params: Record<string, unknown> = {}): Promise<Rpc> {
  const id = nextId++;
  const answer = new Promise<Rpc>((resolve) => pending.set(id, resolve));
  child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  return answer;
}

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
}
const callTool = async (name: string, args: Record<string, unknown>): Promise<ToolResult> =>
  (await request('tools/call', { name, arguments: args })).result as unknown as ToolResult;

describe('crossbook mcp over stdio', () => {
  it('answers initialize with its name and the tools capability', async () => {
    const r = await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
    expect(r.error).toBeUndefined();
    expect(r.result).toMatchObject({ serverInfo: { name: 'crossbook' }, capabilities: { tools: {} } });
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  });

  it('lists read-only tools whose descriptions state their units', async () => {
    const r = await request('tools/list');
    const tools = (
      r.result as {
        tools: { name: string; description: string; inputSchema: { properties: Record<string, unknown> }; annotations: { readOnlyHint: boolean } }[];
      }
    ).tools;
    const names = tools.map((t) => t.name);
    for (const n of [
      'search_markets',
      'search_events',
      'matching_groups',
      'get_prices',
      'get_orderbook',
      'unified_orderbook',
      'live_arb',
      'live_ev',
      'smart_money_alerts',
    ])
      expect(names).toContain(n);
    for (const t of tools) expect(t.annotations.readOnlyHint, t.name).toBe(true);
    const arb = tools.find((t) => t.name === 'live_arb')!;
    expect(arb.description).toMatch(/cents/);
    expect(arb.description).toMatch(/percent/);
    expect(arb.description).toMatch(/fee-net/);
    expect(Object.keys(arb.inputSchema.properties)).toEqual(['min_roi', 'platforms', 'limit']);
  });

  it('returns live arbitrage opportunities from the running service', async () => {
    const r = await callTool('live_arb', { limit: 5, min_roi: 0 });
    expect(r.isError).toBeFalsy();
    const body = JSON.parse(r.content[0]!.text) as { opportunities: { roi: number; legs: { platform: string; price: number }[] }[] };
    expect(body.opportunities.length).toBeGreaterThan(0);
    expect(body.opportunities.length).toBeLessThanOrEqual(5);
    for (const o of body.opportunities) {
      expect(o.roi).toBeGreaterThan(0);
      expect(o.legs).toHaveLength(2);
    }
  });

  it('answers market, book and group tools from the service, and errors as tool errors', async () => {
    const markets = JSON.parse((await callTool('search_markets', { platform: 'venue_a', limit: 3 })).content[0]!.text) as { markets: { market_id: string }[] };
    expect(markets.markets).toHaveLength(3);
    const id = markets.markets[0]!.market_id;
    const book = JSON.parse((await callTool('get_orderbook', { platform: 'venue_a', market_id: id, depth: 5 })).content[0]!.text) as { market_id: string };
    expect(book.market_id).toBe(id);
    const prices = JSON.parse((await callTool('get_prices', { ids: [`venue_a:${id}`] })).content[0]!.text) as { _meta: { requested: number } };
    expect(prices._meta.requested).toBe(1);
    const groups = JSON.parse((await callTool('matching_groups', { venue_a_key: id })).content[0]!.text) as { groups: unknown[] };
    expect(Array.isArray(groups.groups)).toBe(true);
    // crossbook's 404 and the tool's own argument rules come back as tool errors, not protocol errors.
    const missing = await callTool('get_orderbook', { platform: 'venue_a', market_id: 'NO-SUCH-MARKET' });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toMatch(/404/);
    const two = await callTool('matching_groups', { query: 'Seahawks', venue_a_key: id });
    expect(two.isError).toBe(true);
    expect(two.content[0]!.text).toMatch(/exactly one/);
    // Arguments outside the input schema are refused before any request.
    const bad = await callTool('live_arb', { limit: 1000 });
    expect(bad.isError).toBe(true);
  });
});
