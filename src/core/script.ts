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
