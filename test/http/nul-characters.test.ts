import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useServer } from '../helpers/use-server.js';

describe('No text of a request may hold the NUL character (PostgreSQL cannot store it): 400 naming the field, never 500', () => {
  const server = useServer();
  let token: string;
  before(async () => (token = await server.adminToken()));

  it('in a path parameter', async () => {
    const answer = await server.api('GET', '/documents/a%00b', { token });
    assert.equal(answer.status, 400, answer.text);
    assert.equal(answer.body.code, 'VALIDATION_ERROR');
    assert.match(
      answer.body.message,
      /^Request validation errors: PARAMS ERRORS: "\w+" must not contain the NUL character$/,
    );
  });

  it('in a JSON value or key, at any depth', async () => {
    const value = await server.api('POST', '/folders', { token, body: { name: 'a\u0000b' } });
    assert.equal(value.status, 400, value.text);
    assert.equal(
      value.body.message,
      'Request validation errors: BODY ERRORS: "name" must not contain the NUL character',
    );
    const key = await server.api('PUT', '/configuration', {
      token,
      body: { configuration: { ui: [{ 'x\u0000': 1 }] } },
    });
    assert.equal(key.status, 400, key.text);
    assert.ok(
      key.body.message.startsWith('Request validation errors: BODY ERRORS: "configuration.ui[0].x') &&
        key.body.message.endsWith('" must not contain the NUL character'),
      key.body.message,
    );
  });

  it('in a multipart field', async () => {
    const answer = await server.api('POST', '/files/saveFile', {
      token,
      form: {
        fields: { fileName: 'a\u0000b.txt' },
        file: { name: 'note.txt', type: 'text/plain', bytes: Buffer.from('text') },
      },
    });
    assert.equal(answer.status, 400, answer.text);
    assert.equal(
      answer.body.message,
      'Request validation errors: BODY ERRORS: "fileName" must not contain the NUL character',
    );
  });
});
