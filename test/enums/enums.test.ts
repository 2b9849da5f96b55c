import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { assertError } from '../helpers/api-errors.js';
import { createUser, upload } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

describe('enums: named value lists of an organization (spec: Other resources; Files usage rule 1)', () => {
  const server = useServer();
  let lea: string; // user, Legal: creates enums
  let leo: string; // user, Legal
  let lena: string; // organizationAdmin, Legal
  let rita: string; // read (lite role), Legal
  let sam: string; // user, Sales
  before(async () => {
    await createUser(server, { name: 'lea', organization: 'Legal' });
    await createUser(server, { name: 'leo', organization: 'Legal' });
    await createUser(server, { name: 'lena', organization: 'Legal', role: 'organizationAdmin' });
    await createUser(server, { name: 'rita', organization: 'Legal', role: 'read' });
    await createUser(server, { name: 'sam', organization: 'Sales' });
    const login = (name: string) => server.login(name, 'user-password-1');
    [lea, leo, lena, rita, sam] = await Promise.all([
      login('lea'),
      login('leo'),
      login('lena'),
      login('rita'),
      login('sam'),
    ]);
  });

  const photo = (token: string) =>
    upload(server, token, PNG_1PX, { path: '/files/photo', name: 'flag.png', type: 'image/png' });
  const file = (token: string) => upload(server, token, makePdf(), { name: 'terms.pdf' });
  /** POST /enums as lea: a new enum `name` with `records`. */
  const leasEnum = (name: string, records: Record<string, unknown>[]) =>
    server.api('POST', '/enums', { token: lea, body: { name, records } });
  it('create, read, list, add and replace records, delete an enum', async () => {
    const flag = await photo(lea);
    const terms = await file(lea);
    const created = await server.api('POST', '/enums', {
      token: lea,
      body: {
        name: 'contract-types',
        label: 'Contract types',
        records: [
          { value: 'nda', label: 'Non-disclosure agreement', photo: flag, files: [terms] },
          { value: 'msa', label: 'Master services agreement' },
        ],
      },
    });
    assert.equal(created.status, 200, created.text);
    const made = created.body;
    assert.equal(made.name, 'contract-types');
    assert.equal(made.label, 'Contract types');
    assert.equal(made.creator, 'lea');
    assert.equal(made._version, 1);
    assert.deepEqual(made.records, [
      { value: 'nda', label: 'Non-disclosure agreement', photo: flag, files: [terms] },
      { value: 'msa', label: 'Master services agreement', photo: null, files: [] },
    ]);
    for (const key of ['id', 'organization', 'createDate', 'modifyDate']) assert.ok(made[key], key);

    assert.deepEqual((await server.api('GET', '/enums/contract-types', { token: lea })).body, made);
    const list = await server.api('GET', '/enums', { token: lea });
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.total, 1);
    assert.deepEqual(list.body.results, [made]);

    const added = await server.api('PUT', '/enums/contract-types/record', {
      token: lea,
      body: { value: 'sow', label: 'Statement of work', _version: 1 },
    });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body._version, 2);
    assert.deepEqual(
      added.body.records.map((r: { value: string }) => r.value),
      ['nda', 'msa', 'sow'],
    );

    // Replacing a record keeps its place; its own photo and files may be sent again.
    const more = await file(lea);
    const replaced = await server.api('PUT', '/enums/contract-types/record', {
      token: lea,
      body: { value: 'nda', label: 'NDA', photo: flag, files: [terms, more] },
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(replaced.body.records[0], {
      value: 'nda',
      label: 'NDA',
      photo: flag,
      files: [terms, more],
    });
    assert.equal(replaced.body.records.length, 3);
    assert.equal(replaced.body._version, 3);

    const stale = await server.api('PUT', '/enums/contract-types/record', {
      token: lea,
      body: { value: 'msa', label: 'Late', _version: 2 },
    });
    assertError(stale, 409, 'VERSION_MISMATCH');

    const duplicate = await server.api('POST', '/enums', { token: leo, body: { name: 'contract-types' } });
    assertError(duplicate, 409, 'CONFLICT');

    const deleted = await server.api('DELETE', '/enums/contract-types', { token: lea });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.body, { status: 'SUCCESS' });
    assertError(await server.api('GET', '/enums/contract-types', { token: lea }), 404, 'NOT_FOUND');
    assert.equal((await server.api('GET', '/enums', { token: lea })).body.total, 0);
  });

  it('members of the organization read an enum; its creator and the organization’s administrators change it; other organizations get 404', async () => {
    const created = await leasEnum('regions', [{ value: 'north', label: 'North' }]);
    assert.equal(created.status, 200, created.text);
    for (const token of [leo, lena, rita]) {
      const read = await server.api('GET', '/enums/regions', { token });
      assert.equal(read.status, 200, read.text);
      assert.equal(read.body.records[0].value, 'north');
      assert.equal((await server.api('GET', '/enums', { token })).body.total, 1);
    }
    const change = { value: 'south', label: 'South' };
    for (const token of [leo, rita]) {
      assertError(
        await server.api('PUT', '/enums/regions/record', { token, body: change }),
        403,
        'FORBIDDEN',
      );
      assertError(await server.api('DELETE', '/enums/regions', { token }), 403, 'FORBIDDEN');
    }
    const byAdmin = await server.api('PUT', '/enums/regions/record', { token: lena, body: change });
    assert.equal(byAdmin.status, 200, byAdmin.text);
    assert.equal(byAdmin.body.records.length, 2);

    assertError(await server.api('GET', '/enums/regions', { token: sam }), 404, 'NOT_FOUND');
    assertError(
      await server.api('PUT', '/enums/regions/record', { token: sam, body: change }),
      404,
      'NOT_FOUND',
    );
    assertError(await server.api('DELETE', '/enums/regions', { token: sam }), 404, 'NOT_FOUND');
    assert.equal((await server.api('GET', '/enums', { token: sam })).body.total, 0);
    // Names are unique per organization: Sales may have its own `regions`.
    const own = await server.api('POST', '/enums', { token: sam, body: { name: 'regions' } });
    assert.equal(own.status, 200, own.text);

    assertError(
      await server.api('POST', '/enums', { token: rita, body: { name: 'from-a-reader' } }),
      403,
      'FORBIDDEN',
    );
    const byAdminDelete = await server.api('DELETE', '/enums/regions', { token: lena });
    assert.equal(byAdminDelete.status, 200, byAdminDelete.text);
    assert.equal((await server.api('GET', '/enums/regions', { token: sam })).status, 200);
  });

  it('spec Files usage rule 1: an enum photo comes from POST /files/photo, unused; "other files in enums come from POST /files/saveFile"', async () => {
    const notAPhoto = await file(lea);
    assertError(
      await leasEnum('wrong-photo', [{ value: 'a', label: 'A', photo: notAPhoto }]),
      400,
      'FILE_NOT_USABLE',
      'records[0].photo',
    );
    const aPhoto = await photo(lea);
    const wrongFile = await leasEnum('wrong-file', [{ value: 'a', label: 'A', files: [aPhoto] }]);
    assertError(wrongFile, 400, 'FILE_NOT_USABLE', 'records[0].files[0]');
    assert.ok(wrongFile.body.message.includes('POST /files/saveFile'), wrongFile.body.message);
    assertError(await server.api('GET', '/enums/wrong-file', { token: lea }), 404, 'NOT_FOUND');

    // Allowed once: the photo and the file are claimed by the enum ...
    const terms = await file(lea);
    const ok = await leasEnum('with-files', [{ value: 'a', label: 'A', photo: aPhoto, files: [terms] }]);
    assert.equal(ok.status, 200, ok.text);
    // ... and used once: not in a second record, a second enum, or a contact.
    const twice = await server.api('PUT', '/enums/with-files/record', {
      token: lea,
      body: { value: 'b', label: 'B', photo: aPhoto },
    });
    assertError(twice, 400, 'FILE_NOT_USABLE', 'photo');
    assert.ok(twice.body.message.includes('already used'), twice.body.message);
    assertError(
      await server.api('PUT', '/enums/with-files/record', {
        token: lea,
        body: { value: 'b', label: 'B', files: [terms] },
      }),
      400,
      'FILE_NOT_USABLE',
      'files[0]',
    );
    assertError(
      await leasEnum('second', [{ value: 'a', label: 'A', photo: aPhoto }]),
      400,
      'FILE_NOT_USABLE',
      'records[0].photo',
    );
    assertError(
      await server.api('POST', '/contacts', { token: lea, body: { name: 'Pat', photo: aPhoto } }),
      400,
      'FILE_NOT_USABLE',
      'photo',
    );
    // The same new photo in two records of one request is a reuse too.
    const shared = await photo(lea);
    assertError(
      await server.api('POST', '/enums', {
        token: lea,
        body: {
          name: 'shared-photo',
          records: [
            { value: 'a', label: 'A', photo: shared },
            { value: 'b', label: 'B', photo: shared },
          ],
        },
      }),
      400,
      'FILE_NOT_USABLE',
      'records[1].photo',
    );
    const fresh = await photo(lea);
    const added = await server.api('PUT', '/enums/with-files/record', {
      token: lea,
      body: { value: 'b', label: 'B', photo: fresh },
    });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body.records[1].photo, fresh);
  });

  it('bodies are validated: record values are unique, names are path-safe, unknown keys are refused', async () => {
    const cases: [unknown, string][] = [
      [
        {
          name: 'dupes',
          records: [
            { value: 'x', label: 'X' },
            { value: 'x', label: 'Y' },
          ],
        },
        '"records[1].value" contains a duplicate value',
      ],
      [{ name: 'has space' }, '"name" fails to match the required pattern'],
      [{ name: 'ok', colour: 'red' }, '"colour" is not allowed'],
      [{ name: 'ok', records: [{ value: 'x' }] }, '"records[0].label" is required'],
    ];
    for (const [body, message] of cases) {
      assertError(await server.api('POST', '/enums', { token: lea, body }), 400, 'VALIDATION_ERROR', message);
    }
  });
});
