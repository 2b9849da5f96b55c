import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hasTool, tool, workspace, type Workspace } from '../pdf/oracles.js';
import { aDocument, mainFileOf } from '../helpers/documents.js';
import { shareDocument } from '../helpers/sharing.js';
import { PNG_1PX } from '../helpers/pdf.js';
import { createUser, startServer, type ApiResponse, type TestServer } from '../helpers/server.js';
import { shareTokenOf, startSmtp, type TestSmtp } from '../helpers/smtp.js';

type Box = { percentX: number; percentY: number; percentWidth: number; percentHeight: number };
const box = (x: number, y: number, w = 0.3, h = 0.05): Box => ({
  percentX: x,
  percentY: y,
  percentWidth: w,
  percentHeight: h,
});
/** Where makePdf writes its second line, "EUR 10,000.00" (72 pt from the left, baseline 700 pt of 792). */
const OVER_THE_AMOUNT = box(0.11, 0.1, 0.2, 0.03);
const png = { name: 'image.png', type: 'image/png', bytes: PNG_1PX };

/**
 * Issue 40, "What was seen" 7 and "Deliver" 6; DESIGN "Decided this round": "Recipients draw only in the
 * fields assigned to them; a share may grant free placement explicitly (`rights: ["freePlacement"]`)."
 * Every call a recipient draws through (PUT /share/document/sign, POST /share/execute, PUT /share/reject
 * with canAnnotateOnReject, POST /inbox/action, a user's PUT /documents/sign for their share) fills only
 * the recipient's own fields; a refusal writes nothing.
 */
