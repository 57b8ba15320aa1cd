// Setup file of the `unit` project: unit tests open no sockets and start no processes. Anything that
// tries fails at once with a message saying where the test belongs instead.
import childProcess, { ChildProcess } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

const refuse = (what: string) => (): never => {
  throw new Error(`unit tests do not ${what}: put this test in the 'integration' project (vitest.config.ts)`);
};

net.Socket.prototype.connect = refuse('open sockets');
net.Server.prototype.listen = refuse('listen on sockets');
// spawn, exec, execFile and fork all start through ChildProcess#spawn (undeclared in @types/node).
Object.assign(ChildProcess.prototype, { spawn: refuse('start child processes') });
childProcess.spawnSync = refuse('start child processes');
childProcess.execSync = refuse('start child processes');
childProcess.execFileSync = refuse('start child processes');
syncBuiltinESMExports();
