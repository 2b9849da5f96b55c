import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { before, describe, it, type TestContext } from 'node:test';
import { useOpensslPki } from '../fixtures/openssl-pki.js';
import { aDocument, mainFileOf, readDocument } from '../helpers/documents.js';
import { createUser, mustSucceed, USER_PASSWORD } from '../helpers/server.js';
import { shareDocument } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';
import { hasTool, nssDatabase, pdfsig, tool, useWorkspace } from '../pdf/oracles.js';

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });

/** What each verifier says of one signature: intact or not, and whether the file changed after it. */
interface Verdict {
  valid: boolean;
  /** Undefined when the verifier does not say. */
  modifiedAfter?: boolean;
  /** The verifier's own words. */
  words: string;
}

/** pdfsig: "Signature is Valid." or not; "Total document signed" or "Not total document signed". */
async function pdfsigVerdicts(path: string, nssDir: string | undefined): Promise<Verdict[]> {
  return (await pdfsig(path, nssDir)).map((v) => ({
    valid: v.validation === 'Signature is Valid.',
    modifiedAfter: /Not total document signed/.test(v.raw),
    words: `${v.validation} ${/(Not total|Total) document signed/.exec(v.raw)?.[0] ?? '(no coverage line)'}`,
  }));
}

/**
 * `mutool sign -v`: per signature "Verifying signature …" then "The document is unchanged since
 * signing", "The signature is valid but there have been edits since signing", or a digest or
 * signature failure.
 */
async function mutoolVerdicts(path: string): Promise<{ verdicts: Verdict[]; raw: string }> {
  const raw = await tool('mutool', ['sign', '-v', path]);
  const verdicts = raw
    .split(/(?=Verifying signature)/)
    .filter((block) => block.startsWith('Verifying signature'))
    .map((block) => {
      const unchanged = /The document is unchanged since signing/.test(block);
      const edited = /The signature is valid but there have been edits since signing/.test(block);
      // On a failure mutool says nothing of later edits.
      return {
        valid: unchanged || edited,
        modifiedAfter: unchanged || edited ? edited : undefined,
        words: block.split('\n').slice(1).join(' ').replace(/\s+/g, ' ').trim(),
      };
    });
  return { verdicts, raw };
}

// Tests read arbitrary fields of the JSON report.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function ourVerdicts(report: any): Verdict[] {
  return report.signatures
    .filter((s: { kind: string }) => s.kind === 'signature')
    .map((s: Record<string, unknown>) => ({
      valid:
        Boolean(s.byteRangeValid && s.digestValid && s.signatureValid) && s.indication !== 'TOTAL_FAILED',
      modifiedAfter: !s.coversWholeFile,
      words: `${s.indication as string}${s.subIndication ? `/${s.subIndication as string}` : ''}, ${s.revisionsAfter as number} revision(s) after`,
    }));
}

/**
 * Issue 23: our verdict agrees with pdfsig and MuPDF, per signature, on whether it is intact and
 * whether the file changed after it: through POST /verify (and GET /documents/:id/verify for the
 * stored files), on a valid file, a multi-revision file, a tampered one and a rewritten one.
 */
