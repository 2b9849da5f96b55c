/**
 * The public API as the page uses it. An external recipient's share-link token lives only in this
 * module's closure and travels in the `Authorization` header: never in a log line or storage, and in a
 * query string only for the one navigation that starts an identity provider's sign-in (a navigation
 * cannot send headers; the server redacts `token` in its logs). The link of a protected share stays
 * locked (Contract): unlocking answers a recipient session, which every later call sends instead and
 * which the page keeps for its tab only (recipient-session.ts). Internal users act with their session
 * cookie (POST /login with `cookie: true`).
 */

export const API = '/api/v1';

/** The Contract's error body. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  code: string;
}

export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, body: Partial<ErrorBody>) {
    super(body.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body.code ?? 'UNKNOWN';
  }
}

/** Thrown when the server could not be reached at all. */
export class NetworkFailure extends Error {}

export interface Position {
  percentX: number;
  percentY: number;
  percentWidth: number;
  percentHeight: number;
}

/** spec: Signature field (element of `signatureFields` in share). */
export interface SignatureFieldSpec {
  type?: string;
  subtype?: string;
  pages?: number[];
  position?: Position;
  required?: boolean;
  order?: number;
  tooltip?: string;
  text?: string;
  readOnly?: boolean;
  customId?: string;
  /** The field's own identity (every field of a share has one; `customId` may be empty). */
  fieldId?: string;
  fontSize?: number;
  /** JSON in a string: a number field's `min`, `max` and `decimals`. */
  config?: string;
  /** A select field's options (the server copies them in when the document is shared). */
  options?: { value: string; label: string }[];
  /** How a read-only text is stamped (src/core/sharing/share-fields.ts `fieldTexts`). */
  align?: string;
  bold?: boolean;
  color?: string;
  backgroundColor?: string;
}

/** spec: Share (the fields the page reads; src/core/views/share-view.ts `ShareView`). */
export interface ShareView {
  shareId: string;
  /** The purpose: sign, view, edit, approve, review, accept, execute. */
  shareType: string;
  /** active (the recipient's turn), waiting, done, delegated, notRequired, cancelled, expired, ... */
  status: string;
  rights: string[];
  language?: string;
  /** How date fields are written (day, month and year numbers: `dd.MM.yyyy`); none: `yyyy-MM-dd`. */
  dateFormat?: string;
  /** A delegated share: who passed it on to this recipient. */
  delegatedBy?: string;
  privateMessage: string;
  /** The sharer's login name. */
  sharedBy: string;
  /** The name the sharer shows (their display name, else their login name). */
  sharedByDisplayName?: string;
  validUntil?: string | null;
  sharedObjectEsId: string;
  passwordRequired?: boolean;
  otpEnabled?: boolean;
  otpPhone?: string;
  identityProviders?: { name: string; label: string }[];
  identityVerified?: { provider: string; at: string };
  /** The recipient's own address (the share's `shareTo`). */
  sharedWith?: string[];
  /** GET /inbox adds the document's title (and its share state). */
  documentTitle?: string;
  documentShareState?: string | null;
  signatureFields: SignatureFieldSpec[];
}

/** GET /share/oidc: the identity providers a share offers (answered while locked too). */
export interface IdentityProvider {
  name: string;
  label: string;
  /** PUBLIC_URL/api/v1/share/oidc/<name>: add `token` and `redirect`, and navigate there. */
  start: string;
}

export interface ShareProviders {
  providers: IdentityProvider[];
  identityVerified?: { provider: string; at: string };
  isUnlocked: boolean;
  /** What else unlocks the share: its password, and a one-time code sent by SMS or e-mail. */
  unlockWith?: UnlockWith;
  /** What the invitation said already: the document's title and who sent it. */
  documentTitle?: string;
  sharedBy?: string;
}

export interface UnlockWith {
  password: boolean;
  code: 'sms' | 'email' | null;
}

/** GET /share/document answers like GET /documents/:id (Contract). */
export interface DocumentView {
  documentId: string;
  documentTitle: string;
  pdfFile?: { content: string; mimetype: string; size: number; pages?: number };
  _version: number;
  isSigned: boolean;
  workflow: { workflowType: string; shareStateName?: string };
  owner: string;
  waitingFor: string[];
  /** What recipients submitted, each with the signature field (`fieldId`) it answers. */
  submittedFiles?: { content: string; documentname: string; field?: string }[];
  /** The caller's own share: purpose, status, rights, language, message, fields, protections. */
  share: ShareView;
  /** The electronic-signature consent statement accepted before signing (POST /share/consent). */
  consent?: ConsentStatement;
}

/** GET /share/document `consent`: the statement in force, named by its SHA-256 when accepted. */
export interface ConsentStatement {
  text: string;
  language: string;
  sha256: string;
}

export interface UploadAnswer {
  file: { id: string; documentname: string; mimetype: string; size: number };
}

export interface SignEntry {
  type: 'signature' | 'initials' | 'stamp';
  /** An upload's file id; for a stamp, the stamp id POST /share/upload/stamp answered. */
  blob: string;
  /** The share's field it fills (with its own pages and position beside it). */
  fieldId?: string;
  pages: number[];
  position: Position;
}

