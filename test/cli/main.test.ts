import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { program } from '../../src/cli/main.js';
import { PROTOCOLS } from '../../src/config/schema.js';

const sub = (c: Command, name: string): Command => {
  const found = c.commands.find((x) => x.name() === name);
  if (!found) throw new Error(`no command ${name}`);
  return found;
};
const option = (c: Command, flag: string): Option => {
  const found = c.options.find((o) => o.long === flag);
  if (!found) throw new Error(`no option ${flag} on ${c.name()}`);
  return found;
};

describe('crossbook command tree', () => {
  it('has every command of the CLI, keys with its four subcommands and data with its three', () => {
    const p = program();
    expect(p.commands.map((c) => c.name())).toEqual([
      'serve',
      'sim',
      'normalize',
      'replay',
      'backtest',
      'match',
      'bench',
      'soak',
      'arb',
      'keys',
      'data',
      'webhooks',
      'mcp',
      'groups',
      'capture',
    ]);
    expect(sub(p, 'keys').commands.map((c) => c.name())).toEqual(['create', 'list', 'revoke', 'plan']);
    expect(sub(p, 'data').commands.map((c) => c.name())).toEqual(['check', 'repair', 'backup']);
  });

  it('normalize --protocol accepts exactly the protocols of the venue registry schema', () => {
    const protocol = option(sub(program(), 'normalize'), '--protocol');
    expect([...(protocol.argChoices ?? [])].sort()).toEqual([...PROTOCOLS].sort());
    expect(protocol.mandatory).toBe(true);
  });

  it('rejects a protocol it does not speak, naming the choices', () => {
    const p = program().exitOverride();
    let stderr = '';
    p.configureOutput({ writeErr: (s) => void (stderr += s), writeOut: () => undefined });
    for (const c of p.commands) c.exitOverride().configureOutput({ writeErr: (s) => void (stderr += s), writeOut: () => undefined });
    expect(() => p.parse(['node', 'crossbook', 'normalize', '--protocol', 'nope', 'x.json'])).toThrow();
    expect(stderr).toMatch(/argument 'nope' is invalid\. Allowed choices are kalshi, polymarket/);
  });
});
