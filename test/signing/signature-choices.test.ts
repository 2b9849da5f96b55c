import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { aDocument } from '../helpers/documents.js';
import { useServer } from '../helpers/use-server.js';

const at = { percentX: 0.1, percentY: 0.8, percentWidth: 0.25, percentHeight: 0.08 };

/** Issue 24, item 13: a choice the service does not have is refused, never silently replaced. */
describe('"An unknown signatureProvider on any sign or seal call is a 400, never silently ignored; the same for an unknown decorationType"', () => {
  const server = useServer();
  let token: string;
  let id: string;
  before(async () => {
    token = await server.adminToken();
    id = await aDocument(server, token, { title: 'Choices' });
  });

  const refused = (response: { status: number; body: { code: string; message: string } }, text: string) => {
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal(response.body.code, 'VALIDATION_ERROR');
    assert.equal(response.body.message, `Request validation errors: BODY ERRORS: ${text}`);
  };

  it('PUT /documents/sign/:version with signatureProvider "nope" is 400 and the document is unchanged', async () => {
    const response = await server.api('PUT', '/documents/sign/1', {
      token,
      body: { id, signatureProvider: 'nope', signatures: [{ type: 'signature', pages: [1], position: at }] },
    });
    refused(response, '"signatureProvider" must be one of [internal]');
    const doc = await server.api('GET', `/documents/${id}`, { token });
    assert.equal(doc.body.results[0]._version, 1);
    assert.equal(doc.body.results[0].isSigned, false);
  });

  it('PUT /documents/seal/:version with signatureProvider "nope" is 400', async () => {
    const response = await server.api('PUT', '/documents/seal/1', {
      token,
      body: { id, certificate: true, signatureProvider: 'nope' },
    });
    refused(response, '"signatureProvider" must be one of [internal]');
  });

  it('an unknown decorationType is 400 naming the entry, in every call that takes signature entries', async () => {
    const entry = { type: 'signature', pages: [1], position: at, decorationType: 'sparkles' };
    refused(
      await server.api('PUT', '/documents/sign/1', { token, body: { id, signatures: [entry] } }),
      '"signatures[0].decorationType" must be one of [empty, line, frame]',
    );
    refused(
      await server.api('POST', '/documents', {
        token,
        body: { body: { documentTitle: 'x' }, optionalData: { signatures: [entry] } },
      }),
      '"optionalData.signatures[0].decorationType" must be one of [empty, line, frame]',
    );
  });

  it('the internal provider and the listed decorations are still accepted', async () => {
    const response = await server.api('PUT', '/documents/sign/1', {
      token,
      body: {
        id,
        signatureProvider: 'internal',
        signatures: [{ type: 'signature', pages: [1], position: at, decorationType: 'line' }],
      },
    });
    assert.equal(response.status, 200, response.text);
  });
});
