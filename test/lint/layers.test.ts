import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { layers } from '../../eslint/layers.js';

/** ESLint with the layers rule alone (no type information needed), as the repository's config applies it. */
function linter(): ESLint {
  return new ESLint({
    cwd: process.cwd(),
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['src/**/*.ts', 'web/**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        linterOptions: { reportUnusedDisableDirectives: 'off' },
        plugins: { layers },
        rules: { 'layers/imports': 'error' },
      },
    ],
  });
}

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await linter().lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.message);
}

describe('the layers lint rule (ARCHITECTURE.md)', () => {
  const refused: [file: string, code: string, because: RegExp][] = [
    ['src/sharing/planted.ts', "import { x } from '../documents/attachments.js';", /sibling documents/],
    ['src/sharing/uploads/planted.ts', "import { x } from '../../users/create-user.js';", /sibling users/],
    ['src/auth/oidc/planted.ts', "export { x } from '../../signing/sign-document.js';", /sibling signing/],
    [
      'src/documents/planted.ts',
      "const m = await import('../webhooks/create-webhook.js');",
      /sibling webhooks/,
    ],
    [
      'src/core/planted.ts',
      "import { x } from '../signing/sign-document.js';",
      /core\/ may not import the capability/,
    ],
    ['src/core/sharing/planted.ts', "import type { X } from '../../http/schemas.js';", /composition/],
    ['src/pdf/planted.ts', "import type { Database } from '../store/db/schema.js';", /pdf\/ works on bytes/],
    ['src/pki/planted.ts', "import type { Deps } from '../core/deps.js';", /may not import core\//],
    ['src/store/planted.ts', "import { enqueue } from '../jobs/queue.js';", /stands above it/],
    ['src/jobs/planted.ts', "import { record } from '../core/audit/record.js';", /may not import core\//],
    ['src/base/planted.ts', "import type { Deps } from '../core/deps.js';", /base\/ is the ground floor/],
    ['src/base/planted.ts', "import { x } from '../pdf/sign-pdf.js';", /base\/ is the ground floor/],
    ['src/jobs/planted.ts', "import { x } from '../sharing/create-shares.js';", /capability sharing/],
    [
      'src/store/db/migrations/0099-planted.ts',
      "import { chainHash } from '../../../core/audit/chain.js';",
      /may not import core\//,
    ],
    ['src/store/db/migrations/0099-planted.ts', "import { writeJson } from '../json.js';", /no live code/],
    [
      'web/src/planted.ts',
      "import { AppError } from '../../src/base/errors.js';",
      /web\/ is the signer page/,
    ],
    // Core's rooms in their order (CORE): a room imports only those below it, by type as by value.
    [
      'src/core/sharing/planted.ts',
      "import type { VisualRequest } from '../signing/visual-input.js';",
      /^core\/sharing may not import core\/signing \(core\/signing\/visual-input\), which stands above it in core's order .*: move what sharing needs down/,
    ],
    [
      'src/core/access/planted.ts',
      "import { record } from '../audit/record.js';",
      /core\/access may not import core\/audit/,
    ],
    [
      'src/core/scroll.ts',
      "import { x } from './views/document-view.js';",
      /core\/scroll may not import core\/views/,
    ],
    [
      'src/core/deps.ts',
      "import type { Actor } from './access/actor.js';",
      /core\/deps may not import core\/access/,
    ],
    [
      'src/core/planted/planted.ts',
      "import type { Deps } from '../deps.js';",
      /core\/planted has no place in core's order/,
    ],
  ];
  for (const [file, code, because] of refused)
    it(`refuses ${code} in ${file}`, async () => {
      const found = await problems(file, code);
      assert.equal(found.length, 1, `${file}: ${code} → ${JSON.stringify(found)}`);
      assert.match(found[0] ?? '', because);
    });

  const allowed: [file: string, code: string][] = [
    ['src/sharing/planted.ts', "import { x } from './create-shares.js';"],
    ['src/sharing/uploads/planted.ts', "import { x } from '../create-shares.js';"],
    ['src/sharing/planted.ts', "import { x } from '../core/sharing/workflow.js';"],
    [
      'src/signing/planted.ts',
      "import { x } from '../pdf/sign-pdf.js'; import { y } from '../jobs/queue.js';",
    ],
    ['src/pdf/planted.ts', "import { ValidationError } from '../base/errors.js';"],
    ['src/store/db/planted.ts', "import type { Clock } from '../../base/clock.js';"],
    ['src/base/planted.ts', "import { AppError } from './errors.js';"],
    ['src/store/db/migrations/0099-planted.ts', "import type { SqlDialect } from '../dialect.js';"],
    ['src/http/routes/planted.ts', "import { x } from '../../sharing/create-shares.js';"],
    [
      'src/core/signing/planted.ts',
      "import { completeShare } from '../sharing/workflow.js'; import type { Deps } from '../deps.js';",
    ],
    ['src/core/views/planted.ts', "import type { ShareRow } from '../sharing/share-types.js';"],
    ['src/core/sharing/planted.ts', "import type { TextEntry } from '../documents/visual-entries.js';"],
    ['src/core/scroll.ts', "import type { Actor } from './access/actor.js';"],
    ['web/src/planted.ts', "import { x } from './api.js';"],
  ];
  for (const [file, code] of allowed)
    it(`allows ${code} in ${file}`, async () => {
      assert.deepEqual(await problems(file, code), []);
    });

  it('passes on the whole tree of src/ and web/', async () => {
    const results = await linter().lintFiles(['src/**/*.ts', 'web/**/*.ts']);
    assert.ok(results.length > 300, `only ${results.length} files linted`);
    const found = results.flatMap((r) => r.messages.map((m) => `${r.filePath}:${m.line} ${m.message}`));
    assert.deepEqual(found, []);
  });
});
