import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';

/**
 * Loads uWebSockets.js and refuses to run on its pure-JS fallback. The npm alias we install
 * (@trufflesuite/uws-js-unofficial) silently falls back to a Node http implementation when its
 * native binary cannot load (wrong Node ABI, wrong platform, UWS_USE_FALLBACK set); that would
 * cut throughput by an order of magnitude without a word, so we fail loudly instead.
 */
export function loadUws(): typeof UWS {
  const require = createRequire(import.meta.url);
  const uws = require('uWebSockets.js') as typeof UWS;
  if (!isNative(uws)) {
    throw new Error(
      `uWebSockets.js fell back to its pure-JS implementation (no native binary for ${process.platform}-${process.arch}, ` +
        `Node ABI ${process.versions.modules}${process.env['UWS_USE_FALLBACK'] ? ', UWS_USE_FALLBACK is set' : ''}). ` +
        'crossbook needs the native server: run on Node 20 x64 Linux/macOS, or reinstall dependencies.',
    );
  }
  return uws;
}

/** True when `uws.App` is the native addon's function. */
export function isNative(uws: { App: unknown }): boolean {
  return typeof uws.App === 'function' && Function.prototype.toString.call(uws.App).includes('[native code]');
}
