import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The node arguments that run `name` (a module beside `from`, given without its extension) in a
 * child process: the built .js when `from` is built, or the .ts source through tsx when `from`
 * itself runs from source (tests).
 */
export function scriptArgs(from: string, name: string): string[] {
  const source = from.endsWith('.ts');
  const script = fileURLToPath(new URL(`./${name}${source ? '.ts' : '.js'}`, from));
  return source ? ['--import', pathToFileURL(createRequire(from).resolve('tsx')).href, script] : [script];
}

/**
 * How to start `name` (a module beside `from`, without its extension) on a worker thread: the built
 * .js when `from` is built; from source (tests), a bootstrap that registers tsx's loader on that
 * thread first and then imports the .ts (a worker does not inherit the parent's loader, and
 * `--import tsx` in a worker's execArgv registers it on the main thread only).
 */
export function workerScript(from: string, name: string): { readonly script: string | URL; readonly evaluate: boolean } {
  if (!from.endsWith('.ts')) return { script: new URL(`./${name}.js`, from), evaluate: false };
  const api = new URL('./esm/api/index.mjs', pathToFileURL(createRequire(from).resolve('tsx'))).href;
  const target = new URL(`./${name}.ts`, from).href;
  return { script: `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(target)}); })`, evaluate: true };
}
