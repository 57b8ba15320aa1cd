import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Plugin = (ajv: Ajv2020) => Ajv2020;
// ajv-formats is CommonJS: under ESM its plugin is the default export's `default`, or the export itself.
const m = addFormatsModule as unknown as { default?: Plugin } & Plugin;
const addFormats: Plugin = m.default ?? m;

/** An ajv for the document's JSON Schema 2020-12 (the dialect of OpenAPI 3.1), formats checked. */
export function makeAjv(): Ajv2020 {
  return addFormats(new Ajv2020({ strict: false, allErrors: false, validateFormats: true }));
}