describe('verification agrees with pdfsig and mutool', () => {
  const pki = useOpensslPki();
  const space = useWorkspace();
  const server = useServer(() => ({
    env: { TSA_URL: pki.tsaUrl, REVOCATION_ALLOW_PRIVATE: 'true' },
  }));
  let admin: string;
  let nssDir: string | undefined;

  before(async () => {
    admin = await server.adminToken();
    // The development CA signs (its root is what the server trusts); the outside PKI's TSA timestamps.
    nssDir = await nssDatabase(space, (await server.app.deps.seal()).devCa!.rootCertificate);
  });

  /** POST /verify of `bytes`: the JSON report. */
  async function postVerify(bytes: Buffer, query: Record<string, string> = {}) {
    const report = await server.api('POST', '/verify', {
      token: admin,
      query,
      form: { file: { name: 'file.pdf', type: 'application/pdf', bytes } },
    });
    assert.equal(report.status, 200, report.text);
    return report.body;
  }

  /** The three verdicts on `bytes` agree signature by signature; answers ours. */
  async function assertAgreement(
    name: string,
    bytes: Buffer,
    expected: Omit<Verdict, 'words'>[],
    t: TestContext,
  ) {
    const path = await space.write(`${name}.pdf`, bytes);
    const ours = ourVerdicts(await postVerify(bytes));
    const poppler = await pdfsigVerdicts(path, nssDir);
    const mupdf = await mutoolVerdicts(path);
    const table = expected.map((_, i) => ({
      ours: ours[i]?.words,
      pdfsig: poppler[i]?.words,
      mutool: mupdf.verdicts[i]?.words,
    }));
    t.diagnostic(`${name}: ${JSON.stringify(table)}`);
    const strip = (v: Verdict[]) => v.map(({ valid, modifiedAfter }) => ({ valid, modifiedAfter }));
    // Where a verifier says nothing of later edits, it is held to its verdict alone.
    const said = (v: Verdict[]) =>
      expected.map((e, i) => (v[i]?.modifiedAfter === undefined ? { ...e, modifiedAfter: undefined } : e));
    assert.deepEqual(strip(ours), expected, `ours on ${name}: ${JSON.stringify(ours)}`);
    assert.deepEqual(strip(poppler), expected, `pdfsig on ${name}: ${JSON.stringify(poppler)}`);
    assert.deepEqual(strip(mupdf.verdicts), said(mupdf.verdicts), `mutool on ${name}: ${mupdf.raw}`);
    return ours;
  }

  async function signAs(token: string, id: string, x: number) {
    const { _version: version } = await readDocument(server, admin, id);
    const signed = await server.api('PUT', `/documents/sign/${version}`, {
      token,
      body: { id, signatures: [{ type: 'signature', position: at(x, 0.8) }] },
    });
    assert.equal(signed.status, 200, signed.text);
  }

  it('a valid single-signature file, the same file with one byte changed inside its signed range, and the file rewritten by qpdf', async (t) => {
    if (!hasTool('pdfsig') || !hasTool('mutool') || !hasTool('qpdf'))
      return t.skip('pdfsig, mutool or qpdf missing');
    const id = await aDocument(server, admin, { title: 'One', pdf: { lines: ['Agreed price: 100 EUR'] } });
    await signAs(admin, id, 0.1);
    const signed = await mainFileOf(server, admin, id);
    await assertAgreement('single', signed, [{ valid: true, modifiedAfter: false }], t);
    const stored = await server.api('GET', `/documents/${id}/verify`, { token: admin });
    assert.deepEqual(
      ourVerdicts(stored.body).map(({ valid, modifiedAfter }) => ({ valid, modifiedAfter })),
      [{ valid: true, modifiedAfter: false }],
      'GET /documents/:id/verify says the same',
    );

    // One byte of the page content (inside the first signed range): 100 EUR becomes 900 EUR.
    const at100 = signed.indexOf('Agreed price: 100');
    assert.ok(at100 > 0);
    const tampered = Buffer.from(signed);
    tampered[at100 + 'Agreed price: '.length] = '9'.charCodeAt(0);
    const [one] = await assertAgreement('tampered', tampered, [{ valid: false, modifiedAfter: false }], t);
    assert.match(one!.words, /^TOTAL_FAILED\/HASH_FAILURE/);

    // Rewritten as a whole (not an incremental update): the byte range frames other bytes now.
    const source = await space.write('to-rewrite.pdf', signed);
    const target = `${space.dir}/rewritten.pdf`;
    await tool('qpdf', ['--object-streams=generate', source, target]);
    const rewritten = await readFile(target);
    assert.notDeepEqual(rewritten, signed);
    await assertAgreement('rewritten', rewritten, [{ valid: false, modifiedAfter: true }], t);
  });

  it('a valid multi-revision file: signed, annotated through the API, signed by a second signer, sealed', async (t) => {
    if (!hasTool('pdfsig') || !hasTool('mutool')) return t.skip('pdfsig or mutool missing');
    await createUser(server, { name: 'bob', email: 'bob@example.test' });
    const id = await aDocument(server, admin, { title: 'Multi' });
    await signAs(admin, id, 0.05);
    const { _version: version } = await readDocument(server, admin, id);
    const annotated = await server.api('PUT', `/documents/annotate/${version}`, {
      token: admin,
      body: { id, annotations: [{ text: 'Filed', pages: [1], position: at(0.6, 0.05) }] },
    });
    assert.equal(annotated.status, 200, annotated.text);
    await shareDocument(server, admin, id, { to: 'bob' });
    await signAs(await server.login('bob', USER_PASSWORD), id, 0.35);
    const { _version: last } = await readDocument(server, admin, id);
    const sealed = await server.api('PUT', `/documents/seal/${last}`, {
      token: admin,
      body: { id, certificate: true, level: 'B-T' },
    });
    assert.equal(sealed.status, 200, sealed.text);
    const bytes = await mainFileOf(server, admin, id);
    // Bob's signature completes the share, which seals the document; then the explicit seal.
    const count = (await postVerify(bytes)).signatures.length;
    assert.ok(count >= 3, `${count} signatures`);
    const expected = Array.from({ length: count }, (_, i) => ({ valid: true, modifiedAfter: i < count - 1 }));
    await assertAgreement('multi-revision', bytes, expected, t);
    const stored = await server.api('GET', `/documents/${id}/verify`, { token: admin });
    assert.deepEqual(
      ourVerdicts(stored.body).map(({ valid, modifiedAfter }) => ({ valid, modifiedAfter })),
      expected,
      'GET /documents/:id/verify says the same',
    );
    const after = stored.body.signatures.map((s: { revisionsAfter: number }) => s.revisionsAfter);
    assert.equal(after[0] - after[1], 2, 'the annotation and the second signature follow the first');
    assert.equal(after[count - 1], 0);
  });
});

