import type { Generated } from 'kysely';

/**
 * The database's tables as Kysely sees them. Conventions that hold on both dialects:
 * - ids are text (UUIDs or prefixed random ids);
 * - timestamps are ISO 8601 strings in UTC with milliseconds (text on SQLite, timestamptz on
 *   PostgreSQL, read back as ISO strings by the postgres driver set-up);
 * - booleans are integers 0/1 (SQLite has no boolean type and better-sqlite3 refuses JS booleans);
 * - JSON columns are written as JSON text and read with `readJson` (jsonb on PostgreSQL comes back
 *   parsed, text on SQLite does not).
 */
export interface Database {
  tenants: TenantTable;
  organizations: OrganizationTable;
  users: UserTable;
  auth_tokens: AuthTokenTable;
  recovery_codes: RecoveryCodeTable;
  activation_tokens: ActivationTokenTable;
  login_failures: LoginFailureTable;
  audit_log: AuditLogTable;
  audit_heads: AuditHeadTable;
  scroll_contexts: ScrollContextTable;
  files: FileTable;
  documents: DocumentTable;
  document_attachments: DocumentAttachmentTable;
  document_revisions: DocumentRevisionTable;
  templates: TemplateTable;
  drafts: DraftTable;
  definitions: DefinitionTable;
  workflows: WorkflowTable;
  shares: ShareTable;
  stamps: StampTable;
  user_certificates: UserCertificateTable;
  signing_sessions: SigningSessionTable;
  contacts: ContactTable;
  enums: EnumTable;
  jobs: JobTable;
  job_lanes: JobLaneTable;
  events: EventTable;
  webhooks: WebhookTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  oidc_login_states: OidcLoginStateTable;
  oidc_identities: OidcIdentityTable;
  share_oidc_states: ShareOidcStateTable;
  recipient_sessions: RecipientSessionTable;
  share_links: ShareLinkTable;
  dev_pki: DevPkiTable;
  rate_limit_windows: RateLimitWindowTable;
  agent_actions: AgentActionTable;
}

export type Json = string | Record<string, unknown> | unknown[];

export interface TenantTable {
  id: string;
  name: string;
  /** Tenant settings shown at login and changed by PUT /settings/properties. */
  properties: Json;
  /** Named counters changed by PUT /counters. */
  counters: Json;
  created_at: string;
}

export interface OrganizationTable {
  id: string;
  tenant_id: string;
  name: string;
  created_at: string;
}

export interface UserTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  name: string;
  display_name: string | null;
  email: string | null;
  password_hash: string | null;
  role: string;
  rights: Json;
  status: string;
  photo: string | null;
  config: Json;
  mfa_secret: string | null;
  mfa_enabled: number;
  /** The TOTP time step of the last code accepted (RFC 6238 §5.2: never accepted again); null: none. */
  totp_last_step: number | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface AuthTokenTable {
  id: string;
  /** SHA-256 of the whole token: the token itself is never stored. */
  token_hash: string;
  kind: 'session' | 'api_key';
  user_id: string;
  tenant_id: string;
  unlocked: number;
  /** API keys: the public part of the key, shown in listings and accepted by DELETE. */
  prefix: string | null;
  description: string | null;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  /** API keys: 1 for a key made for an AI agent (never approves; outside /mcp it only reads). */
  agent: Generated<number>;
  /** API keys: 1 for a key that only reads. */
  read_only: Generated<number>;
}

export interface RecoveryCodeTable {
  id: string;
  user_id: string;
  code_hash: string;
  used_at: string | null;
}

export interface ActivationTokenTable {
  token_hash: string;
  user_id: string;
  expires_at: string;
}

export interface LoginFailureTable {
  /** `account:<tenant>/<name>` or `address:<ip>`. */
  key: string;
  failures: number;
  window_start: string;
}

export interface AuditLogTable {
  seq: Generated<number>;
  id: string;
  tenant_id: string;
  occurred_at: string;
  actor_id: string | null;
  activity_type: string;
  object_type: string | null;
  object_id: string | null;
  request_id: string | null;
  data: Json;
  /** Tamper evidence (store/db/migrations/frozen/audit-chain.ts): the hash of the tenant's previous record, and this record's. */
  prev_hash: string;
  hash: string;
}

/** The latest hash of each tenant's audit chain; its row lock orders concurrent writers. */
export interface AuditHeadTable {
  tenant_id: string;
  last_hash: string;
  records: number;
}

