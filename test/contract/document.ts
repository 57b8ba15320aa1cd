import type { ValidateFunction } from 'ajv/dist/2020.js';
import { makeAjv } from './ajv.js';

type Json = Record<string, unknown>;

/** One answer of the service, as a test saw it. */
export interface Answer {
  readonly path: string;
  readonly status: number;
  readonly contentType: string | null;
  readonly body: unknown;
}

/**
 * The OpenAPI document as a checker of answers: the operation whose path template matches, the
 * status it documents, the content type and the body schema (ajv, JSON Schema 2020-12 as OpenAPI
 * 3.1 uses it). An undocumented status, content type or field is a disagreement.
 */
export class Contract {
  private readonly ajv = makeAjv();
  private readonly ops: { re: RegExp; template: string; op: Json }[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(
    readonly doc: Json,
    private readonly base: string,
  ) {
    const components = (doc['components'] as Json | undefined)?.['schemas'] ?? {};
    this.ajv.addSchema({ $id: 'doc', components: { schemas: components } });
    for (const [template, item] of Object.entries(doc['paths'] as Record<string, Json>)) {
      const re = new RegExp(`^${template.replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === '{' || c === '}' ? c : `\\${c}`)).replace(/\{[^}]+\}/g, '[^/]+')}$`);
      this.ops.push({ re, template, op: item['get'] as Json });
    }
    // Literal paths before templated ones (/wallets/{address}/positions vs …).
    this.ops.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  }

  /** The template of the documented path a request path (under the base, query excluded) falls on. */
  template(path: string): string | undefined {
    return this.ops.find((o) => o.re.test(path))?.template;
  }

  /** Disagreements of one answer with the document; [] when it agrees or the path is not an API route. */
  check(a: Answer): string[] {
    const p = a.path.startsWith(this.base) ? a.path.slice(this.base.length) : a.path;
    const path = p.split('?')[0]!;
    const found = this.ops.find((o) => o.re.test(path));
    if (!found) return [];
    const where = `GET ${found.template} → ${a.status}`;
    const responses = found.op['responses'] as Record<string, Json>;
    let resp = responses[String(a.status)];
    if (!resp) return [`${where}: status not documented`];
    if (typeof resp['$ref'] === 'string') resp = this.resolve(resp['$ref']);
    const content = resp['content'] as Record<string, Json> | undefined;
    if (!content) return [];
    const type = (a.contentType ?? '').split(';')[0]!.trim();
    const media = content[type];
    if (!media) return [`${where}: content type ${type || '(none)'} not documented (${Object.keys(content).join(', ')})`];
    const key = `${found.template} ${a.status} ${type}`;
    let v = this.compiled.get(key);
    if (!v) {
      v = this.ajv.compile(rebase(media['schema'] as Json));
      this.compiled.set(key, v);
    }
    if (v(a.body)) return [];
    return (v.errors ?? []).slice(0, 5).map((e) => `${where}: body${e.instancePath} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  /** A component schema by name (a WebSocket message), compiled. */
  component(name: string): ValidateFunction {
    let v = this.compiled.get(`#${name}`);
    if (!v) {
      v = this.ajv.compile({ $ref: `doc#/components/schemas/${name}` });
      this.compiled.set(`#${name}`, v);
    }
    return v;
  }

  private resolve(ref: string): Json {
    let node: unknown = this.doc;
    for (const part of ref.replace(/^#\//, '').split('/')) node = (node as Json)[part];
    return node as Json;
  }
}

/** `#/components/…` references point into the document registered as `doc`. */
function rebase(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\/components\//g, '"$ref":"doc#/components/')) as Json;
}

/** Collects the disagreements of every answer a test file produced, to assert on once at the end. */
export class ContractLog {
  readonly problems = new Set<string>();
  constructor(private readonly contract: () => Contract) {}
  record(a: Answer): void {
    for (const p of this.contract().check(a)) this.problems.add(p);
  }
}
