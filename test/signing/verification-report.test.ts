import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { useOpensslPki } from '../fixtures/openssl-pki.js';
import { aDocument } from '../helpers/documents.js';
import { useServer } from '../helpers/use-server.js';

/** The documented bound (OpenAPI description of the verify routes) for three signatures without evidence. */
const DEFAULT_REPORT_LIMIT_3_SIGNATURES = 8 * 1024;

/**
 * Every place in a JSON value where bytes are spelled as numbers: an array of eight or more integers
 * 0..255, or an object whose eight or more keys are "0", "1", … (a Uint8Array through JSON.stringify).
 */
function numericBytes(value: unknown, path = '$'): string[] {
  const isByte = (v: unknown) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 255;
  if (Array.isArray(value)) {
    // A modification's `objects` are object numbers (issue 38), not bytes.
    if (/\.modifications\[\d+\]\.objects$/.test(path)) return [];
    if (value.length >= 8 && value.every(isByte)) return [path];
    return value.flatMap((v, i) => numericBytes(v, `${path}[${i}]`));
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length >= 8 && entries.every(([k, v]) => /^\d+$/.test(k) && isByte(v))) return [path];
    return entries.flatMap(([k, v]) => numericBytes(v, `${path}.${k}`));
  }
  return [];
}

/**
 * Contract: "Verification reports carry bytes as base64 (certificates as base64 DER), never as arrays
 * or objects of numbers." Issue 20, item 9: the evidence is documented and opt-in (`?evidence=true`),
 * and the default report stays small.
 */
describe('verification reports carry bytes as base64, never as arrays or objects of numbers; evidence is opt-in', () => {
  // A TSA whose certificates name their revocation data: a B-LT is claimed only with it (issue 23).
  const pki = useOpensslPki();
  const server = useServer(() => ({ env: { TSA_URL: pki.tsaUrl, REVOCATION_ALLOW_PRIVATE: 'true' } }));
  let token: string;
  let documentId: string;

  /** Three seals at B-B, B-T and B-LT: timestamp tokens in the CMS, and a DSS. */
  before(async () => {
    token = await server.adminToken();
    documentId = await aDocument(server, token, { title: 'Three seals' });
    for (const [version, level] of [
      [1, 'B-B'],
      [2, 'B-T'],
      [3, 'B-LT'],
    ] as const) {
      const sealed = await server.api('PUT', `/documents/seal/${version}`, {
        token,
        body: { id: documentId, certificate: true, level },
      });
      assert.equal(sealed.status, 200, sealed.text);
      assert.equal(sealed.body.levelAchieved, level);
    }
  });

  it(`the default report of three signatures has no bytes at all and stays under ${DEFAULT_REPORT_LIMIT_3_SIGNATURES} bytes`, async (t) => {
    const report = await server.api('GET', `/documents/${documentId}/verify`, { token });
    assert.equal(report.status, 200, report.text);
    assert.equal(report.body.signatures.length, 3);
    for (const signature of report.body.signatures) {
      assert.equal(signature.indication, 'TOTAL_PASSED');
      assert.equal(signature.evidence, undefined, 'evidence only on request');
      assert.match(signature.signer.notBefore, /^\d{4}-\d\d-\d\dT/);
    }
    assert.equal(report.body.evidence, undefined);
    assert.deepEqual(numericBytes(report.body), []);
    t.diagnostic(`default report: ${report.text.length} bytes for three signatures`);
    assert.ok(
      report.text.length < DEFAULT_REPORT_LIMIT_3_SIGNATURES,
      `${report.text.length} bytes for three signatures`,
    );
  });

  it('evidence=true adds each signature’s CMS, chain, CRLs and timestamp tokens and the document’s DSS, all base64 DER', async (t) => {
    const report = await server.api('GET', `/documents/${documentId}/verify`, {
      token,
      query: { evidence: 'true', dss: 'true' },
    });
    assert.equal(report.status, 200, report.text);
    t.diagnostic(`with evidence and dss: ${report.text.length} bytes`);
    assert.deepEqual(numericBytes(report.body), []);
    for (const signature of report.body.signatures) {
      const { evidence } = signature;
      assert.equal(Buffer.from(evidence.cms, 'base64')[0], 0x30, 'the CMS is DER');
      assert.ok(evidence.certificates.length >= 1);
      for (const der of [...evidence.certificates, ...evidence.cmsCertificates]) {
        const certificate = new X509Certificate(Buffer.from(der, 'base64'));
        assert.ok(certificate.subject);
      }
      assert.equal(
        new X509Certificate(Buffer.from(evidence.certificates[0], 'base64')).fingerprint256
          .replaceAll(':', '')
          .toLowerCase(),
        signature.signer.sha256,
        'the chain starts with the signer',
      );
      for (const der of [...evidence.crls, ...evidence.timestampTokens])
        assert.equal(Buffer.from(der, 'base64')[0], 0x30, 'DER');
      assert.ok(typeof evidence.signatureValue === 'string' && evidence.signatureValue.length > 0);
    }
    assert.deepEqual(
      report.body.signatures.map(
        (s: { evidence: { timestampTokens: string[] } }) => s.evidence.timestampTokens.length,
      ),
      [0, 1, 1],
      'the B-T and B-LT signatures carry their signature timestamp',
    );
    const { dss } = report.body.evidence;
    assert.ok(dss.certificates.length > 0, 'the B-LT seal added a DSS');
    for (const der of dss.certificates) assert.ok(new X509Certificate(Buffer.from(der, 'base64')).subject);
    for (const der of [...dss.crls, ...dss.ocsps]) assert.equal(Buffer.from(der, 'base64')[0], 0x30, 'DER');
    assert.match(report.body.dss.validationReport, /ValidationReport/);
  });

  it('POST /verify of the same file answers the same shape: no numbers for bytes, with or without evidence', async () => {
    const read = await server.api('GET', `/documents/${documentId}`, { token });
    const file = await fetch(
      `${server.url}/api/v1/files/loadFile/hash/${read.body.results[0].pdfFile.content}?token=${token}`,
    );
    const bytes = Buffer.from(await file.arrayBuffer());
    for (const query of [{}, { evidence: 'true' }] as Record<string, string>[]) {
      const report = await server.api('POST', '/verify', {
        token,
        query,
        form: { file: { name: 'sealed.pdf', type: 'application/pdf', bytes } },
      });
      assert.equal(report.status, 200, report.text);
      assert.equal(report.body.signatures.length, 3);
      assert.deepEqual(numericBytes(report.body), []);
      assert.equal(report.body.signatures[0].evidence !== undefined, 'evidence' in query);
    }
  });

  it('the OpenAPI document describes the report: a real 200 schema and the evidence parameter', async () => {
    const spec = (await server.api('GET', '/openapi.json')).body;
    for (const [path, method] of [
      ['/api/v1/documents/{documentId}/verify', 'get'],
      ['/api/v1/verify', 'post'],
    ] as const) {
      const operation = spec.paths[path][method];
      const schema = operation.responses['200'].content['application/json'].schema;
      assert.equal(schema.additionalProperties, false);
      const signature = schema.properties.signatures.items;
      assert.equal(signature.additionalProperties, false);
      for (const field of ['indication', 'certificate', 'signer', 'level', 'evidence'])
        assert.ok(signature.properties[field], `${path} documents ${field}`);
      assert.equal(signature.properties.evidence.properties.certificates.items.format, 'byte');
      const evidence = operation.parameters.find((p: { name: string }) => p.name === 'evidence');
      assert.ok(evidence && evidence.in === 'query', `${path} documents ?evidence`);
      assert.match(evidence.description, /base64/);
    }
  });
});
