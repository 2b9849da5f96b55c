import { writeFileSync } from 'node:fs';

// A node:test reporter that prints nothing and keeps test-artifacts/durations.json up to date with how
// long each test file's tests ran (the sum of its top-level tests' durations, in seconds). It writes
// the file after every top-level test, not once at the end: --test-force-exit ends the run before a
// reporter's last output is flushed.
const OUT = 'test-artifacts/durations.json';

// node:test loads a reporter from its default export.
// eslint-disable-next-line no-restricted-syntax
export default async function* durations(source) {
  const seconds = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (nesting !== 0 || !file || typeof details?.duration_ms !== 'number') continue;
    const name = relative(file);
    seconds[name] = Math.round(((seconds[name] ?? 0) + details.duration_ms / 1000) * 10) / 10;
    const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
    writeFileSync(OUT, `${JSON.stringify(sorted, null, 1)}\n`);
  }
  yield '';
}

function relative(file) {
  const at = file.replace(/\\/g, '/').lastIndexOf('/test/');
  return at === -1 ? file : file.slice(at + 1);
}
