import assert from 'node:assert/strict';
import { get } from 'node:http';
import { before, describe, it } from 'node:test';
import { PDF, PdfArray, type PdfDict, type PdfName, type PdfString } from '@libpdf/core';
import { aDocument } from '../helpers/documents.js';
import { aUser, someUsers, withMail } from '../helpers/people.js';
import { USER_PASSWORD } from '../helpers/server.js';
import { shareTokenOf } from '../helpers/smtp.js';
import { useServer } from '../helpers/use-server.js';

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.3, percentHeight: 0.05 });
const imported = (key: string) => JSON.stringify({ importedField: key });

/**
 * GET without keep-alive: the server may finish a streamed download a moment after the client has
 * read every byte, and a connection still busy when the server closes holds the close up.
 */
async function download(url: string): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers: { connection: 'close' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
      response.on('error', reject);
    }).on('error', reject);
  });
}

/** The /Contents of the page's FreeText annotations: the texts written into the document. */
async function writtenTexts(pdf: Uint8Array): Promise<string[]> {
  const doc = await PDF.load(pdf);
  const annots = doc.getPage(0)!.dict.get('Annots', (ref) => doc.getObject(ref));
  if (!(annots instanceof PdfArray)) return [];
  return annots
    .toArray()
    .map((ref) => doc.getObject(ref as never) as PdfDict)
    .filter((a) => (a.get('Subtype') as PdfName).value === 'FreeText')
    .map((a) => (a.get('Contents') as PdfString).asString());
}

