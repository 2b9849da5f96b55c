import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { makePdf } from '../helpers/pdf.js';
import { ADMIN, createUser, upload } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

const sorted = (value: object) => Object.keys(value).sort();

const MINIFIED_DOCUMENT = [
  '_version',
  'barcode',
  'documentId',
  'documentTitle',
  'documentType',
  'isSigned',
  'modifyDate',
  'pdfFile',
  'workflow',
];

describe('spec Versioning 1: a reduced (minified) interface with fewer properties at the same URLs', () => {
  const server = useServer();
  let token: string;
  let documentId: string;
  before(async () => {
    token = (await aUser(server, { name: 'mia', email: 'mia@example.test', displayName: 'Mia' })).token;
    await createUser(server, { name: 'ned', email: 'ned@example.test' });
    const pdf = await upload(server, token, makePdf());
    const created = await server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: 'Full first', pdfFile: { content: pdf } } },
    });
    assert.equal(created.status, 200, created.text);
    documentId = created.body.results[0].documentId;
  });

  it('POST /login and GET /login: minified=true keeps logged, isUnlocked, token, tenant and who the user is', async () => {
    const full = await server.api('POST', '/login', { body: { name: 'mia', password: 'user-password-1' } });
    assert.ok(full.body.settings && full.body.rights && full.body.user.config, 'the full form is unchanged');
    const small = await server.api('POST', '/login', {
      query: { minified: 'true' },
      body: { name: 'mia', password: 'user-password-1' },
    });
    assert.equal(small.status, 200, small.text);
    assert.deepEqual(sorted(small.body), ['isUnlocked', 'logged', 'tenant', 'token', 'user']);
    assert.deepEqual(sorted(small.body.user), ['displayName', 'email', 'id', 'name', 'role']);
    assert.equal(small.body.user.displayName, 'Mia');
    assert.match(small.body.token, /.{20,}/);
    const me = await server.api('GET', '/login', { token: small.body.token, query: { minified: 'true' } });
    assert.equal(me.status, 200, me.text);
    assert.deepEqual(sorted(me.body), ['isUnlocked', 'logged', 'tenant', 'token', 'user']);
    assert.equal(me.body.token, small.body.token);
    const noToken = await server.api('GET', '/login', {
      token: small.body.token,
      query: { minified: 'true', returnToken: 'false' },
    });
    assert.deepEqual(sorted(noToken.body), ['isUnlocked', 'logged', 'tenant', 'user']);
    const stranger = await server.api('GET', '/login', { query: { minified: 'true' } });
    assert.deepEqual(stranger.body, { logged: false });
    const explicitFull = await server.api('GET', '/login', {
      token: small.body.token,
      query: { minified: 'false' },
    });
    assert.ok(explicitFull.body.settings, 'minified=false answers the full form');
  });

  it('POST /files/saveFile: minified=true keeps file {id, documentname, mimetype, size} (and anchorPositions when asked)', async () => {
    const small = await server.api('POST', '/files/saveFile', {
      token,
      query: { minified: 'true' },
      form: { file: { name: 'small.pdf', type: 'application/pdf', bytes: makePdf() } },
    });
    assert.equal(small.status, 200, small.text);
    assert.deepEqual(sorted(small.body), ['file']);
    assert.deepEqual(sorted(small.body.file), ['documentname', 'id', 'mimetype', 'size']);
    assert.equal(small.body.file.documentname, 'small.pdf');
    const anchored = await server.api('POST', '/files/saveFile', {
      token,
      query: { minified: 'true' },
      form: {
        fields: { signatureAnchors: JSON.stringify([{ id: 'sig', text: 'Sign here' }]) },
        file: { name: 'a.pdf', type: 'application/pdf', bytes: makePdf({ lines: ['Sign here: ____'] }) },
      },
    });
    assert.equal(anchored.status, 200, anchored.text);
    assert.deepEqual(sorted(anchored.body), ['anchorPositions', 'file']);
    assert.equal(anchored.body.anchorPositions[0].id, 'sig');
    const full = await server.api('POST', '/files/saveFile', {
      token,
      form: { file: { name: 'full.pdf', type: 'application/pdf', bytes: makePdf() } },
    });
    assert.ok(full.body.storage && full.body.file.checksum, 'the full form is unchanged');
  });

  it('POST /documents and GET /documents/:id: minified=true keeps ids, title, type, state, version, main file and barcode', async () => {
    const pdf = await upload(server, token, makePdf());
    const created = await server.api('POST', '/documents', {
      token,
      query: { minified: 'true' },
      body: { body: { documentTitle: 'Small', pdfFile: { content: pdf } } },
    });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(sorted(created.body), ['results']);
    const doc = created.body.results[0];
    assert.deepEqual(sorted(doc), MINIFIED_DOCUMENT);
    assert.deepEqual(sorted(doc.pdfFile), ['content']);
    assert.equal(doc._version, 1);
    assert.equal(doc.documentTitle, 'Small');
    assert.match(doc.barcode, /.+/);
    const read = await server.api('GET', `/documents/${doc.documentId}`, {
      token,
      query: { minified: 'true' },
    });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(sorted(read.body.results[0]), MINIFIED_DOCUMENT);
    assert.equal(read.body.results[0].pdfFile.content, pdf);
    const full = await server.api('GET', `/documents/${doc.documentId}`, { token });
    for (const key of ['createName', 'customFields', 'owner', 'waitingFor', 'submittedFiles'])
      assert.ok(key in full.body.results[0], `full form keeps ${key}`);
  });

  it('POST /search: minified=true keeps from, size, total and minified results (no users)', async () => {
    const small = await server.api('POST', '/search', { token, query: { minified: 'true' }, body: {} });
    assert.equal(small.status, 200, small.text);
    assert.deepEqual(sorted(small.body), ['from', 'results', 'size', 'total']);
    assert.ok(small.body.total >= 2);
    for (const result of small.body.results) {
      assert.ok(
        sorted(result).every((key) => MINIFIED_DOCUMENT.includes(key)),
        sorted(result).join(),
      );
    }
    const full = await server.api('POST', '/search', { token, body: {} });
    assert.ok(Array.isArray(full.body.users), 'the full form lists users');
  });

  it('POST /share: minified=true keeps shareId, shareType, status, isActive, sharedWith, sharedObjectEsId, validUntil, order', async () => {
    const small = await server.api('POST', '/share', {
      token,
      query: { minified: 'true' },
      body: { id: documentId, data: [{ sharePurpose: 'sign', shareTo: 'ned' }] },
    });
    assert.equal(small.status, 200, small.text);
    assert.deepEqual(sorted(small.body[0]), [
      'isActive',
      'order',
      'shareId',
      'shareType',
      'sharedObjectEsId',
      'sharedWith',
      'status',
      'validUntil',
    ]);
    assert.deepEqual(small.body[0].sharedWith, ['ned']);
    assert.equal(small.body[0].sharedObjectEsId, documentId);
  });

  it('minified is accepted on those routes only; other unknown query keys stay refused; errors keep their shape', async () => {
    const elsewhere = await server.api('DELETE', '/documents', {
      token,
      query: { minified: 'true' },
      body: { documents: [{ id: documentId }] },
    });
    assert.equal(elsewhere.status, 400);
    assert.equal(
      elsewhere.body.message,
      'Request validation errors: QUERY ERRORS: "minified" is not allowed',
    );
    const verify = await server.api('GET', `/documents/${documentId}/verify`, {
      token,
      query: { minified: 'true' },
    });
    assert.equal(verify.status, 400);
    const bogus = await server.api('POST', '/search', {
      token,
      query: { minified: 'true', bogus: '1' },
      body: {},
    });
    assert.equal(bogus.status, 400);
    assert.equal(bogus.body.message, 'Request validation errors: QUERY ERRORS: "bogus" is not allowed');
    const notBoolean = await server.api('GET', `/documents/${documentId}`, {
      token,
      query: { minified: 'maybe' },
    });
    assert.equal(notBoolean.status, 400);
    assert.equal(
      notBoolean.body.message,
      'Request validation errors: QUERY ERRORS: "minified" must be a boolean',
    );
    const missing = await server.api('GET', '/documents/no-such-document', {
      token,
      query: { minified: 'true' },
    });
    assert.equal(missing.status, 404);
    assert.deepEqual(sorted(missing.body), ['code', 'error', 'message', 'statusCode']);
    const wrongPassword = await server.api('POST', '/login', {
      query: { minified: 'true' },
      body: { name: ADMIN.name, password: 'wrong-password' },
    });
    assert.equal(wrongPassword.status, 401);
    assert.equal(wrongPassword.body.code, 'UNAUTHENTICATED');
  });

  it('the OpenAPI document describes minified on each of these operations: the 200 answer is the full shape, the reduced one its own named schema', async () => {
    const spec = (await server.api('GET', '/openapi.json')).body;
    const operations: [string, string, string][] = [
      ['/api/v1/login', 'post', 'MinifiedLogin'],
      ['/api/v1/login', 'get', 'MinifiedLogin'],
      ['/api/v1/files/saveFile', 'post', 'MinifiedFileRecord'],
      ['/api/v1/documents', 'post', 'MinifiedDocuments'],
      ['/api/v1/documents/{documentId}', 'get', 'MinifiedDocuments'],
      ['/api/v1/search', 'post', 'MinifiedSearch'],
      ['/api/v1/share', 'post', 'MinifiedShares'],
    ];
    for (const [path, method, reduced] of operations) {
      const operation = spec.paths[path]?.[method];
      assert.ok(operation, `${method} ${path} documented`);
      const parameter = (operation.parameters ?? []).find(
        (p: { name: string; in: string }) => p.name === 'minified' && p.in === 'query',
      );
      assert.ok(parameter, `${method} ${path} documents minified`);
      assert.match(parameter.description, /reduced representation with only `/);
      assert.deepEqual(parameter['x-minified-response'], { $ref: `#/components/schemas/${reduced}` });
      assert.ok(spec.components.schemas[reduced]?.type, `${reduced} is a component schema`);
      const answer = operation.responses['200'].content['application/json'].schema;
      assert.equal(answer.anyOf, undefined, `${method} ${path}: the 200 answer is not a union`);
    }
    // A typed client reads `waitingFor` of the full answer without a type check.
    const read =
      spec.paths['/api/v1/documents/{documentId}'].get.responses['200'].content['application/json'];
    assert.ok(read.schema.properties.results.items.properties.waitingFor);
    const others = spec.paths['/api/v1/documents/{documentId}/verify'].get.parameters ?? [];
    assert.ok(!others.some((p: { name: string }) => p.name === 'minified'));
  });
});