/** An open scroll of a report or audit-log search (spec: Scroll context); any node continues it. */
export interface ScrollContextTable {
  id: string;
  tenant_id: string;
  user_id: string;
  kind: 'reports' | 'logs';
  /** SHA-256 of the canonical query: continuations must repeat the same query. */
  query_hash: string;
  /** Keyset position after the last record handed out (JSON). */
  cursor: Json;
  total: number;
  /** How many scroll ids this context has handed out; only the latest is accepted. */
  sequence: number;
  /** SHA-256 of the latest scroll id. */
  token_hash: string;
  /** The timeout in whole seconds, rounded up (rows before 0028 have only this). */
  timeout_seconds: number;
  /** The timeout as asked, in milliseconds (spec: `scroll.timeout` is a number); null before 0028. */
  timeout_ms: number | null;
  expires_at: string;
  created_at: string;
}

export interface FileTable {
  /** The opaque id the API hands out as `file.id` / `<file_hash>`: random, never the content hash. */
  id: string;
  tenant_id: string;
  /** Key of the bytes in the blob store; identical uploads share it. */
  sha256: string;
  size: number;
  name: string;
  mimetype: string;
  /** The upload endpoint it came from (`saveFile`, `photo`, `signature`, ...): the usage rules read it. */
  kind: string;
  owner_id: string | null;
  organization_id: string | null;
  created_at: string;
  /** `<kind>:<id>` of the record that used it (usage rules: each id used once); null while unused. */
  used_by: string | null;
  used_at: string | null;
  /** SHA-512 hex of the bytes (Contract: File record `checksum`). */
  checksum: string | null;
  /** Page count, for PDFs. */
  pages: number | null;
  /** Recipient uploads (`/share/upload/*`, owner_id null): the share they were uploaded through. */
  share_id: string | null;
  /** A PDF repaired at upload: `FileRepair` as JSON (what was wrong, the original's size and SHA-512). */
  repair: Json | null;
}

export interface DocumentTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  /** `document`, or `folder` (spec: folders are a special kind of document). */
  kind: 'document' | 'folder';
  owner_id: string;
  created_by: string;
  title: string;
  document_type: string;
  definition_type: string | null;
  workflow: string;
  share_state: string | null;
  main_file_id: string | null;
  barcode_file_id: string | null;
  custom_template: string | null;
  custom_fields: Json;
  folder_id: string | null;
  is_shared: number;
  is_signed: number;
  /** `_version`: every change is a compare-and-set on it. */
  version: number;
  /** The rest of the document's fields as sent. */
  data: Json;
  /**
   * Until when the newest archive timestamp of a B-LTA main file proves it (its TSA certificate's end,
   * or at once for weak algorithms); null when the document was never signed at B-LTA.
   */
  archive_expires_at: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DocumentAttachmentTable {
  document_id: string;
  file_id: string;
  is_public: number;
  /** Recipient-submitted (`submittedFiles`), immutable. */
  submitted: number;
  /** Order in the document's `file` list. */
  position: number;
  added_by: string;
  created_at: string;
  /** Submitted files: the `customId` of the `annotation_submitted_file` field answered (one file each). */
  field_id: string | null;
}

export interface DocumentRevisionTable {
  document_id: string;
  revision: number;
  file_id: string;
  reason: string;
  actor_id: string | null;
  created_at: string;
}

