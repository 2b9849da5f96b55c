import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import type { OpenAPI3 } from 'openapi-typescript';
import { clientSchemaFrom, SCHEMA_FILE } from '../../clients/typescript/scripts/generate-schema.js';
import { useServer } from '../helpers/use-server.js';

/**
 * Issue 25: "A typed TypeScript client generated from the OpenAPI description … CI fails when the
 * description and the client disagree." The checked-in types (clients/typescript/src/schema.d.ts)
 * are generated again from what a real server answers at /api/v1/openapi.json, and must be the same.
 */
describe('the typed TypeScript client (clients/typescript)', () => {
  const server = useServer();

  it('its types are those of the server’s OpenAPI description, as `npm run client:generate` writes them', async () => {
    const description = (await server.api('GET', '/openapi.json')).body as OpenAPI3;
    const generated = (await clientSchemaFrom(description)).split('\n');
    const checkedIn = (await readFile(SCHEMA_FILE, 'utf8')).split('\n');
    const line = generated.findIndex((text, i) => text !== checkedIn[i]);
    const differs = line >= 0 || generated.length !== checkedIn.length;
    assert.ok(
      !differs,
      `clients/typescript/src/schema.d.ts no longer matches the API (first difference at line ${line + 1}: ` +
        `${JSON.stringify(checkedIn[line])} where the description gives ${JSON.stringify(generated[line])}); ` +
        'run `npm run client:generate` and commit the result',
    );
  });
});
