import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { PDF, PdfBool } from '@libpdf/core';
import { libreOfficeForm, type FormFixture } from '../fixtures/pdf-producers.js';
import { ADA, aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';
import { assertOraclesAccept, darkPixels, hasTool, renderGrey, tool, useWorkspace } from '../pdf/oracles.js';
import { SIGNATURE_BOX, signAndSealThroughApi, type SignedThroughApi } from './through-the-api.js';

const missing = ['soffice', 'pdftoppm', 'pdfsig', 'mutool', 'qpdf'].filter((name) => !hasTool(name));
const skip = missing.length > 0 && `needs ${missing.join(', ')} (Debian packages .ci/run installs)`;

/** The AcroForm of a PDF and its fields' widgets, as the engine reads them. */
async function formOf(bytes: Uint8Array) {
  const pdf = await PDF.load(bytes);
  const acroForm = pdf.getForm()!.acroForm();
  const needAppearances = acroForm.getDict().get('NeedAppearances');
  return {
    needAppearances: needAppearances instanceof PdfBool && needAppearances.value,
    fields: acroForm.getFields().map((field) => ({
      name: field.name,
      type: field.type,
      widgets: field.getWidgets().map((widget) => {
        const normal = widget.getNormalAppearance(widget.appearanceState ?? undefined);
        return {
          state: widget.appearanceState,
          onAndOff: widget.hasAppearancesForStates([widget.getOnValue() ?? 'Yes', 'Off']),
          normal: normal && new TextDecoder('latin1').decode(normal.getDecodedData()),
        };
      }),
    })),
  };
}

describe(
  'issue 23 (3): a LibreOffice form with /NeedAppearances true shows its signatures in every viewer',
  { skip },
  () => {
    const server = useServer();
    const space = useWorkspace();
    let token: string;
    let form: FormFixture;
    let result: SignedThroughApi;
    before(async () => {
      token = (await aUser(server, ADA)).token;
      form = await libreOfficeForm(space, { value: 'Ada Lovelace' });
      result = await signAndSealThroughApi(server, token, space, form.bytes, 'form');
    });

    it('the reproduction: LibreOffice writes /NeedAppearances true and leaves the text field’s appearance empty', async () => {
      const original = await formOf(form.bytes);
      assert.equal(original.needAppearances, true);
      const text = original.fields.find((f) => f.name === form.textField.name);
      assert.ok(text, 'the text field is exported');
      assert.doesNotMatch(String(text.widgets[0]?.normal), /Tj|TJ/, 'no text drawn in its appearance');
    });

    it('poppler (pdftoppm, as Evince and Okular) and MuPDF both draw the signature box', async () => {
      for (const viewer of ['poppler', 'mupdf'] as const) {
        const before = darkPixels(await renderGrey(result.uploaded.path, viewer), SIGNATURE_BOX);
        const signed = darkPixels(await renderGrey(result.signed.path, viewer), SIGNATURE_BOX);
        assert.equal(before, 0, `${viewer}: the box is blank before signing`);
        assert.ok(signed > 50, `${viewer} draws the signature (${signed} dark pixels in the box)`);
      }
    });

    it('the first signature’s revision turns NeedAppearances off and gives the form fields appearances that show their values', async () => {
      const signedForm = await formOf(result.signed.bytes);
      assert.equal(signedForm.needAppearances, false);
      const text = signedForm.fields.find((f) => f.name === form.textField.name)!;
      assert.match(String(text.widgets[0]?.normal), /Ada Lovelace/, 'the value is drawn in the appearance');
      const box = signedForm.fields.find((f) => f.name === form.checkBox.name)!;
      assert.deepEqual(
        box.widgets.map((w) => [w.state, w.onAndOff]),
        [['Yes', true]],
        'the check box stays checked, with its on and off appearances',
      );
      for (const field of signedForm.fields.filter((f) => f.type !== 'signature')) {
        for (const widget of field.widgets)
          assert.ok(widget.normal !== null, `${field.name} has an appearance`);
      }
      // MuPDF draws stored appearances: the value shows without the viewer generating anything.
      assert.match(await tool('mutool', ['draw', '-F', 'txt', result.signed.path, '1']), /Ada Lovelace/);
    });

    it('the signature and the seal check valid with pdfsig and mutool, and qpdf --check finds nothing wrong', async () => {
      await assertOraclesAccept(result.signed.path, 2);
    });
  },
);
