// Module hooks for tests that check which packages a process loads (test/ops/start.test.ts):
// - SIGNERY_TEST_MODULE_LOG: a file each resolved module under node_modules/ is appended to, one URL a line;
// - SIGNERY_TEST_HIDE_PACKAGE: a package resolved as if it were not installed (ERR_MODULE_NOT_FOUND),
//   as after `npm install --omit=optional`.
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, next) {
  const hidden = process.env.SIGNERY_TEST_HIDE_PACKAGE;
  if (hidden && (specifier === hidden || specifier.startsWith(`${hidden}/`))) {
    const error = new Error(`Cannot find package '${specifier}' imported from ${context.parentURL}`);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  const resolved = await next(specifier, context);
  const log = process.env.SIGNERY_TEST_MODULE_LOG;
  if (log && resolved.url.includes('/node_modules/')) appendFileSync(log, `${resolved.url}\n`);
  return resolved;
}