export interface TemplateTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  owner_id: string;
  file_id: string | null;
  data: Json;
  users: Json;
  groups: Json;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface DraftTable {
  id: string;
  tenant_id: string;
  owner_id: string;
  data: Json;
  main_file_id: string | null;
  files: Json;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface DefinitionTable {
  tenant_id: string;
  name: string;
  template_file_id: string | null;
  data: Json;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface WorkflowTable {
  tenant_id: string;
  name: string;
  data: Json;
}

/** A durable job (src/jobs/queue.ts). */
export interface JobTable {
  id: string;
  type: string;
  payload: Json;
  status: 'queued' | 'running' | 'done' | 'dead';
  /** When a queued job is due; null while it waits behind an earlier job of its lane. */
  run_at: string | null;
  /** Claims so far (a claim counts as an attempt even when its worker dies). */
  attempts: number;
  max_attempts: number | null;
  /** No retry is scheduled after this time: the job goes to `dead`. */
  deadline_at: string | null;
  locked_by: string | null;
  lease_until: string | null;
  last_error: string | null;
  /** Jobs sharing a key run one at a time in `ordering_seq` order (one webhook's deliveries). */
  ordering_key: string | null;
  ordering_seq: number | null;
  created_at: string;
  updated_at: string;
}

export interface JobLaneTable {
  key: string;
  last_seq: number;
  /** Jobs of the lane that are queued or running (waiting ones included). */
  active: number;
  updated_at: string;
}

/** The outbox: one row per event, written in the transaction of the change (Contract: Events). */
export interface EventTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  document_id: string;
  event: string;
  actor: string;
  occurred_at: string;
}

export interface WebhookTable {
  id: string;
  tenant_id: string;
  type: 'organization' | 'tenant';
  organization_id: string | null;
  name: string;
  callback_url: string;
  /** Needed to sign each request, so stored as given; never logged nor listed. */
  hmac_secret: string;
  /** The secret a rotation replaced, still signing until `previous_secret_until`; then cleared. */
  previous_hmac_secret: string | null;
  previous_secret_until: string | null;
  /** Who holds it (its creator, or whom an administrator transferred it to): it delivers only while they may. */
  creator_id: string;
  creator_name: string;
  created_at: string;
  /** Since when no one entitled holds it (core/events/webhook-holders.ts); null while it delivers. */
  paused_at: string | null;
}

export interface WebhookDeliveryTable {
  /** Sent as `x-signery-delivery`, the same on every attempt. */
  id: string;
  webhook_id: string;
  event_id: string;
  /** Its place in the webhook's lane (the order of the events). */
  seq: number;
  job_id: string;
  created_at: string;
}

export interface WebhookAttemptTable {
  id: string;
  delivery_id: string;
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  success: number;
  /** The first bytes of the receiver's answer as text (null without an answer). */
  response_excerpt: string | null;
}

export interface ShareTable {
  id: string;
  tenant_id: string;
  document_id: string;
  /** Shares made by one POST /share call. */
  share_group: string;
  shared_by: string;
  /** view, edit, sign, execute, approve, review, accept. */
  purpose: string;
  /** `shareTo` as given: a login name or an e-mail address. */
  share_to: string;
  /** Internal recipients: their user id. */
  user_id: string | null;
  /** A folder shared with a group: the organization whose members it is for (0029). */
  group_id: string | null;
  email: string | null;
  /** active (owes its action or reads), waiting (sequential, not its turn), done, rejected, cancelled, expired, delegated. */
  status: string;
  sequential: number;
  position: number;
  message: string | null;
  valid_until: string | null;
  password_hash: string | null;
  phone: string | null;
  otp_hash: string | null;
  otp_expires_at: string | null;
  /** rights, language, formats, oauth factors, automatic reminder, signature fields, flags. */
  options: Json;
  next_reminder_at: string | null;
  last_reminder_at: string | null;
  message_read: number;
  delegated_from: string | null;
  acted_at: string | null;
  reason: string | null;
  created_at: string;
  updated_at: string;
  /** The sign entity a sign share belongs to within its share group (`id:<userRoleId>` or `name:<userRoleName>`). */
  sign_entity: string | null;
  /** That entity's quorum: how many of its shares must sign. */
  quorum: number | null;
  /** The identity provider (of `allowedOAuths`) through which the recipient proved who they are. */
  identity_provider: string | null;
  identity_verified_at: string | null;
}

/** Stamps as resources (spec: Stamp; Versioning 4): a signature entry of type `stamp` names one by id. */
export interface StampTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  /** Personal stamps: their owner; null for organization and share stamps. */
  owner_id: string | null;
  /** Share stamps (POST /share/upload/stamp): the share that uploaded it. */
  share_id: string | null;
  scope: 'personal' | 'organization' | 'share';
  name: string;
  /** The image (a `saveFile` upload, or a `share-stamp` upload for share stamps). */
  file_id: string;
  created_at: string;
  updated_at: string;
  version: number;
}

/** A personal certificate for two-step signing (spec: Users `certificates`); `hash` names it in the API. */
export interface UserCertificateTable {
  id: string;
  tenant_id: string;
  user_id: string;
  /** SHA-256 (hex) of the certificate's DER: the `certificateHash` of the API. */
  hash: string;
  /** DER, base64. */
  certificate: string;
  /** Issuer certificates, nearest first (JSON array of base64 DER). */
  chain: Json;
  subject: string;
  issuer: string;
  serial_number: string;
  key_algorithm: 'RSA' | 'ECDSA';
  not_before: string;
  not_after: string;
  created_at: string;
}

/** An open or finished two-step signing session (spec: Two-step signing session). */
export interface SigningSessionTable {
  id: string;
  tenant_id: string;
  user_id: string;
  document_id: string;
  /** The document's `_version` when the session started: finishing is a compare-and-set on it. */
  document_version: number;
  certificate_hash: string;
  provider: 'internalUsb' | 'internalNfc';
  mode: 'digest' | 'file';
  /** The prepared PDF (a file of kind `prepared`). */
  prepared_file_id: string;
  /** `PreparedSignatureStateJson`. */
  state: Json;
  expires_at: string;
  finished_at: string | null;
  created_at: string;
}