/** spec: Image entry, filling an image field. */
export interface ImageEntry {
  blob: string;
  fieldId?: string;
  pages: number[];
  position: Position;
}

export interface TextEntry {
  /** The field this text answers: its `fieldId` (or `customId`). */
  fieldId?: string;
  text: string;
  pages: number[];
  position: Position;
  fontSize?: number;
}

export interface LoginState {
  logged: boolean;
  isUnlocked?: boolean;
}

/** `key`: a user's API key (POST /api/key), sent like a session token (the prepare page, issue 40). */
export type Credentials =
  { kind: 'share'; token: string } | { kind: 'session' } | { kind: 'key'; token: string };

export interface SessionOptions {
  /** A recipient session kept from earlier in this tab. */
  session?: string | undefined;
  /** Told of every new session, and of `undefined` when the session is dropped. */
  onSession?: (token: string | undefined) => void;
}

export class Api {
  readonly #credentials: Credentials;
  readonly #onSession: ((token: string | undefined) => void) | undefined;
  #session: string | undefined;

  constructor(credentials: Credentials, options: SessionOptions = {}) {
    this.#credentials = credentials;
    this.#session = credentials.kind === 'share' ? options.session : undefined;
    this.#onSession = options.onSession;
  }

  get isShare(): boolean {
    return this.#credentials.kind === 'share';
  }