describe('spec Custom field: "in the sharing flow the creator can place them as imported fields"', () => {
  const server = useServer({ smtp: true });
  let owner: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
    await someUsers(server, [withMail('ivy')]);
  });

  const customFields = [
    { key: 'contractNo', displayName: 'Contract number', type: 'string', value: 'C-2024-17' },
    { key: 'amount', displayName: 'Amount', type: 'number', value: 12500 },
  ];
  const newDoc = (title: string) => aDocument(server, owner, { title, body: { customFields } });
  /** POST /share of document `id` to one signer, with these fields. */
  const share = (id: string, shareTo: string, signatureFields: unknown[]) =>
    server.api('POST', '/share', {
      token: owner,
      body: { id, data: [{ sharePurpose: 'sign', shareTo }], signatureFields },
    });
  const mainFile = async (id: string) => {
    const doc = (await server.api('GET', `/documents/${id}`, { token: owner })).body.results[0];
    return download(`${server.url}/api/v1/files/loadFile/hash/${doc.pdfFile.content}?token=${owner}`);
  };

  it('an importedField key the document does not have, or on a field that is not an annotation, is 400 naming the field', async () => {
    const id = await newDoc('Refused');
    const unknown = await share(id, 'ivy', [
      { type: 'signature', user: ['ivy'], position: at(0.1, 0.8) },
      { type: 'annotation', user: ['ivy'], position: at(0.1, 0.1), config: imported('iban') },
    ]);
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.code, 'VALIDATION_ERROR');
    assert.equal(
      unknown.body.message,
      'Request validation errors: BODY ERRORS: "signatureFields[1].config" importedField must be one of the document\'s custom field keys [contractNo, amount]',
    );
    const onSignature = await share(id, 'ivy', [
      { type: 'signature', user: ['ivy'], position: at(0.1, 0.8), config: imported('amount') },
    ]);
    assert.equal(onSignature.status, 400);
    assert.match(
      onSignature.body.message,
      /"signatureFields\[0\]\.config" importedField is allowed on annotation fields only/,
    );
    const notText = await share(id, 'ivy', [
      { type: 'annotation', user: ['ivy'], position: at(0.1, 0.1), config: '{"importedField":7}' },
    ]);
    assert.equal(notText.status, 400);
    assert.match(notText.body.message, /"signatureFields\[0\]\.config" importedField must be a string/);
    const nothingShared = await server.api('GET', `/documents/${id}`, { token: owner });
    assert.deepEqual(nothingShared.body.results[0].waitingFor, []);
  });

  it('an external recipient sees the imported value prefilled, and signing writes it into the document', async () => {
    const id = await newDoc('Imported by link');
    const shared = await share(id, 'guest@example.org', [
      { type: 'signature', user: ['guest@example.org'], position: at(0.1, 0.8) },
      {
        type: 'annotation',
        subtype: 'annotation_generic',
        user: ['guest@example.org'],
        pages: [1],
        position: at(0.1, 0.1),
        config: imported('contractNo'),
        fontSize: 12,
      },
    ]);
    assert.equal(shared.status, 200, shared.text);
    const field = shared.body[0].signatureFields[1];
    assert.equal(field.text, 'C-2024-17', 'the Share object shows the value');
    assert.equal(field.readOnly, true);
    assert.deepEqual(field.importedField, {
      key: 'contractNo',
      displayName: 'Contract number',
      type: 'string',
    });
    assert.equal(field.config, imported('contractNo'), 'the config is kept as given');

    // The value is imported, not copied: a correction before the recipient acts is what they see.
    const version = (await server.api('GET', `/documents/${id}`, { token: owner })).body.results[0]._version;
    const edited = await server.api('PUT', `/documents/edit/${version}`, {
      token: owner,
      body: { id, customFields: [{ ...customFields[0], value: 'C-2024-18' }, customFields[1]] },
    });
    assert.equal(edited.status, 200, edited.text);

    const token = shareTokenOf(await server.smtp.waitFor('guest@example.org'));
    const shown = await server.api('GET', '/share/document', { token });
    assert.equal(shown.status, 200, shown.text);
    const document = shown.body.results[0];
    assert.equal(document.signatureFields.length, 2);
    assert.equal(document.signatureFields[1].text, 'C-2024-18');
    assert.equal(document.signatureFields[1].readOnly, true);

    const signed = await server.api('PUT', `/share/document/sign/${document._version}`, {
      token,
      body: { id, signatures: [{ type: 'signature', position: at(0.1, 0.8) }] },
    });
    assert.equal(signed.status, 200, signed.text);
    assert.equal(signed.body.shareStateName, 'completed');
    assert.deepEqual(await writtenTexts(await mainFile(id)), ['C-2024-18']);
  });

  it('an internal recipient signing with their session gets the imported value and readOnly predefined texts written', async () => {
    const id = await newDoc('Imported for a user');
    const shared = await share(id, 'ivy', [
      { type: 'annotation', user: ['ivy'], position: at(0.1, 0.1), config: imported('amount') },
      {
        type: 'annotation',
        user: ['ivy'],
        position: at(0.1, 0.2),
        text: 'Approved by legal',
        readOnly: true,
      },
      { type: 'annotation', user: ['ivy'], position: at(0.1, 0.3), text: 'Rewrite me' },
      // Where she signs: recipients draw only in their fields (issue 40).
      { type: 'signature', user: ['ivy'], position: at(0.5, 0.8) },
    ]);
    assert.equal(shared.status, 200, shared.text);
    const ivy = await server.login('ivy', USER_PASSWORD);
    const shown = await server.api('GET', '/share/document', { token: ivy, query: { id } });
    assert.equal(shown.status, 200, shown.text);
    assert.equal(shown.body.results[0].signatureFields[0].text, '12500');
    const version = shown.body.results[0]._version;
    const signed = await server.api('PUT', `/documents/sign/${version}`, {
      token: ivy,
      body: { id, signatures: [{ type: 'signature', position: at(0.5, 0.8) }] },
    });
    assert.equal(signed.status, 200, signed.text);
    // Only read-only texts are written for the signer; a text they may rewrite is theirs to send.
    assert.deepEqual((await writtenTexts(await mainFile(id))).sort(), ['12500', 'Approved by legal']);
  });

  it('the owner signing their own document writes no share fields', async () => {
    const id = await newDoc('Owner alone');
    const signed = await server.api('PUT', '/documents/sign/1', {
      token: owner,
      body: { id, signatures: [{ type: 'signature', position: at(0.5, 0.8) }] },
    });
    assert.equal(signed.status, 200, signed.text);
    assert.deepEqual(await writtenTexts(await mainFile(id)), []);
  });
});
