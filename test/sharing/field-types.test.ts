import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { before, describe, it } from 'node:test';
import { aDocument, readDocument, writeMainFile } from '../helpers/documents.js';
import { aUser, withMail } from '../helpers/people.js';
import { anExternalShare } from '../helpers/sharing.js';
import { mustSucceed } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { assertSignaturesValid, hasTool, pdfsig, tool, useWorkspace } from '../pdf/oracles.js';

const germany = { value: 'DE', label: 'Germany' };
const france = { value: 'FR', label: 'France' };

/** The text of a PDF's first page as MuPDF extracts it, annotations' appearances included. */
const pageText = (path: string) => tool('mutool', ['draw', '-F', 'txt', '-o', '-', path, '1']);

const at = (y: number) => ({ percentX: 0.1, percentY: y, percentWidth: 0.4, percentHeight: 0.05 });

/**
 * Issue 25: "Field types integrators expect: date (prefilled, picker, the share's `dateFormat`),
 * checkbox, select (from an enum), number, initials, plus text and file; required and optional".
 * Value fields are `annotation` fields with the subtypes `annotation_date`, `annotation_checkbox`,
 * `annotation_select` and `annotation_number` (spec Signature field `subtype`, `config`).
 */
describe(
  'issue 25: date, checkbox, select, number and initials fields',
  { skip: !hasTool('mutool') && 'mutool (MuPDF) is not installed: the written texts cannot be read' },
  () => {
    const server = useServer({ smtp: true });
    const space = useWorkspace();
    let owner: string;
    before(async () => {
      owner = (await aUser(server, withMail('owner'))).token;
      const countries = { name: 'countries', records: [germany, france] };
      mustSucceed(await server.api('POST', '/enums', { token: owner, body: countries }), 'POST /enums');
    });

    /** One of each kind, for `email`; the date in the share's `dateFormat`. */
    const everyKind = (email: string) => [
      { type: 'signature', user: [email], pages: [1], position: at(0.85), required: true },
      { type: 'initials', user: [email], pages: [1], position: at(0.92), required: true },
      field(email, 'annotation_generic', 0.1, { customId: 'city' }),
      field(email, 'annotation_date', 0.2, { customId: 'start' }),
      field(email, 'annotation_checkbox', 0.3, { customId: 'agree' }),
      field(email, 'annotation_select', 0.4, { customId: 'country', config: '{"enum":"countries"}' }),
      field(email, 'annotation_select', 0.5, {
        customId: 'plan',
        required: false,
        config: JSON.stringify({ options: ['Basic', { value: 'pro', label: 'Professional' }] }),
      }),
      field(email, 'annotation_number', 0.6, {
        customId: 'amount',
        config: JSON.stringify({ min: 0, max: 100000, decimals: 2 }),
      }),
    ];
    const field = (email: string, subtype: string, y: number, more: Record<string, unknown>) => ({
      type: 'annotation',
      subtype,
      user: [email],
      pages: [1],
      position: at(y),
      required: true,
      ...more,
    });
    const answers = (values: Record<string, string>) =>
      Object.entries(values).map(([fieldId, text], i) => ({
        fieldId,
        text,
        pages: [1],
        position: at(0.1 * (i + 1)),
      }));
    const valid = {
      city: 'Berlin',
      start: '31.12.2025',
      agree: 'true',
      country: 'FR',
      plan: 'pro',
      amount: '1250.50',
    };

    /** A document shared with one signer whose share writes dates as dd.MM.yyyy; its link. */
    const aShareOfEveryKind = async (email: string) =>
      anExternalShare(server, owner, {
        title: `Fields for ${email}`,
        email,
        recipient: { dateFormat: 'dd.MM.yyyy' },
        share: { signatureFields: everyKind(email) },
      });
    const signWith = async (
      link: string,
      id: string,
      annotations: unknown[],
      signatures: unknown[] = [
        { type: 'signature', pages: [1], position: at(0.85) },
        { type: 'initials', pages: [1], position: at(0.92) },
      ],
    ) => {
      const version = (await server.api('GET', '/share/document', { token: link })).body.results[0]._version;
      return server.api('PUT', `/share/document/sign/${version}`, {
        token: link,
        body: { id, signatures, annotations },
      });
    };

    it('the share shows each field with its kind, and a select its options (from the enum, or listed)', async () => {
      const { link } = await aShareOfEveryKind('shown@example.org');
      const shown = (await server.api('GET', '/share/document', { token: link })).body.results[0];
      assert.equal(shown.share.dateFormat, 'dd.MM.yyyy');
      const byId = new Map(shown.signatureFields.map((f: { customId?: string }) => [f.customId, f]));
      assert.deepEqual((byId.get('country') as { options: unknown }).options, [
        { value: 'DE', label: 'Germany' },
        { value: 'FR', label: 'France' },
      ]);
      assert.deepEqual((byId.get('plan') as { options: unknown }).options, [
        { value: 'Basic', label: 'Basic' },
        { value: 'pro', label: 'Professional' },
      ]);
      assert.equal((byId.get('start') as { subtype: string }).subtype, 'annotation_date');
    });

    it('each answer is checked on sign: 400 naming the answer and the field, and nothing is signed', async () => {
      const { id, link } = await aShareOfEveryKind('refused@example.org');
      const refusals: [Record<string, string>, string][] = [
        [
          { start: '2025-12-31' },
          '"annotations[1].text" must be a date written dd.MM.yyyy (the share\'s dateFormat), for the field "start"',
        ],
        [{ start: '31.02.2025' }, '"annotations[1].text" must be a date written dd.MM.yyyy'],
        [{ agree: 'yes' }, '"annotations[2].text" must be "true" or "false", for the field "agree"'],
        [
          { country: 'Germany' },
          '"annotations[3].text" must be one of the options [DE, FR], for the field "country"',
        ],
        [
          { plan: 'Gold' },
          '"annotations[4].text" must be one of the options [Basic, pro], for the field "plan"',
        ],
        [
          { amount: '1.250,50' },
          '"annotations[5].text" must be a number such as 1250 or -12.5, for the field "amount"',
        ],
        [{ amount: '12.505' }, '"annotations[5].text" must have at most 2 digits after the point'],
        [{ amount: '-1' }, '"annotations[5].text" must be from 0 to 100000, for the field "amount"'],
      ];
      for (const [change, message] of refusals) {
        const signed = await signWith(link, id, answers({ ...valid, ...change }));
        assert.equal(signed.status, 400, `${JSON.stringify(change)}: ${signed.text}`);
        assert.equal(signed.body.code, 'VALIDATION_ERROR');
        assert.ok(signed.body.message.includes(message), `${signed.body.message} has ${message}`);
      }
      const unchecked = await signWith(link, id, answers({ ...valid, agree: 'false' }));
      assert.equal(unchecked.status, 400);
      assert.match(unchecked.body.message, /"signatureFields\[4\]" is required: the box must be checked/);
      const noCountry = { ...valid } as Record<string, string>;
      delete noCountry.country;
      const missing = await signWith(link, id, answers(noCountry));
      assert.equal(missing.status, 400);
      assert.match(
        missing.body.message,
        /"signatureFields\[5\]" is required: send its text in "annotations" with "fieldId": "country"/,
      );
      const noInitials = await signWith(link, id, answers(valid), [
        { type: 'signature', pages: [1], position: at(0.85) },
      ]);
      assert.equal(noInitials.status, 400);
      assert.match(
        noInitials.body.message,
        /"signatureFields\[1\]" is required: sign it with a "signatures" entry of type "initials"/,
      );
      assert.equal((await readDocument(server, owner, id)).isSigned, false, 'nothing was signed');
    });

    it('the answers are written into the signer’s revision: the date as given, X for the box, the option’s label, the number', async () => {
      const { id, link } = await aShareOfEveryKind('signer@example.org');
      const signed = await signWith(link, id, answers(valid));
      assert.equal(signed.status, 200, signed.text);
      assert.equal(signed.body.shareStateName, 'completed');
      const path = await writeMainFile(server, owner, id, space);
      await assertSignaturesValid(path, 2); // the signer's, then the seal on completion
      // What the signer's signature covers: the file up to the end of its signed ranges.
      const [signer] = await pdfsig(path);
      const end = /Signed Ranges: \[\d+ - \d+\], \[(\d+) - (\d+)\]/.exec(signer?.raw ?? '');
      assert.ok(end, signer?.raw);
      const revision = await space.write(
        `${id}-signer.pdf`,
        (await readFile(path)).subarray(0, Number(end[1])),
      );
      const text = await pageText(revision);
      for (const written of ['Berlin', '31.12.2025', 'France', 'Professional', '1250.50'])
        assert.ok(text.includes(written), `"${written}" is in the signer's revision:\n${text}`);
      assert.match(text, /^\s*X\s*$/m, 'the checked box');
      assert.doesNotMatch(text, /\bFR\b|\bpro\b/, 'labels, not values');
    });

    it('an optional box left unchecked writes nothing, and an optional select may stay unanswered', async () => {
      const email = 'optional@example.org';
      const { id, link } = await anExternalShare(server, owner, {
        title: 'Optional fields',
        email,
        share: {
          signatureFields: [
            { type: 'signature', user: [email], pages: [1], position: at(0.85) },
            field(email, 'annotation_checkbox', 0.3, { customId: 'news', required: false }),
            field(email, 'annotation_date', 0.2, { customId: 'when', required: false }),
          ],
        },
      });
      const signed = await signWith(link, id, answers({ news: 'false', when: '2026-01-15' }), [
        { type: 'signature', pages: [1], position: at(0.85) },
      ]);
      assert.equal(signed.status, 200, signed.text);
      const text = await pageText(await writeMainFile(server, owner, id, space));
      assert.ok(text.includes('2026-01-15'), 'without dateFormat, dates are yyyy-MM-dd');
      assert.doesNotMatch(text, /^\s*X\s*$/m);
    });

    it('POST /share refuses fields the signer’s page could not show, naming the field; nothing is shared', async () => {
      const id = await aDocument(server, owner, { title: 'Not showable' });
      const email = 'nobody@example.org';
      const shareWith = (fields: unknown[], recipient: Record<string, unknown> = {}) =>
        server.api('POST', '/share', {
          token: owner,
          body: {
            id,
            data: [{ sharePurpose: 'sign', shareTo: email, ...recipient }],
            signatureFields: fields,
          },
        });
      const select = (config?: unknown) =>
        field(
          email,
          'annotation_select',
          0.4,
          config === undefined ? {} : { config: JSON.stringify(config) },
        );
      const number = (config: unknown) =>
        field(email, 'annotation_number', 0.4, { config: JSON.stringify(config) });
      const refused: [unknown[], Record<string, unknown>, string][] = [
        [[select()], {}, '"signatureFields[0].config" must give the options of an annotation_select field'],
        [[select({ options: [] })], {}, '"signatureFields[0].config" must give 1 to 1000 options'],
        [[select({ options: ['A', 'A'] })], {}, '"signatureFields[0].config" gives the option "A" twice'],
        [[select({ options: ['A', 7] })], {}, '"signatureFields[0].config.options[1]" must be a text'],
        [
          [select({ enum: 'planets' })],
          {},
          '"signatureFields[0].config" enum "planets" is not an enum of yours',
        ],
        [[number({ min: 10, max: 1 })], {}, '"signatureFields[0].config" min must not be more than max'],
        [
          [number({ decimals: 1.5 })],
          {},
          '"signatureFields[0].config" decimals must be a whole number from 0 to 10',
        ],
        [
          [field(email, 'annotation_date', 0.2, {})],
          { dateFormat: 'dd MMM yyyy' },
          '"signatureFields[0]" is a date field, but its recipient\'s dateFormat "dd MMM yyyy" "MMM" is not a day',
        ],
        [
          [field(email, 'annotation_date', 0.2, { text: '2025-12-31' })],
          { dateFormat: 'dd.MM.yyyy' },
          '"signatureFields[0].text" must be a date written dd.MM.yyyy',
        ],
        [
          [{ type: 'stamp', user: [email], pages: [1], position: at(0.8), required: true }],
          {},
          '"signatureFields[0]" is a required stamp field, which the signer\'s page cannot ask for',
        ],
      ];
      for (const [fields, recipient, message] of refused) {
        const shared = await shareWith(fields, recipient);
        assert.equal(shared.status, 400, `${message}: ${shared.text}`);
        assert.ok(shared.body.message.includes(message), `${shared.body.message} has ${message}`);
      }
      assert.deepEqual((await readDocument(server, owner, id)).waitingFor, [], 'nothing was shared');
      // An enum of another organization does not exist for the sharer.
      const other = (await aUser(server, { name: 'otto', organization: 'Elsewhere' })).token;
      assert.equal(
        (
          await server.api('POST', '/enums', {
            token: other,
            body: { name: 'colours', records: [{ value: 'red', label: 'Red' }] },
          })
        ).status,
        200,
      );
      const foreign = await shareWith([select({ enum: 'colours' })]);
      assert.equal(foreign.status, 400);
      assert.match(foreign.body.message, /enum "colours" is not an enum of yours/);
    });
  },
);
