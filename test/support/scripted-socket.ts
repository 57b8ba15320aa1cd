import { EventEmitter } from 'node:events';

/** A WebSocket the test scripts: what the feed runtime's socket sees of the `ws` client (it opens, closes and delivers frames when the test says so). */
export class ScriptedSocket extends EventEmitter {
  readyState = 0;
  readonly sent: string[] = [];
  readonly createdAt = Date.now();
  open(): void {
    this.readyState = 1;
    this.emit('open');
  }
  fail(code = 1006, reason = ''): void {
    this.readyState = 3;
    this.emit('close', code, Buffer.from(reason));
  }
  frame(text: string): void {
    this.emit('message', Buffer.from(text), false);
  }
  send(data: string): void {
    this.sent.push(data);
  }
  ping(): void {}
  terminate(): void {
    if (this.readyState !== 3) this.fail();
  }
}