/**
 * Issue 23: the JSON report says per signature the level the file proves, the revocation answers
 * found in it and where, and the document timestamps covering it; `dss=true`'s validationReport
 * carries them as TS 119 102-2 validation objects, referenced from the signature's report.
 */
describe('the verification report names the level, the revocation data found and the document timestamps', () => {
  const pki = useOpensslPki();
  const server = useServer(() => ({
    env: { TSA_URL: pki.tsaUrl, REVOCATION_ALLOW_PRIVATE: 'true' },
  }));

  it('a B-LTA seal: OCSP and CRL answers from the DSS for both chains, its document timestamp; the same as validation objects with base64 and POE', async () => {
    const admin = await server.adminToken();
    const id = await aDocument(server, admin, { title: 'LTA' });
    const body = { id, certificate: true, level: 'B-LTA' };
    const sealed = mustSucceed(await server.api('PUT', '/documents/seal/1', { token: admin, body }), 'seal');
    assert.equal(sealed.body.levelAchieved, 'B-LTA');
    const report = await server.api('GET', `/documents/${id}/verify`, {
      token: admin,
      query: { dss: 'true' },
    });
    assert.equal(report.status, 200, report.text);
    const [signature, docTimestamp] = report.body.signatures;
    assert.equal(signature.level, 'B-LTA');
    assert.equal(docTimestamp.kind, 'document-timestamp');
    assert.equal(docTimestamp.timestamp.valid, true);
    assert.match(docTimestamp.timestamp.tsa, /TSA/);
    assert.deepEqual(signature.documentTimestamps, [
      { fieldName: docTimestamp.fieldName, genTime: docTimestamp.timestamp.genTime },
    ]);
    assert.deepEqual(docTimestamp.documentTimestamps, []);
    // The development CA's seal by its OCSP answer: checked before signing and signed into the CMS
    // (issue 38), the very answer the DSS holds too.
    const found = signature.certificate.revocationData;
    assert.deepEqual(
      found.map((r: { source: string; foundIn: string; status: string }) => [r.source, r.foundIn, r.status]),
      [['ocsp', 'cms', 'good']],
    );
    for (const r of found) assert.match(r.issuedAt, /^\d{4}-\d\d-\d\dT/);
    assert.equal(signature.timestamp.revocation, 'good', 'the TSA chain: in the JSON now');
    // The outside TSA by OCSP, its intermediate by the root's CRL.
    assert.deepEqual(
      signature.timestamp.revocationData
        .map((r: { source: string; foundIn: string; status: string }) => [r.source, r.foundIn, r.status])
        .sort(),
      [
        ['crl', 'dss', 'good'],
        ['ocsp', 'dss', 'good'],
      ],
    );
    // The document timestamp's TSA chain too, from the DSS.
    assert.equal(docTimestamp.certificate.revocation, 'good');
    assert.ok(docTimestamp.certificate.revocationData.length >= 1);

    const xml: string = report.body.dss.validationReport;
    const objects = new Map<string, { type: string; base64: string; poe: string }>();
    for (const m of xml.matchAll(/<vr:ValidationObject id="([^"]+)">(.*?)<\/vr:ValidationObject>/g)) {
      objects.set(m[1]!, {
        type: /<vr:ObjectType>urn:etsi:019102:validationObject:([A-Za-z]+)<\/vr:ObjectType>/.exec(m[2]!)![1]!,
        base64: /<vr:base64>([A-Za-z0-9+/=]+)<\/vr:base64>/.exec(m[2]!)![1]!,
        poe: /<vr:POE>(.*?)<\/vr:POE>/.exec(m[2]!)![1]!,
      });
    }
    const ofType = (type: string) => [...objects.values()].filter((o) => o.type === type);
    assert.equal(ofType('certificate').length, 5, 'seal and dev root; TSA, intermediate and outside root');
    assert.equal(ofType('OCSPResponse').length, 2, 'the seal’s and the TSA’s');
    assert.equal(ofType('CRL').length, 1, 'the root’s, for the intermediate');
    assert.equal(ofType('timestamp').length, 2, 'the signature timestamp and the document timestamp');
    for (const o of objects.values()) assert.equal(Buffer.from(o.base64, 'base64')[0], 0x30, 'DER');
    for (const o of ofType('certificate')) assert.ok(new X509Certificate(Buffer.from(o.base64, 'base64')));
    // What the DSS holds was there when the document timestamp was taken: its POE is that timestamp.
    for (const o of [...ofType('OCSPResponse'), ...ofType('CRL')]) {
      assert.match(o.poe, new RegExp(`<vr:POETime>${docTimestamp.timestamp.genTime}</vr:POETime>`));
      assert.match(o.poe, /<vr:POEObject VOReference="TST-[0-9A-F]{64}"\/>/);
    }
    // Every reference names an object of the report.
    const references = [...xml.matchAll(/VOReference="([^"]+)"/g)].flatMap((m) => m[1]!.split(' '));
    assert.ok(references.length > 10);
    for (const ref of references) assert.ok(objects.has(ref), `${ref} is a validation object`);
    // The signature's own report: its attributes, chain, related objects and format.
    const first = /<vr:SignatureValidationReport>(.*?)<\/vr:SignatureValidationReport>/.exec(xml)![1]!;
    for (const element of [
      /<vr:SignatureTimeStamp Signed="false"><vr:AttributeObject VOReference="TST-/,
      /<vr:DSS Signed="false"><vr:Certs VOReference="C-[^"]+"\/><vr:CRLs VOReference="CRL-[^"]+"\/><vr:OCSPs VOReference="OCSP-[^" ]+ OCSP-[^"]+"\/><\/vr:DSS>/,
      /<vr:DocTimeStamp Signed="false"><vr:AttributeObject VOReference="TST-[^"]+"\/><vr:TimeStampValue>/,
      /<vr:SubFilter Signed="true"><vr:SubFilterElement>ETSI\.CAdES\.detached<\/vr:SubFilterElement><\/vr:SubFilter>/,
      /<vr:ByteRange>0 \d+ \d+ \d+<\/vr:ByteRange>/,
      /<vr:SignatureQuality><vr:SignatureQualityInformation>urn:cef:dss:signatureQualification:AdESig</,
      /<vr:AssociatedValidationReportData><vr:TrustAnchor VOReference="C-[^"]+"\/><vr:CertificateChain><vr:SigningCertificate VOReference="C-[^"]+"\/><vr:TrustAnchor VOReference="C-[^"]+"\/><\/vr:CertificateChain>/,
      /(<vr:RelatedValidationObject VOReference="(OCSP|CRL|TST)-[0-9A-F]{64}"\/>){5}/,
      /<vr:ReportData><vr:Type>urn:signery:validation:signatureFormat<\/vr:Type><vr:Value>PAdES-BASELINE-LTA<\/vr:Value><\/vr:ReportData>/,
      /<vr:BestSignatureTime><vr:POETime>[^<]+<\/vr:POETime><vr:TypeOfProof>urn:etsi:019102:poetype:validation<\/vr:TypeOfProof><vr:POEObject VOReference="TST-/,
    ])
      assert.match(first, element);
  });
});
