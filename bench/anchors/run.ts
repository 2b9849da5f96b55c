/**
 * Anchor search time: `npm run bench:anchors [-- --runs 10]`. Searches a generated 100-page PDF for a
 * literal anchor and a regular expression (spec: Anchor rules) and prints the time per search.
 */
import { parseArgs } from 'node:util';
import { findAnchors } from '../../src/pdf/anchors.js';
import { manyPagesPdf } from '../../test/fixtures/pdf-fixtures.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' } } });
const runs = Math.max(3, Number(values.runs));
const { bytes } = manyPagesPdf(100);
const anchors = [
  { id: 'literal', text: 'dolor sit amet' },
  { id: 'pattern', regexp: 'ANCHOR-\\d+' },
];
await findAnchors({ pdf: bytes, anchors }); // warm-up
const times: number[] = [];
let fields = 0;
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  const result = await findAnchors({ pdf: bytes, anchors });
  times.push(performance.now() - t0);
  fields = result.reduce((n, r) => n + r.fields.length, 0);
  process.stderr.write(`\r  run ${i + 1}/${runs}`);
}
process.stderr.write('\n');
times.sort((a, b) => a - b);
console.log(`Anchors: 100 pages (${(bytes.length / 1024).toFixed(0)} KB), 2 anchors, ${fields} fields found`);
console.log(
  `  median ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms, min ${times[0]!.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms (${runs} runs)`,
);
