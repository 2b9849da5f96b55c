import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useServer } from '../helpers/use-server.js';

/**
 * Issue 24, items 17 and 18: the forms a request may take that the schemas did not expect. An
 * absent body is an empty object where the body schema allows it; a query flag takes 1/0 as well
 * as true/false. Both are answered once, in the validation layer, for every route.
 */
describe('request forms: absent bodies and 1/0 query flags', () => {
  const server = useServer();
  let token: string;
  before(async () => (token = await server.adminToken()));
  /** POST /api/key (every field optional) with `rawBody` sent as `contentType`. */
  const postKey = (contentType: string, rawBody: string) =>
    server.api('POST', '/api/key', { token, headers: { 'content-type': contentType }, rawBody });

  describe('"An absent body is an empty object where the schema allows it"', () => {
    const absentForms: [string, Record<string, string>, string | undefined][] = [
      ['no body, no content-type', {}, undefined],
      ['an empty text/plain body', { 'content-type': 'text/plain' }, ''],
      ['an empty application/json body', { 'content-type': 'application/json' }, ''],
    ];
    for (const [form, headers, rawBody] of absentForms) {
      it(`POST /api/key (every field optional) with ${form} creates a key`, async () => {
        const response = await server.api('POST', '/api/key', { token, headers, rawBody });
        assert.equal(response.status, 200, response.text);
        assert.equal(typeof response.body.id, 'string');
      });
    }

    it('POST /groups/search without a body answers like an empty search (defaults apply)', async () => {
      const absent = await server.api('POST', '/groups/search', { token });
      const empty = await server.api('POST', '/groups/search', { token, body: {} });
      assert.equal(absent.status, 200, absent.text);
      assert.deepEqual(absent.body, empty.body);
    });

    it('POST /share/reminder without a body is judged on its fields, not refused as "not an object"', async () => {
      const absent = await server.api('POST', '/share/reminder', {
        token,
        headers: { 'content-type': 'text/plain' },
        rawBody: '',
      });
      const empty = await server.api('POST', '/share/reminder', { token, body: {} });
      assert.equal(absent.status, empty.status, absent.text);
      assert.deepEqual(absent.body, empty.body);
      assert.doesNotMatch(String(absent.body.message), /must be of type object/);
    });

    it('a required field still has to be sent: DELETE /documents without a body names `documents`', async () => {
      const response = await server.api('DELETE', '/documents', { token });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.code, 'VALIDATION_ERROR');
      assert.equal(response.body.message, 'Request validation errors: BODY ERRORS: "documents" is required');
    });

    it('a body that is not JSON is still refused: text/plain with text', async () => {
      const response = await postKey('text/plain', 'description=x');
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.code, 'VALIDATION_ERROR');
    });

    it('an explicit JSON null is not an absent body', async () => {
      const response = await postKey('application/json', 'null');
      assert.equal(response.status, 400, response.text);
    });
  });

  describe('"Query booleans accept 1/0 as well as true/false"', () => {
    it('GET /login?returnToken=0 leaves the token out, returnToken=1 puts it in', async () => {
      const without = await server.api('GET', '/login', { token, query: { returnToken: '0' } });
      assert.equal(without.status, 200, without.text);
      assert.equal(without.body.logged, true);
      assert.equal('token' in without.body, false);
      const withToken = await server.api('GET', '/login', { token, query: { returnToken: '1' } });
      assert.equal(withToken.status, 200, withToken.text);
      assert.equal(withToken.body.token, token);
    });

    it('DELETE /documents?hardDelete=1 deletes permanently, hardDelete=0 softly', async () => {
      const folder = async (name: string) =>
        (
          await server.api('POST', '/folders', {
            token,
            body: { name, isShared: false, parentFolderId: null },
          })
        ).body.id as string;
      const hard = await folder('hard');
      const soft = await folder('soft');
      for (const [id, flag] of [
        [hard, '1'],
        [soft, '0'],
      ] as const) {
        const response = await server.api('DELETE', '/documents', {
          token,
          query: { hardDelete: flag },
          body: { documents: [{ id }] },
        });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.count, 1);
      }
      const rows = await server.app.deps.db
        .selectFrom('documents')
        .select('id')
        .where('id', 'in', [hard, soft])
        .execute();
      assert.deepEqual(
        rows.map((r) => r.id),
        [soft],
        'only the hardDelete=1 folder is gone from the table',
      );
    });

    it('other text is still refused: returnToken=yes', async () => {
      const response = await server.api('GET', '/login', { token, query: { returnToken: 'yes' } });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.code, 'VALIDATION_ERROR');
    });
  });
});