/** A user's address-book entry (spec: Other resources): seen and changed by its owner only. */
export interface ContactTable {
  id: string;
  tenant_id: string;
  owner_id: string;
  name: string;
  email: string | null;
  phone: string | null;
  /** The contact's company or institution: free text, not one of our organizations. */
  organisation: string | null;
  /** File id of a POST /files/photo upload (spec Files usage rule 1). */
  photo: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** A named value list of an organization (spec: Other resources), e.g. contract types for a custom field. */
export interface EnumTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  /** Unique in its organization; names the enum in paths. */
  name: string;
  label: string | null;
  /** JSON array of `{value, label, photo?, files?}`, in the order they were added. */
  records: Json;
  created_by: string;
  created_at: string;
  updated_at: string;
  version: number;
}

/** A third-party sign-in between its start and its callback (spec: Authentication 5); used once. */
export interface OidcLoginStateTable {
  /** SHA-256 (hex) of the `state` sent to the provider. */
  state_hash: string;
  /** The provider's name in OIDC_PROVIDERS. */
  provider: string;
  code_verifier: string;
  nonce: string;
  /** SHA-256 (hex) of the cookie that ties the callback to the browser that started the sign-in. */
  binding_hash: string;
  /** Where to send the browser with the token once signed in (on PUBLIC_URL's origin), if anywhere. */
  redirect: string | null;
  created_at: string;
  expires_at: string;
}

/** A provider account (`provider`, its `sub`) linked to a user at its first sign-in by verified e-mail. */
export interface OidcIdentityTable {
  provider: string;
  subject: string;
  tenant_id: string;
  user_id: string;
  /** The verified e-mail address that linked it. */
  email: string;
  created_at: string;
  last_login_at: string;
}

/**
 * An external recipient's sign-in at an identity provider between its start and its callback; used
 * once. The columns of a user's sign-in, and the share; `redirect` is where the browser goes afterwards.
 */
export interface ShareOidcStateTable extends OidcLoginStateTable {
  share_id: string;
}

/**
 * A recipient session (Contract: Sharing): what POST /share/unlock or an identity provider's sign-in
 * gives an external recipient instead of unlocking the link. Ends 60 minutes (RECIPIENT_SESSION_MINUTES)
 * after its last use, and with its share.
 */
export interface RecipientSessionTable {
  id: string;
  /** SHA-256 of the session token: the token itself is never stored. */
  token_hash: string;
  share_id: string;
  tenant_id: string;
  /** 1 once every protection of the share was passed in this session. */
  unlocked: number;
  /** The identity provider (of `allowedOAuths`) through which this session proved the recipient. */
  identity_provider: string | null;
  identity_verified_at: string | null;
  created_at: string;
  last_used_at: string;
  /** `last_used_at` plus RECIPIENT_SESSION_MINUTES. */
  expires_at: string;
}

/**
 * A link an external recipient received for a share (the invitation, each reminder, their turn): every
 * one opens the share while it is live (share-standing.ts); all die with it, or when the share moves
 * to another recipient. Earlier databases kept one link per share in `shares.token_hash`, now unused.
 */
export interface ShareLinkTable {
  /** SHA-256 of the link's token: the token itself is never stored. */
  token_hash: string;
  share_id: string;
  tenant_id: string;
  created_at: string;
}

/** The development PKI of the installation (PEM), when no seal key is configured. */
export interface DevPkiTable {
  name: string;
  root_certificate: string;
  root_key: string;
  seal_certificate: string;
  seal_key: string;
  created_at: string;
}

/** Requests counted in one bucket's fixed window, summed over the nodes (store/rate-limits/database.ts). */
export interface RateLimitWindowTable {
  /** SHA-256 (hex) of the policy and what it limits: never a token itself. */
  bucket: string;
  /** Milliseconds since the epoch, a multiple of the window's length. */
  window_start_ms: number;
  count: number;
}

/** A consequential act an AI agent proposed, waiting for a person (src/agents/). */
export interface AgentActionTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  document_id: string;
  tool: string;
  /** The exact request the act will be executed with, as the agent sent it. */
  request: Json;
  state: 'pending' | 'executing' | 'executed' | 'rejected' | 'interrupted';
  /** The API key that proposed it (auth_tokens.id) and its public prefix. */
  key_id: string;
  key_prefix: string;
  created_by_user_id: string;
  /** The key owner's login name. */
  created_by: string;
  created_at: string;
  expires_at: string;
  decided_by: string | null;
  decided_at: string | null;
  /** What the execution answered (approved), or why it was rejected. */
  outcome: Json | null;
}
