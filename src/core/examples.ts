/**
 * The example values of the OpenAPI description: one story (an administrator uploads a contract,
 * creates a document, shares it with an external signer who signs it), so that the examples of
 * different operations name the same document, file and share. Each example is checked against its
 * schema (test/docs/openapi-document.test.ts).
 */

export const EXAMPLE_IDS = {
  documentId: '64e26475-8b90-400a-9595-1e98d1bd329d',
  fileId: '48884f2fd1fc51d5661888fb4fb94924',
  signedFileId: '9d8c6d365ac3c91e873a4b9085450ec0',
  barcode: 'b7af40c469c6ce10a081878f4df29845',
  imageId: '3f1d0c8e2b7a4e51a9c06d2f8e4b7a13',
  userId: 'e85e4748-498a-4947-9973-90dca6e8e50f',
  organization: '050839dd-4fbf-428a-abae-88cf336f3e42',
  shareId: '4090929f-570f-40a0-8666-1dca0e2268e6',
  shareGroup: 'aa5b017b-96c6-4773-8019-e42405f05ffa',
  fieldId: 'fld_2Eb2riYP9zUh',
  folderId: '6726a0f5-fb90-404b-869c-66b9baa7c582',
  templateId: '948f83e5-9d6b-4695-8eec-34d93581dd07',
  webhookId: '9d247647-1554-4762-bc14-8d4cd1994f4e',
  deliveryId: '4a463c36-5576-4b10-a953-79729f727b9d',
  stampId: 'c2b9e0d4-5f61-4a8e-9d3c-7b1e2a4f6d80',
  requestId: 'd2571688-537f-4c5f-8938-360704b0b5bf',
  sessionToken: '0W8J7Tw1H7gpbRgzg9tuqlGKC1YJnluB8lMP01T6X8M',
  linkToken: 'shr_xk6MjUDKEwmqD_e4gixD8820Yhoo6QQYhMSL96hf0Ls',
  recipientSession: 'shs_DOCR_wbSyxXF8sxcDbG9kr6RiplWRTNRx3HouoVCpv4',
} as const;

const ID = EXAMPLE_IDS;

export const POSITION_EXAMPLE = { percentX: 0.1, percentY: 0.7, percentWidth: 0.3, percentHeight: 0.08 };

export const USER_EXAMPLE = {
  id: ID.userId,
  name: 'admin@example.com',
  displayName: 'Administrator',
  email: 'admin@example.com',
  role: 'superAdmin',
  organization: ID.organization,
  status: 'active',
  photo: null,
  rights: ['use_file_management', 'use_document_management', 'use_webhooks', 'view_attachments'],
  config: { signature: [{ imageId: ID.imageId, name: 'My signature' }] },
  certificates: [],
  authenticationFactors: ['password'],
  hasPassword: true,
  createdAt: '2026-03-01T08:00:00.000Z',
};

export const LOGIN_EXAMPLE = {
  logged: true,
  hasPassword: true,
  isUnlocked: true,
  token: ID.sessionToken,
  tenant: 'default',
  rights: USER_EXAMPLE.rights,
  settings: { isLlmEnabled: false, wopiClient: null, disabledLanguages: [], dropZoneMaxSize: 40 },
  user: USER_EXAMPLE,
};

export const FILE_RECORD_EXAMPLE = {
  file: {
    id: ID.fileId,
    hash: ID.fileId,
    fileId: ID.fileId,
    documentname: 'contract.pdf',
    originalname: 'contract.pdf',
    mimetype: 'application/pdf',
    size: 48213,
    checksum:
      'e12a645cc830013dc60527bd25c93e3c8c67b21f21b25d53fe0400ff9e8a05c01c647c8699fa7303afc3d946082c56adb46f181c7c01aabcf35f1576d9b13e92',
    pages: 2,
    createDate: '2026-03-01T08:00:01.000Z',
  },
  storage: { used: 48213, limit: 10737418240 },
};

export const DOCUMENT_EXAMPLE = {
  documentId: ID.documentId,
  documentTitle: 'Service agreement',
  documentType: 'd_default',
  definitionType: null,
  pdfFile: { content: ID.fileId, mimetype: 'application/pdf', size: 48213, pages: 2 },
  file: [],
  submittedFiles: [],
  customTemplate: null,
  customFields: [
    { key: 'contractNumber', displayName: 'Contract number', type: 'string', value: 'C-2026-0042' },
  ],
  barcode: ID.barcode,
  _version: 1,
  isSigned: false,
  workflow: { workflowType: 'wf_archive' },
  owner: 'admin@example.com',
  createName: { id: ID.userId, name: 'admin@example.com' },
  createDate: '2026-03-01T08:00:02.000Z',
  modifyDate: '2026-03-01T08:00:02.000Z',
  waitingFor: [],
};

/** The same document once its signer signed: a new main file, sealed, completed. */
export const SIGNED_DOCUMENT_EXAMPLE = {
  ...DOCUMENT_EXAMPLE,
  pdfFile: { content: ID.signedFileId, mimetype: 'application/pdf', size: 91562, pages: 2 },
  _version: 5,
  isSigned: true,
  workflow: { workflowType: 'wf_archive', shareStateName: 'completed' },
  modifyDate: '2026-03-01T08:05:12.000Z',
};

export const SIGNATURE_FIELD_EXAMPLE = {
  type: 'signature',
  pages: [1],
  position: POSITION_EXAMPLE,
  user: ['ivy@example.com'],
  required: true,
};

/**
 * The end of a share's validity in examples: far in the future and fixed, so that "Try it out" with an
 * example never meets `validUntil … must be in the future`, and the document (and the typed client
 * generated from it, examples included) stays the same from one day to the next.
 */
export const EXAMPLE_VALID_UNTIL = '2099-12-31T18:00:00.000Z';

export const SHARE_EXAMPLE = {
  shareId: ID.shareId,
  isActive: true,
  isPermanentViewToken: false,
  messageRead: false,
  passwordRequired: true,
  otpEnabled: false,
  sequential: false,
  isDelegated: false,
  sendAttachmentsOnComplete: false,
  isMandatory: true,
  tokenGenerated: true,
  shareDate: '2026-03-01T08:01:00.000Z',
  validUntil: EXAMPLE_VALID_UNTIL,
  shareType: 'sign',
  status: 'active',
  sharedBy: 'admin@example.com',
  sharedUsername: 'admin@example.com',
  sharedByDisplayName: 'Alex Admin',
  sharedObjectEsId: ID.documentId,
  sharedObjectEsType: 'd_default',
  sharedObjectType: 'document',
  sharedWith: ['ivy@example.com'],
  privateMessage: 'Please sign by Friday.',
  language: 'en',
  shareGroup: ID.shareGroup,
  rights: [],
  dateFormat: 'yyyy-MM-dd',
  timeFormat: 'HH:mm:ss',
  order: 0,
  oauthFactors: [{ type: 'email', value: 'ivy@example.com' }],
  allowedOAuths: [],
  identityProviders: [],
  signatureFields: [{ ...SIGNATURE_FIELD_EXAMPLE, fieldId: ID.fieldId }],
};

export const SIGN_OUTCOME_EXAMPLE = {
  status: 'SUCCESS',
  levelAchieved: 'B-T',
  fellBack: false,
  shareStateName: 'completed',
};
