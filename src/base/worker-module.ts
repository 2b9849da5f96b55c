import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running the module `name` that sits beside the caller's module (`besideUrl`, its
 * `import.meta.url`), as the caller runs: built (`.js`), or under tsx (`.ts`: tests and development),
 * where the thread must register tsx's loader itself before importing the module.
 *
 * ```ts
 * const worker = startModuleWorker(import.meta.url, 'anchor-worker');
 * ```
 */
export function startModuleWorker(
  besideUrl: string,
  name: string,
  options: Omit<WorkerOptions, 'eval'> = {},
): Worker {
  const extension = extname(fileURLToPath(besideUrl));
  const module = new URL(`./${name}${extension}`, besideUrl);
  if (extension !== '.ts') return new Worker(module, options);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(module.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}
