import type { ValidateFunction } from 'ajv/dist/2020.js';
import { makeAjv } from './ajv.js';
import { jsonSchema } from '../../src/access/api.js';
import { SERVER_MESSAGES, serverMessageSchema } from '../../src/ws/protocol.js';

const ajv = makeAjv();
const compiled = new Map<string, ValidateFunction>();

/**
 * Disagreements of one WebSocket server message with its schema in the OpenAPI document's
 * components (the JSON Schema emitted from the zod declaration, additionalProperties false).
 */
export function checkServerMessage(m: unknown): string[] {
  const type = typeof m === 'object' && m !== null ? (m as { type?: unknown }).type : undefined;
  const name = typeof type === 'string' ? serverMessageSchema(type) : undefined;
  if (!name) return [`WebSocket message of undocumented type ${JSON.stringify(type)}`];
  let v = compiled.get(name);
  if (!v) {
    v = ajv.compile(jsonSchema(SERVER_MESSAGES[name]));
    compiled.set(name, v);
  }
  if (v(m)) return [];
  return (v.errors ?? []).slice(0, 5).map((e) => `WebSocket ${String(type)} (${name}): ${e.instancePath || '(root)'} ${e.message} ${JSON.stringify(e.params)}`);
}

/** Throws when a WebSocket server message disagrees with the document. */
export function assertServerMessage(m: unknown): void {
  const problems = checkServerMessage(m);
  if (problems.length) throw new Error(`WebSocket message disagrees with the OpenAPI document:\n${problems.join('\n')}\n${JSON.stringify(m).slice(0, 500)}`);
}
