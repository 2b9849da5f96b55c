import { Type } from 'typebox';
import { DocumentId } from '../documents/document-contract.js';
import {
  ImageEntrySchema,
  Level,
  SignatureEntrySchema,
  TextEntrySchema,
} from '../documents/visual-contract.js';
import { EXAMPLE_IDS, POSITION_EXAMPLE } from '../examples.js';

/**
 * What a sign call takes, shared by the capabilities that sign for a signer (signing/ for PUT
 * /documents/sign, sharing/ for PUT /share/document/sign and a sign share's POST /share/execute): the
 * schema the routes check requests against, from which signDocument's input type is made (`Static<>`).
 */

const SIGN_EXAMPLE = {
  id: EXAMPLE_IDS.documentId,
  signatures: [{ type: 'signature', pages: [1], position: POSITION_EXAMPLE }],
};

/**
 * The body of PUT /documents/sign/{version} and PUT /share/document/sign/{version}: what the signer draws,
 * closed by their signature.
 */
export const SignBody = Type.Object(
  {
    id: DocumentId,
    signatures: Type.Array(SignatureEntrySchema, { minItems: 1, maxItems: 200 }),
    images: Type.Optional(Type.Array(ImageEntrySchema, { maxItems: 200 })),
    annotations: Type.Optional(Type.Array(TextEntrySchema, { maxItems: 200 })),
    signatureProvider: Type.Optional(
      Type.String({
        maxLength: 50,
        description:
          "Original providers: `internal` (the organisation key on behalf of the signer) and, when configured, `csc` (a remote signing service, CSC API v2); by default the installation's (SEAL_PROVIDER). Any other name is 400 VALIDATION_ERROR.",
      }),
    ),
    level: Level,
  },
  { additionalProperties: false, examples: [SIGN_EXAMPLE] },
);