  /** From now on, calls send this recipient session instead of the link. */
  useSession(token: string): void {
    if (this.#credentials.kind !== 'share') return;
    this.#session = token;
    this.#onSession?.(token);
  }

  /** Forgets the recipient session (it ended: 401); true when there was one, so the link is tried again. */
  dropSession(): boolean {
    if (this.#session === undefined) return false;
    this.#session = undefined;
    this.#onSession?.(undefined);
    return true;
  }

  async #send(method: string, path: string, body?: BodyInit, contentType?: string): Promise<Response> {
    const headers = new Headers({ accept: 'application/json' });
    if (this.#credentials.kind === 'share')
      headers.set('authorization', `Bearer ${this.#session ?? this.#credentials.token}`);
    else if (this.#credentials.kind === 'key')
      headers.set('authorization', `Bearer ${this.#credentials.token}`);
    if (contentType) headers.set('content-type', contentType);
    let response: Response;
    try {
      response = await fetch(`${API}${path}`, {
        method,
        headers,
        body: body ?? null,
        credentials: 'same-origin',
        cache: 'no-store',
        referrerPolicy: 'no-referrer',
      });
    } catch {
      throw new NetworkFailure('network');
    }
    if (!response.ok) {
      let error: Partial<ErrorBody> = {};
      try {
        error = (await response.json()) as ErrorBody;
      } catch {
        // Not JSON (a proxy's page): the status says enough.
      }
      throw new ApiFailure(response.status, error);
    }
    return response;
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.#send(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
      body === undefined ? undefined : 'application/json',
    );
    return (await response.json()) as T;
  }

  async bytes(path: string): Promise<ArrayBuffer> {
    return (await this.#send('GET', path)).arrayBuffer();
  }

  async upload(path: string, file: Blob, name: string, fields: Record<string, string> = {}) {
    const form = new FormData();
    // Fields first: the server decides on them before it stores the file's bytes.
    for (const [key, value] of Object.entries(fields)) form.append(key, value);
    form.append('file', file, name);
    return (await this.#send('POST', path, form)).json() as Promise<UploadAnswer>;
  }

  // --- the recipient endpoints (Contract: sharing and external recipients) ---

  /**
   * The document the link or the user acts on (GET /share/document). A user who owes it nothing (its
   * owner, after a "completed" mail) reads it as it is (GET /documents/:id, the same answer).
   */
  async document(documentId?: string): Promise<{ results: DocumentView[] }> {
    const query = documentId ? `?id=${encodeURIComponent(documentId)}` : '';
    try {
      return await this.json('GET', `/share/document${query}`);
    } catch (error) {
      const readable = this.#credentials.kind === 'session' && documentId !== undefined;
      if (!(readable && error instanceof ApiFailure && error.status === 404)) throw error;
      return this.json('GET', `/documents/${encodeURIComponent(documentId)}`);
    }
  }

  /**
   * The document's first page as the server drew it (GET /share/document/preview), as an object URL,
   * to show while pdf.js is still loading; nothing when there is none (a locked share, a PDF the
   * server does not draw, no network): the page then waits for pdf.js as before.
   */
  async preview(documentId?: string): Promise<string | undefined> {
    const query = documentId ? `?id=${encodeURIComponent(documentId)}` : '';
    try {
      const response = await this.#send('GET', `/share/document/preview${query}`);
      return URL.createObjectURL(await response.blob());
    } catch {
      return undefined;
    }
  }

  /** The server picks the channel: SMS when the share has a phone, else e-mail (it says which). */
  sendCode(): Promise<{ channel: 'sms' | 'email' }> {
    return this.json('POST', '/share/otp', {});
  }

  identityProviders(): Promise<ShareProviders> {
    return this.json('GET', '/share/oidc');
  }

  /**
   * Where to send the browser to prove who the recipient is at `provider` (GET /share/oidc/:provider);
   * the server sends it back to `redirect` with `#isUnlocked=…&token=…` (a recipient session). Always
   * on the page's own origin, so
   * the token in the query string goes to no one else.
   */
  identityStartUrl(provider: IdentityProvider, redirect: string): string {
    if (this.#credentials.kind !== 'share') throw new Error('Only a share link proves an identity');
    const path = new URL(provider.start, window.location.href).pathname;
    // `/` and `:` may stay as they are in a query (RFC 3986): the redirect's `/s/<token>` then reads
    // as the page's path, which the server's logs redact like the page's own address; encoded as
    // `%2Fs%2F<token>` it would pass their redaction and be written out.
    const readable = encodeURIComponent(redirect).replace(/%2F/gi, '/').replace(/%3A/gi, ':');
    return `${window.location.origin}${path}?token=${encodeURIComponent(this.#credentials.token)}&redirect=${readable}`;
  }

  /** POST /share/unlock: the answer's recipient session is used (and kept for the tab) from now on. */
  async unlock(secret: { password?: string; otp?: string }): Promise<{ status: string }> {
    const answer = await this.json<{ status: string; token: string }>('POST', '/share/unlock', secret);
    this.useSession(answer.token);
    return { status: answer.status };
  }

  file(fileId: string): Promise<ArrayBuffer> {
    return this.bytes(`/files/loadFile/hash/${encodeURIComponent(fileId)}`);
  }

  /**
   * GET /share/signed: what the link's recipient signed, once they acted. It is then all their link
   * (or session) does, for RECIPIENT_DOWNLOAD_DAYS: the document itself is no longer read.
   */
  signedCopy(): Promise<ArrayBuffer> {
    return this.bytes('/share/signed');
  }

  /** Signature and initials images: /share/upload/* for a link, /files/* for a user (spec Files rule 2). */
  uploadImage(kind: 'signature' | 'initials', png: Blob): Promise<UploadAnswer> {
    const path = this.isShare ? `/share/upload/${kind}` : `/files/${kind}`;
    return this.upload(path, png, `${kind}.png`);
  }

  /**
   * A stamp for a stamp field (POST /share/upload/stamp): its id is the sign entry's `blob`. An internal
   * recipient names the document first, as for the other recipient uploads.
   */
  async uploadStamp(documentId: string, image: File): Promise<{ id: string }> {
    const form = new FormData();
    if (!this.isShare) form.append('id', documentId);
    form.append('file', image, image.name);
    return (await this.#send('POST', '/share/upload/stamp', form)).json() as Promise<{ id: string }>;
  }

  /** An image for an image field: /share/upload/file for a link, /files/saveFile for a user. */
  uploadPicture(image: File): Promise<UploadAnswer> {
    return this.upload(this.isShare ? '/share/upload/file' : '/files/saveFile', image, image.name);
  }

  submitFile(documentId: string, fieldId: string, file: File): Promise<UploadAnswer> {
    const fields: Record<string, string> = { fieldId };
    if (!this.isShare) fields.id = documentId;
    return this.upload('/share/upload/submittedFile', file, file.name, fields);
  }

  sign(
    version: number,
    body: { id: string; signatures: SignEntry[]; annotations?: TextEntry[]; images?: ImageEntry[] },
  ): Promise<{ status: string; shareStateName: string | null }> {
    return this.json('PUT', `/share/document/sign/${version}`, body);
  }

  /** POST /share/consent: the recipient accepts the statement they were shown, named by its SHA-256. */
  acceptConsent(id: string, sha256: string): Promise<{ accepted: true; acceptedAt: string }> {
    return this.json('POST', '/share/consent', { ...(this.isShare ? {} : { id }), sha256 });
  }

  reject(id: string, reason: string): Promise<{ status: string }> {
    return this.json('PUT', '/share/reject', reason ? { id, reason } : { id });
  }

  delegate(id: string, shareTo: string, message: string): Promise<ShareView> {
    return this.json('PUT', '/share/delegate', {
      ...(this.isShare ? {} : { id }),
      shareTo,
      ...(message ? { message } : {}),
    });
  }

  execute(id: string, action: string): Promise<{ status: string }> {
    return this.json('POST', '/share/execute', { id, action });
  }

  // --- internal users (session cookie) ---

  loginState(): Promise<LoginState> {
    return this.json('GET', '/login?returnToken=false');
  }

  logIn(name: string, password: string): Promise<LoginState> {
    return this.json('POST', '/login', { name, password, cookie: true, returnToken: false });
  }

  totp(code: string): Promise<unknown> {
    return this.json('POST', '/login/totp', { code });
  }

  /** Ends this browser's session (its cookie is cleared by the answer). */
  logOut(): Promise<unknown> {
    return this.json('GET', '/logout');
  }

  /** The user's pending actions, or (`done`) what they acted on, each with its document's state. */
  inbox(state: 'pending' | 'done' = 'pending'): Promise<{ total: number; results: ShareView[] }> {
    return this.json('GET', `/inbox?state=${state}`);
  }
}
