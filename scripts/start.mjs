// `npm start`: builds dist/ only when its sources changed since the last build (scripts/build.mjs),
// then runs the server in this process, so SIGTERM and SIGINT reach it directly (dist/main.js).
import { ensureBuilt } from './build.mjs';

try {
  ensureBuilt();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
const { main } = await import('../dist/main.js');
main();