describe('recipients are confined to their fields unless the share grants freePlacement', () => {
  let smtp: TestSmtp;
  let server: TestServer;
  let owner: string;
  let space: Workspace;
  before(async () => {
    smtp = await startSmtp();
    server = await startServer({ env: { SMTP_URL: smtp.url, PUBLIC_URL: 'https://sign.example.test' } });
    await createUser(server, { name: 'owner', email: 'owner@example.test' });
    await createUser(server, { name: 'ivy', email: 'ivy@example.test', displayName: 'Ivy Inbox' });
    owner = await server.login('owner', 'user-password-1');
    space = await workspace();
  });
  after(async () => {
    await server.close();
    await smtp.close();
    await space.remove();
  });

  let mails = 0;
  /**
   * A contract "EUR 10,000.00" shared with `alice` (a signature field and a text field `ref`) and
   * `bob` (a text field `bobs`), each recipient given `more`; their links when external, by field
   * `customId` the fields as GET /share/document shows them to alice.
   */
  const aContract = async (
    options: { alice?: string; purpose?: string; more?: Record<string, unknown>; fields?: boolean } = {},
  ) => {
    const n = ++mails;
    const alice = options.alice ?? `alice${n}@example.org`;
    const bob = `bob${n}@example.org`;
    const id = await aDocument(server, owner, {
      title: `Contract ${n}`,
      pdf: { pages: 1, lines: ['EUR 10,000.00'] },
    });
    const fields = [
      { type: 'signature', customId: 'sig', user: [alice], pages: [1], position: box(0.6, 0.85) },
      { type: 'annotation', customId: 'ref', user: [alice], pages: [1], position: box(0.1, 0.5, 0.4, 0.05) },
      {
        type: 'annotation',
        customId: 'note',
        readOnly: true,
        text: 'Customer ref: ACME-2026-17',
        user: [alice],
        pages: [1],
        position: box(0.1, 0.6),
      },
      { type: 'annotation', customId: 'bobs', user: [bob], pages: [1], position: box(0.1, 0.7) },
    ];
    const shares = await shareDocument(server, owner, id, {
      to: [
        { sharePurpose: options.purpose ?? 'sign', shareTo: alice, ...options.more },
        { sharePurpose: 'sign', shareTo: bob },
      ],
      share: options.fields === false ? {} : { signatureFields: fields },
    });
    const link = alice.includes('@') ? shareTokenOf(await smtp.waitFor(alice, /\/s\/shr_/)) : undefined;
    const shown = link ? await server.api('GET', '/share/document', { token: link }) : undefined;
    const fieldIds = new Map<string, string>(
      shares.flatMap((s: { signatureFields: { customId: string; fieldId: string }[] }) =>
        s.signatureFields.map((f) => [f.customId, f.fieldId] as [string, string]),
      ),
    );
    return {
      id,
      bob,
      shareId: shares[0].shareId as string,
      link,
      version: shown?.body.results[0]._version as number,
      fieldIds,
    };
  };
  const read = async (id: string) =>
    (await server.api('GET', `/documents/${id}`, { token: owner })).body.results[0];
  const shareStatus = async (shareId: string) =>
    (
      await server.app.deps.db
        .selectFrom('shares')
        .select('status')
        .where('id', '=', shareId)
        .executeTakeFirstOrThrow()
    ).status;
  /** Nothing written: the same version and main file, the share still pending. */
  const assertUntouched = async (
    contract: { id: string; shareId: string },
    before: { v: number; f: string },
  ) => {
    const doc = await read(contract.id);
    assert.equal(doc._version, before.v, 'the document version is unchanged');
    assert.equal(doc.pdfFile.content, before.f, 'the main file is unchanged');
    assert.equal(await shareStatus(contract.shareId), 'active', 'the share is still pending');
  };
  const stateOf = async (id: string) => {
    const doc = await read(id);
    return { v: doc._version as number, f: doc.pdfFile.content as string };
  };
  function assertError(response: ApiResponse, status: number, code: string, message: RegExp) {
    assert.equal(response.status, status, response.text);
    assert.equal(response.body.code, code, response.text);
    assert.match(response.body.message, message);
  }
  const sign = (link: string, version: number, body: Record<string, unknown>) =>
    server.api('PUT', `/share/document/sign/${version}`, { token: link, body });
  const shareUpload = async (link: string, what: 'signature' | 'file') => {
    const response = await server.api('POST', `/share/upload/${what}`, { token: link, form: { file: png } });
    assert.equal(response.status, 200, response.text);
    return response.body.file.id as string;
  };
  /** Alice's signature, in her signature field, as the signer page sends it. */
  const aliceSignature = (fieldIds: Map<string, string>) => ({
    type: 'signature',
    fieldId: fieldIds.get('sig'),
  });

  it('reproduction, PUT /share/document/sign: a free opaque box over "EUR 10,000.00", an image at a free place, an answer to another recipient’s field and an unknown fieldId are each refused, with nothing written', async () => {
    const contract = await aContract();
    const link = contract.link!;
    const before = await stateOf(contract.id);
    const signature = aliceSignature(contract.fieldIds);

    const cover = await sign(link, contract.version, {
      id: contract.id,
      signatures: [signature],
      annotations: [
        { text: 'EUR 10.00', position: OVER_THE_AMOUNT, backgroundColor: '#FFFFFF', color: '#000000' },
      ],
    });
    assertError(cover, 403, 'FORBIDDEN', /annotations\[0\].*freePlacement/);
    await assertUntouched(contract, before);

    const image = await shareUpload(link, 'file');
    const freeImage = await sign(link, contract.version, {
      id: contract.id,
      signatures: [signature],
      images: [{ blob: image, position: OVER_THE_AMOUNT }],
    });
    assertError(freeImage, 403, 'FORBIDDEN', /images\[0\].*freePlacement/);
    await assertUntouched(contract, before);

    const bobs = contract.fieldIds.get('bobs')!;
    const foreign = await sign(link, contract.version, {
      id: contract.id,
      signatures: [signature],
      annotations: [{ fieldId: bobs, text: 'EUR 10.00' }],
    });
    assertError(foreign, 400, 'VALIDATION_ERROR', new RegExp(`"annotations\\[0\\]\\.fieldId" "${bobs}"`));
    await assertUntouched(contract, before);

    // Before: an unknown fieldId was free text at the position given.
    const unknown = await sign(link, contract.version, {
      id: contract.id,
      signatures: [signature],
      annotations: [{ fieldId: 'fld_nosuchfield', text: 'EUR 10.00', position: OVER_THE_AMOUNT }],
    });
    assertError(unknown, 400, 'VALIDATION_ERROR', /"annotations\[0\]\.fieldId" "fld_nosuchfield"/);
    await assertUntouched(contract, before);

    // A signature entry elsewhere than her signature field is free placement too.
    const freeSignature = await sign(link, contract.version, {
      id: contract.id,
      signatures: [{ type: 'signature', position: OVER_THE_AMOUNT }],
    });
    assertError(freeSignature, 403, 'FORBIDDEN', /signatures\[0\].*freePlacement/);
    await assertUntouched(contract, before);
  });

  it('a field is filled only by an entry of its kind, never a read-only one, and once per call: 400 naming the entry and the field', async () => {
    const contract = await aContract();
    const link = contract.link!;
    const before = await stateOf(contract.id);
    const { fieldIds } = contract;
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        {
          signatures: [aliceSignature(fieldIds)],
          annotations: [{ fieldId: fieldIds.get('note'), text: 'x' }],
        },
        /"annotations\[0\]\.fieldId" ".+" is a read-only field/,
      ],
      [
        {
          signatures: [aliceSignature(fieldIds)],
          annotations: [{ fieldId: fieldIds.get('sig'), text: 'x' }],
        },
        /"annotations\[0\]\.fieldId" ".+" is a signature field/,
      ],
      [
        { signatures: [{ type: 'initials', fieldId: fieldIds.get('sig') }] },
        /"signatures\[0\]\.fieldId" ".+" is a signature field/,
      ],
      [
        {
          signatures: [aliceSignature(fieldIds)],
          annotations: [
            { fieldId: fieldIds.get('ref'), text: 'one' },
            { fieldId: 'ref', text: 'two' },
          ],
        },
        /"annotations\[1\]\.fieldId" fills the field "ref" that annotations\[0\] already fills/,
      ],
    ];
    for (const [body, message] of cases) {
      const refused = await sign(link, contract.version, { id: contract.id, ...body });
      assertError(refused, 400, 'VALIDATION_ERROR', message);
    }
    await assertUntouched(contract, before);
  });

  it('`{fieldId, text}` alone answers the field (no "position is required"): the text is written where the field is, and old clients sending the field’s own box still work', async () => {
    const contract = await aContract();
    const signed = await sign(contract.link!, contract.version, {
      id: contract.id,
      // An old client: the signature at its field's box, without fieldId.
      signatures: [{ type: 'signature', pages: [1], position: box(0.6, 0.85) }],
      annotations: [{ fieldId: contract.fieldIds.get('ref'), text: 'PO-4711' }],
    });
    assert.equal(signed.status, 200, signed.text);
    assert.equal(await shareStatus(contract.shareId), 'done');
    if (!hasTool('pdftotext')) return;
    const path = await space.write(`${contract.id}.pdf`, await mainFileOf(server, owner, contract.id));
    const html = await tool('pdftotext', ['-bbox', path, '-']);
    const page = /<page width="([\d.]+)" height="([\d.]+)">/.exec(html)!;
    const [width, height] = [Number(page[1]), Number(page[2])];
    const word = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">PO-4711<\/word>/.exec(
      html,
    );
    assert.ok(word, `the answer is in the signed PDF:\n${html}`);
    const [xMin, yMin, xMax, yMax] = word.slice(1).map(Number) as [number, number, number, number];
    // The field `ref` is box(0.1, 0.5, 0.4, 0.05) of the page, from its top-left corner.
    assert.ok(xMin >= 0.1 * width - 1 && xMax <= 0.5 * width + 1, `x ${xMin}..${xMax} within the field`);
    assert.ok(yMin >= 0.5 * height - 1 && yMax <= 0.55 * height + 1, `y ${yMin}..${yMax} within the field`);
    // The read-only text of the share is written at its own field.
    assert.match(html, /ACME-2026-17/);
  });

  it('POST /share/execute (sign share and approve share) refuses free entries, with nothing written', async () => {
    const signing = await aContract();
    let before = await stateOf(signing.id);
    const executed = await server.api('POST', '/share/execute', {
      token: signing.link,
      body: {
        id: signing.id,
        signatures: [aliceSignature(signing.fieldIds)],
        annotations: [{ text: 'EUR 10.00', position: OVER_THE_AMOUNT, backgroundColor: '#FFFFFF' }],
      },
    });
    assertError(executed, 403, 'FORBIDDEN', /annotations\[0\].*freePlacement/);
    await assertUntouched(signing, before);

    const approving = await aContract({ purpose: 'approve', fields: false });
    before = await stateOf(approving.id);
    const image = await shareUpload(approving.link!, 'file');
    const approved = await server.api('POST', '/share/execute', {
      token: approving.link,
      body: { id: approving.id, action: 'approve', images: [{ blob: image, position: OVER_THE_AMOUNT }] },
    });
    assertError(approved, 403, 'FORBIDDEN', /images\[0\].*freePlacement/);
    await assertUntouched(approving, before);
  });

  it('PUT /share/reject with canAnnotateOnReject: notes go in the recipient’s fields only; free notes are 403 with nothing written', async () => {
    const contract = await aContract({ more: { rights: ['canAnnotateOnReject'] } });
    const before = await stateOf(contract.id);
    const refused = await server.api('PUT', '/share/reject', {
      token: contract.link,
      body: {
        id: contract.id,
        reason: 'wrong amount',
        annotations: [{ text: 'EUR 10.00', position: OVER_THE_AMOUNT, backgroundColor: '#FFFFFF' }],
      },
    });
    assertError(refused, 403, 'FORBIDDEN', /annotations\[0\].*freePlacement/);
    await assertUntouched(contract, before);
    const inField = await server.api('PUT', '/share/reject', {
      token: contract.link,
      body: {
        id: contract.id,
        reason: 'wrong amount',
        annotations: [{ fieldId: contract.fieldIds.get('ref'), text: 'Amount should be 9,000' }],
      },
    });
    assert.equal(inField.status, 200, inField.text);
    assert.equal(await shareStatus(contract.shareId), 'rejected');
  });

  it('POST /inbox/action and PUT /documents/sign by an internal recipient are confined the same way', async () => {
    const ivy = await server.login('ivy', 'user-password-1');
    const contract = await aContract({ alice: 'ivy' });
    const before = await stateOf(contract.id);
    const free = [{ text: 'EUR 10.00', position: OVER_THE_AMOUNT, backgroundColor: '#FFFFFF' }];
    const fromInbox = await server.api('POST', '/inbox/action', {
      token: ivy,
      body: {
        shareId: contract.shareId,
        action: 'sign',
        signatures: [aliceSignature(contract.fieldIds)],
        annotations: free,
      },
    });
    assertError(fromInbox, 403, 'FORBIDDEN', /annotations\[0\].*freePlacement/);
    await assertUntouched(contract, before);
    const direct = await server.api('PUT', `/documents/sign/${before.v}`, {
      token: ivy,
      body: { id: contract.id, signatures: [aliceSignature(contract.fieldIds)], annotations: free },
    });
    assertError(direct, 403, 'FORBIDDEN', /annotations\[0\].*freePlacement/);
    const foreign = await server.api('PUT', `/documents/sign/${before.v}`, {
      token: ivy,
      body: {
        id: contract.id,
        signatures: [aliceSignature(contract.fieldIds)],
        annotations: [{ fieldId: contract.fieldIds.get('bobs'), text: 'x' }],
      },
    });
    assertError(foreign, 400, 'VALIDATION_ERROR', /"annotations\[0\]\.fieldId"/);
    await assertUntouched(contract, before);
    const inFields = await server.api('PUT', `/documents/sign/${before.v}`, {
      token: ivy,
      body: {
        id: contract.id,
        signatures: [aliceSignature(contract.fieldIds)],
        annotations: [{ fieldId: contract.fieldIds.get('ref'), text: 'PO-1' }],
      },
    });
    assert.equal(inFields.status, 200, inFields.text);
    assert.equal(await shareStatus(contract.shareId), 'done');
  });

  it('with the share right freePlacement, free entries are drawn as before', async () => {
    const contract = await aContract({ more: { rights: ['freePlacement'] } });
    const image = await shareUpload(contract.link!, 'file');
    const signed = await sign(contract.link!, contract.version, {
      id: contract.id,
      signatures: [{ type: 'signature', position: box(0.1, 0.3) }],
      images: [{ blob: image, position: box(0.5, 0.3, 0.1, 0.05) }],
      annotations: [{ text: 'Reviewed', position: box(0.1, 0.4) }],
    });
    assert.equal(signed.status, 200, signed.text);
    assert.equal(await shareStatus(contract.shareId), 'done');
    // An unknown fieldId is still no field: it never becomes free text.
    const other = await aContract({ more: { rights: ['freePlacement'] } });
    const unknown = await sign(other.link!, other.version, {
      id: other.id,
      signatures: [{ type: 'signature', position: box(0.1, 0.3) }],
      annotations: [{ fieldId: 'fld_nosuchfield', text: 'x', position: box(0.1, 0.4) }],
    });
    assertError(unknown, 400, 'VALIDATION_ERROR', /"annotations\[0\]\.fieldId"/);
  });

  it('a recipient with no fields at all places their own signature and initials where they choose, but nothing else', async () => {
    const contract = await aContract({ fields: false });
    const before = await stateOf(contract.id);
    const text = await sign(contract.link!, contract.version, {
      id: contract.id,
      signatures: [{ type: 'signature', position: box(0.6, 0.85) }],
      annotations: [{ text: 'EUR 10.00', position: OVER_THE_AMOUNT, backgroundColor: '#FFFFFF' }],
    });
    assertError(text, 403, 'FORBIDDEN', /annotations\[0\].*freePlacement/);
    const stamp = await sign(contract.link!, contract.version, {
      id: contract.id,
      signatures: [
        { type: 'image', blob: await shareUpload(contract.link!, 'file'), position: OVER_THE_AMOUNT },
      ],
    });
    assertError(stamp, 403, 'FORBIDDEN', /signatures\[0\].*freePlacement/);
    await assertUntouched(contract, before);
    const blob = await shareUpload(contract.link!, 'signature');
    const signed = await sign(contract.link!, contract.version, {
      id: contract.id,
      signatures: [
        { type: 'signature', blob, position: box(0.6, 0.85) },
        { type: 'initials', pages: [1], position: box(0.06, 0.9, 0.12, 0.05) },
      ],
    });
    assert.equal(signed.status, 200, signed.text);
    assert.equal(await shareStatus(contract.shareId), 'done');
  });

  it('a recipient given fields but no signature field places their own signature where they choose, and fills only their fields', async () => {
    const contract = await aContract();
    const bobLink = shareTokenOf(await smtp.waitFor(contract.bob, /\/s\/shr_/));
    const shown = await server.api('GET', '/share/document', { token: bobLink });
    const version = shown.body.results[0]._version as number;
    const before = await stateOf(contract.id);
    const free = await sign(bobLink, version, {
      id: contract.id,
      signatures: [{ type: 'signature', position: box(0.6, 0.3) }],
      annotations: [{ text: 'EUR 10.00', position: OVER_THE_AMOUNT, backgroundColor: '#FFFFFF' }],
    });
    assertError(free, 403, 'FORBIDDEN', /annotations\[0\].*freePlacement/);
    await assertUntouched(contract, before);
    const signed = await sign(bobLink, version, {
      id: contract.id,
      signatures: [
        { type: 'signature', blob: await shareUpload(bobLink, 'signature'), position: box(0.6, 0.3) },
      ],
      annotations: [{ fieldId: contract.fieldIds.get('bobs')!, text: 'Bob was here' }],
    });
    assert.equal(signed.status, 200, signed.text);
  });

  it('issue 40 Deliver 3: every field type POST /share accepts for a recipient is one the signer page shows, and is shown in GET /share/document; a `wacom` field is signed as a signature', async () => {
    const email = 'types@example.org';
    const id = await aDocument(server, owner, { title: 'All types', pdf: { pages: 1 } });
    const field = (type: string, y: number, more: Record<string, unknown> = {}): Record<string, unknown> => ({
      type,
      user: [email],
      pages: [1],
      position: box(0.1, y, 0.2, 0.04),
      ...more,
    });
    const fields = [
      field('wacom', 0.05, { customId: 'pen' }),
      field('initials', 0.1),
      field('stamp', 0.15),
      field('image', 0.2),
      field('annotation', 0.25, { subtype: 'annotation_generic' }),
      field('annotation', 0.3, { subtype: 'annotation_date' }),
      field('annotation', 0.35, { subtype: 'annotation_checkbox' }),
      field('annotation', 0.4, { subtype: 'annotation_select', config: '{"options":["A","B"]}' }),
      field('annotation', 0.45, { subtype: 'annotation_number' }),
      field('annotation', 0.5, { readOnly: true, text: 'Predefined' }),
      field('annotation', 0.55, { subtype: 'annotation_submitted_file' }),
    ];
    await shareDocument(server, owner, id, {
      to: [{ sharePurpose: 'sign', shareTo: email }],
      share: { signatureFields: fields },
    });
    const link = shareTokenOf(await smtp.waitFor(email, /\/s\/shr_/));
    const shown = (await server.api('GET', '/share/document', { token: link })).body.results[0];
    assert.deepEqual(
      shown.signatureFields.map((f: { type: string; subtype?: string }) => [f.type, f.subtype]),
      fields.map((f) => [f.type, f.subtype]),
    );
    const signed = await sign(link, shown._version, {
      id,
      signatures: [{ type: 'signature', fieldId: 'pen' }],
    });
    assert.equal(signed.status, 200, signed.text);
  });

  it('issue 40 Deliver 3: a field for a recipient the page shows no fields to (approve, review, view…) is refused at share time; a file field for one who owes an action is not', async () => {
    const id = await aDocument(server, owner, { title: 'Approved', pdf: { pages: 1 } });
    const approver = 'approver@example.org';
    const share = (fields: Record<string, unknown>[], purpose = 'approve') =>
      server.api('POST', '/share', {
        token: owner,
        body: {
          id,
          data: [{ sharePurpose: purpose, shareTo: approver }],
          signatureFields: fields.map((f) => ({
            user: [approver],
            pages: [1],
            position: box(0.1, 0.5),
            ...f,
          })),
        },
      });
    for (const [purpose, field] of [
      ['approve', { type: 'annotation', subtype: 'annotation_generic' }],
      ['review', { type: 'signature' }],
      ['approve', { type: 'annotation', readOnly: true, text: 'Never shown' }],
    ] as const) {
      const refused = await share([field], purpose);
      assertError(
        refused,
        400,
        'VALIDATION_ERROR',
        new RegExp(`"signatureFields\\[0\\]".*asked to ${purpose}.*never see it`),
      );
    }
    const viewer = await share([{ type: 'annotation', subtype: 'annotation_submitted_file' }], 'view');
    assertError(viewer, 400, 'VALIDATION_ERROR', /asked to view, who owes no action/);
    assert.equal((await read(id)).workflow.shareStateName !== 'inprogress', true, 'nothing was shared');
    const file = await share([{ type: 'annotation', subtype: 'annotation_submitted_file' }]);
    assert.equal(file.status, 200, file.text);
  });

  it('an entry naming no field needs its position, for any caller: 400 naming it, not a crash', async () => {
    const id = await aDocument(server, owner, { title: 'Own' });
    const doc = await read(id);
    const response = await server.api('PUT', `/documents/sign/${doc._version}`, {
      token: owner,
      body: { id, signatures: [{ type: 'signature', fieldId: 'fld_x' }] },
    });
    assertError(
      response,
      400,
      'VALIDATION_ERROR',
      /"signatures\[0\]\.position" is required unless "fieldId"/,
    );
  });
});
