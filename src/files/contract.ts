import { Type } from 'typebox';

/**
 * What the upload and download calls take: the schemas the routes check requests against (with their
 * OpenAPI descriptions and examples).
 */

/** The parts of an upload (multipart/form-data). */
export const UploadParts = Type.Object(
  {
    file: Type.String({ format: 'binary', description: 'The file (one part named `file`).' }),
    fileName: Type.Optional(Type.String({ description: 'Its name; by default the part’s file name.' })),
  },
  { examples: [{ file: '(the bytes of signature.png)', fileName: 'signature.png' }] },
);

/** The parts of POST /files/saveFile (multipart/form-data). */
export const SaveFileParts = Type.Object(
  {
    ...UploadParts.properties,
    signatureAnchors: Type.Optional(
      Type.String({
        description:
          'A JSON array of anchors, `{id, text}` or `{id, regexp}` with an optional `offset` (a position, values may be negative): where each is found in the PDF is answered in `anchorPositions`.',
      }),
    ),
  },
  {
    examples: [
      {
        file: '(the bytes of contract.pdf)',
        fileName: 'contract.pdf',
        signatureAnchors: '[{"id":"signer","text":"Signature:","offset":{"percentX":0.1,"percentY":0}}]',
      },
    ],
  },
);

/** The path of GET /files/loadFile/hash/{hash}: the file's id. */
export const FileHashParams = Type.Object({ hash: Type.String({ minLength: 1, maxLength: 100 }) });
