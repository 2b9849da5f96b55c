import { resolve } from 'node:path';

/** Every setting of the Contract, parsed once from the environment into one typed object. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string;
  /**
   * FILES_PUBLIC_URL: a separate origin user files are downloaded from (http/file-origin.ts); the API
   * then answers every stored file with 303 to a short-lived ticket there. Unset: files are answered
   * on the API's origin, sandboxed.
   */
  filesPublicUrl: string | undefined;
  /**
   * EMBED_ALLOWED_ORIGINS: the sites allowed to frame the signer's page (DESIGN: Embedding), as
   * origins (`scheme://host[:port]`). Empty (the default): no one frames it.
   */
  embedAllowedOrigins: string[];
  /** SECRET_KEY: what secrets kept for a while (queued mails' links and codes) are encrypted with; generated under DATA_DIR when unset (secret-box.ts). */
  secretKey: string | undefined;
  databaseUrl: string | undefined;
  /** PostgreSQL schema to use (created when missing); lets several instances share one database. */
  databaseSchema: string | undefined;
  /**
   * How long PostgreSQL may run one statement (DATABASE_STATEMENT_TIMEOUT_MS, 0 = no limit). A
   * connection that has not answered a little after it is taken for dead and dropped.
   */
  databaseStatementTimeoutMs: number;
  admin: { email: string | undefined; password: string | undefined; tenant: string };
  s3: S3Config | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  /** An SMS provider's HTTP API (see notify/sms/http.ts); without it SMS are files under DATA_DIR/sms. */
  smsHttpUrl: string | undefined;
  smsHttpToken: string | undefined;
  seal: {
    p12: string | undefined;
    p12Password: string | undefined;
    pkcs11Module: string | undefined;
    pkcs11Pin: string | undefined;
    pkcs11Label: string | undefined;
    /** The provider of a sign or seal call that names none (SEAL_PROVIDER): `internal` or `csc`. */
    provider: SignatureProviderName;
  };
  /** A remote signing service speaking the CSC API v2 (CSC_*): the `csc` signature provider. */
  csc: CscConfig | undefined;
  tsaUrl: string | undefined;
  /** B-LTA documents get a new archive timestamp this many days before theirs stops proving (LTA_RENEW_DAYS). */
  ltaRenewDays: number;
  webhookAllowPrivate: boolean;
  /** How long a rotated-out webhook secret still signs deliveries, unless the rotation says. */
  webhookSecretGraceHours: number;
  /**
   * Revocation fetches for PAdES B-LT (OCSP, CRL): loopback and private addresses allowed
   * (REVOCATION_ALLOW_PRIVATE; off by default, the webhooks' SSRF rules), and each fetch's time-out;
   * and whether verification asks a trusted signer's responders when the file does not establish its
   * revocation status (VERIFY_FETCH_REVOCATION; off by default: verification reads the file only).
   */
  revocation: { allowPrivate: boolean; timeoutMs: number; fetchWhenVerifying: boolean };
  /**
   * The roots verification trusts (TRUST_ANCHORS): a PEM (or DER) file, or a directory of them. The
   * seal key's own chain and, when it is the seal, the dev CA's root are trusted besides (issue 38).
   */
  trustAnchors: string | undefined;
  sessionTtlDays: number;
  apiKeyTtlDays: number;
  /** How long an agent's pending action waits for a person's approval (issue 42). */
  agentActionTtlHours: number;
  /** Origins besides PUBLIC_URL's whose browsers may call /mcp (MCP_ALLOWED_ORIGINS). */
  mcpAllowedOrigins: string[];
  /** The largest PDF the MCP tools take (upload_pdf) or answer (download_signed_pdf), in bytes. */
  mcpMaxFileBytes: number;
  /** Lifetime of a two-step signing session (spec: `sessionExpiration`). */
  twoStepSessionSeconds: number;
  /** How long a recipient session (POST /share/unlock) lasts after its last use. */
  recipientSessionMinutes: number;
  /**
   * How long, after acting, a recipient's link (or session) still downloads what they signed
   * (RECIPIENT_DOWNLOAD_DAYS), and nothing else.
   */
  recipientDownloadDays: number;
  logLevel: string;
  /** Serves GET /metrics on this port too (METRICS_PORT): `signery worker`'s only HTTP. */
  metricsPort: number | undefined;
  /** Failed logins allowed per account, and per client address, inside `loginWindowSeconds`. */
  loginMaxFailuresPerAccount: number;
  loginMaxFailuresPerAddress: number;
  loginWindowSeconds: number;
  /** Trust X-Forwarded-For (only behind a proxy you run). */
  trustProxy: boolean;
  /**
   * How long a node stopped by SIGTERM waits, at most, for a proxy to close its kept-alive connections
   * (SHUTDOWN_DRAIN_SECONDS; see http/drain.ts): longer than the proxy's idle keep-alive timeout.
   */
  shutdownDrainSeconds: number;
  /** OpenID Connect providers users may sign in with (OIDC_PROVIDERS); empty when none. */
  oidcProviders: OidcProviderConfig[];
  jobs: JobsConfig;
  rateLimits: RateLimitConfig;
  /**
   * The public verification page (PUBLIC_URL/verify) and its endpoint POST /verify: anyone checks a
   * PDF's signatures without an account (PUBLIC_VERIFY, on by default), up to `maxBytes`
   * (PUBLIC_VERIFY_MAX_MB, 50 MB); nothing of the file is kept.
   */
  publicVerify: { enabled: boolean; maxBytes: number };
  /** Redis, when REDIS_URL is set: where the nodes share their rate-limit counts instead of the database. */
  redis: RedisConfig | undefined;
}

/**
 * Requests allowed per minute to each caller (docs/security.md: Rate limits). Counted per API key,
 * per session, per recipient link or session, and per client address for calls without a credential.
 */
export type SignatureProviderName = 'internal' | 'csc';

/** The CSC API v2 service of the `csc` provider (pki/signers/csc.ts). */
export interface CscConfig {
  /** The base the CSC methods hang from, e.g. `https://rssp.example/csc/v2` (CSC_URL). */
  serviceUrl: string;
  clientId: string;
  clientSecret: string;
  /** The OAuth2 token endpoint (CSC_TOKEN_URL); by default the one the service's `info` names. */
  tokenUrl: string | undefined;
  credentialId: string | undefined;
  pin: string | undefined;
  timeoutMs: number;
}

export interface RateLimitConfig {
  /** RATE_LIMIT=off turns every limit off (a node behind a gateway that limits already). */
  enabled: boolean;
  /** Requests a minute of one API key, user session, or recipient link or session (RATE_LIMIT_PER_MINUTE). */
  perMinute: number;
  /** Requests a minute from one client address without a valid credential (RATE_LIMIT_ANONYMOUS_PER_MINUTE). */
  anonymousPerMinute: number;
  /** Checks a minute from one client address on the public verification page (RATE_LIMIT_PUBLIC_VERIFY_PER_MINUTE). */
  publicVerifyPerMinute: number;
  /** How often a node adds its counts to the shared ones and reads the cluster's totals back (RATE_LIMIT_SYNC_MS). */
  syncMs: number;
}

export interface RedisConfig {
  url: string;
  /** Prepended to every key (REDIS_KEY_PREFIX), so that several installations can share one Redis. */
  keyPrefix: string;
}

/** The background job worker of this process (webhook delivery, mail, reminders, expiry). */
export interface JobsConfig {
  /** Whether `serve` runs one (JOB_WORKER); `signery worker` always does. */
  worker: boolean;
  /** Jobs it runs at once (JOB_CONCURRENCY). */
  concurrency: number;
  /** How often it looks for due jobs when nothing woke it (JOB_POLL_INTERVAL_MS). */
  pollIntervalMs: number;
}

export interface S3Config {
  endpoint: string | undefined;
  bucket: string;
  region: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  forcePathStyle: boolean;
  /** Key prefix inside the bucket (S3_PREFIX), to share one bucket with other data. */
  prefix: string | undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function integer(env: Env, key: string, fallback: number, min = 0): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`${key} must be an integer of at least ${min}, got "${raw}"`);
  }
  return value;
}

function flag(env: Env, key: string): boolean {
  const raw = env[key]?.toLowerCase();
  return raw === 'true' || raw === '1' || raw === 'yes';
}

function text(env: Env, key: string): string | undefined {
  const raw = env[key];
  return raw === undefined || raw === '' ? undefined : raw;
}

/** FILES_PUBLIC_URL: an http(s) origin (no path) other than PUBLIC_URL's. */
function filesPublicUrl(env: Env, publicUrl: string): string | undefined {
  const raw = text(env, 'FILES_PUBLIC_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`FILES_PUBLIC_URL must be an http(s):// origin, got "${raw}"`);
  }
  if (!/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search || url.hash || url.username) {
    throw new ConfigError(`FILES_PUBLIC_URL must be an http(s):// origin with no path, got "${raw}"`);
  }
  if (url.origin === new URL(publicUrl).origin) {
    throw new ConfigError('FILES_PUBLIC_URL must be another origin than PUBLIC_URL (another host name)');
  }
  return url.origin;
}

/**
 * EMBED_ALLOWED_ORIGINS: comma-separated http(s) origins, each exactly `scheme://host[:port]` (no
 * path, no wildcard: a Content-Security-Policy source with a path or `*` would let in more than named).
 */
function embedAllowedOrigins(env: Env): string[] {
  return originList(env, 'EMBED_ALLOWED_ORIGINS');
}

/** A comma-separated list of origins (EMBED_ALLOWED_ORIGINS, MCP_ALLOWED_ORIGINS), each checked alike. */
function originList(env: Env, key: string): string[] {
  const raw = text(env, key);
  if (raw === undefined) return [];
  const origins: string[] = [];
  for (const entry of raw.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const refuse = () =>
      new ConfigError(
        `${key} must list origins like https://app.example.com[:port] (no path, no wildcard), got "${entry}"`,
      );
    if (!/^https?:\/\/[^/?#*@\s]+$/i.test(entry)) throw refuse();
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw refuse();
    }
    // A host name or an IP address, nothing a policy would read otherwise.
    if (!/^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/.test(url.hostname)) throw refuse();
    if (!origins.includes(url.origin)) origins.push(url.origin);
  }
  return origins;
}

/** Reads the Contract's environment variables; throws ConfigError naming the first bad one. */
export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080);
  if (port > 65535) throw new ConfigError(`PORT must be at most 65535, got "${port}"`);
  const metricsPort = text(env, 'METRICS_PORT') === undefined ? undefined : integer(env, 'METRICS_PORT', 0);
  if (metricsPort !== undefined && metricsPort > 65535)
    throw new ConfigError(`METRICS_PORT must be at most 65535, got "${metricsPort}"`);
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL (leave it unset for the embedded SQLite)');
  }
  const csc = cscConfig(env);
  const schema = text(env, 'DATABASE_SCHEMA');
  if (schema && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new ConfigError('DATABASE_SCHEMA must be a lowercase SQL identifier');
  }
  const bucket = text(env, 'S3_BUCKET');
  const publicUrl = (text(env, 'PUBLIC_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '');
  return {
    port,
    host: text(env, 'HOST') ?? '0.0.0.0',
    dataDir: resolve(text(env, 'DATA_DIR') ?? './data'),
    publicUrl,
    filesPublicUrl: filesPublicUrl(env, publicUrl),
    embedAllowedOrigins: embedAllowedOrigins(env),
    secretKey: text(env, 'SECRET_KEY'),
    databaseUrl,
    databaseSchema: schema,
    databaseStatementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30_000),
    admin: {
      email: text(env, 'ADMIN_EMAIL'),
      password: text(env, 'ADMIN_PASSWORD'),
      tenant: text(env, 'ADMIN_TENANT') ?? 'default',
    },
    s3: bucket
      ? {
          endpoint: text(env, 'S3_ENDPOINT'),
          bucket,
          region: text(env, 'S3_REGION') ?? 'us-east-1',
          accessKeyId: text(env, 'S3_ACCESS_KEY_ID'),
          secretAccessKey: text(env, 'S3_SECRET_ACCESS_KEY'),
          forcePathStyle: flag(env, 'S3_FORCE_PATH_STYLE'),
          prefix: text(env, 'S3_PREFIX'),
        }
      : undefined,
    smtpUrl: text(env, 'SMTP_URL'),
    mailFrom: text(env, 'MAIL_FROM') ?? 'Signery <no-reply@localhost>',
    smsHttpUrl: text(env, 'SMS_HTTP_URL'),
    smsHttpToken: text(env, 'SMS_HTTP_TOKEN'),
    seal: {
      p12: text(env, 'SEAL_P12'),
      p12Password: text(env, 'SEAL_P12_PASSWORD'),
      pkcs11Module: text(env, 'SEAL_PKCS11_MODULE'),
      pkcs11Pin: text(env, 'SEAL_PKCS11_PIN'),
      pkcs11Label: text(env, 'SEAL_PKCS11_LABEL'),
      provider: sealProvider(env, csc),
    },
    csc,
    tsaUrl: text(env, 'TSA_URL'),
    ltaRenewDays: integer(env, 'LTA_RENEW_DAYS', 90, 1),
    webhookAllowPrivate: flag(env, 'WEBHOOK_ALLOW_PRIVATE'),
    webhookSecretGraceHours: integer(env, 'WEBHOOK_SECRET_GRACE_HOURS', 24),
    revocation: {
      allowPrivate: flag(env, 'REVOCATION_ALLOW_PRIVATE'),
      timeoutMs: integer(env, 'REVOCATION_TIMEOUT_MS', 5_000, 100),
      fetchWhenVerifying: flag(env, 'VERIFY_FETCH_REVOCATION'),
    },
    trustAnchors: text(env, 'TRUST_ANCHORS'),
    sessionTtlDays: integer(env, 'SESSION_TTL_DAYS', 30, 1),
    apiKeyTtlDays: integer(env, 'API_KEY_TTL_DAYS', 3650, 1),
    agentActionTtlHours: integer(env, 'AGENT_ACTION_TTL_HOURS', 72, 1),
    mcpAllowedOrigins: originList(env, 'MCP_ALLOWED_ORIGINS'),
    mcpMaxFileBytes: integer(env, 'MCP_MAX_FILE_BYTES', 10 * 1024 * 1024, 1),
    twoStepSessionSeconds: integer(env, 'TWO_STEP_SESSION_SECONDS', 900, 10),
    recipientSessionMinutes: integer(env, 'RECIPIENT_SESSION_MINUTES', 60, 1),
    recipientDownloadDays: integer(env, 'RECIPIENT_DOWNLOAD_DAYS', 30, 0),
    logLevel: text(env, 'LOG_LEVEL') ?? 'info',
    metricsPort,
    loginMaxFailuresPerAccount: integer(env, 'LOGIN_MAX_FAILURES_PER_ACCOUNT', 5, 1),
    loginMaxFailuresPerAddress: integer(env, 'LOGIN_MAX_FAILURES_PER_ADDRESS', 20, 1),
    loginWindowSeconds: integer(env, 'LOGIN_WINDOW_SECONDS', 900, 1),
    trustProxy: flag(env, 'TRUST_PROXY'),
    shutdownDrainSeconds: integer(env, 'SHUTDOWN_DRAIN_SECONDS', 10, 0),
    oidcProviders: oidcProviders(text(env, 'OIDC_PROVIDERS')),
    jobs: {
      worker: !/^(false|0|no)$/i.test(text(env, 'JOB_WORKER') ?? 'true'),
      concurrency: integer(env, 'JOB_CONCURRENCY', 16, 1),
      pollIntervalMs: integer(env, 'JOB_POLL_INTERVAL_MS', 200, 10),
    },
    rateLimits: {
      enabled: switchedOn(env, 'RATE_LIMIT'),
      // Documenso allows 1,000 requests a minute per address, DocuSign 3,000 an hour per account.
      perMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 1000, 1),
      anonymousPerMinute: integer(env, 'RATE_LIMIT_ANONYMOUS_PER_MINUTE', 300, 1),
      // Each check parses a PDF and its signatures: far fewer than other anonymous calls.
      publicVerifyPerMinute: integer(env, 'RATE_LIMIT_PUBLIC_VERIFY_PER_MINUTE', 20, 1),
      syncMs: integer(env, 'RATE_LIMIT_SYNC_MS', 1000, 10),
    },
    publicVerify: {
      enabled: switchedOn(env, 'PUBLIC_VERIFY'),
      maxBytes: integer(env, 'PUBLIC_VERIFY_MAX_MB', 50, 1) * 1024 * 1024,
    },
    redis: redis(env),
  };
}

/** `on` (the default) or `off`; anything else is a mistake worth refusing at start. */
function cscConfig(env: Env): CscConfig | undefined {
  const serviceUrl = text(env, 'CSC_URL');
  if (!serviceUrl) return undefined;
  if (!/^https?:\/\//.test(serviceUrl)) throw new ConfigError('CSC_URL must be an http(s):// URL');
  const clientId = text(env, 'CSC_CLIENT_ID');
  const clientSecret = text(env, 'CSC_CLIENT_SECRET');
  if (!clientId || !clientSecret) {
    throw new ConfigError('CSC_URL needs CSC_CLIENT_ID and CSC_CLIENT_SECRET (OAuth2 client credentials)');
  }
  return {
    serviceUrl,
    clientId,
    clientSecret,
    tokenUrl: text(env, 'CSC_TOKEN_URL'),
    credentialId: text(env, 'CSC_CREDENTIAL_ID'),
    pin: text(env, 'CSC_PIN'),
    timeoutMs: integer(env, 'CSC_TIMEOUT_MS', 10_000, 100),
  };
}

function sealProvider(env: Env, csc: CscConfig | undefined): SignatureProviderName {
  const provider = text(env, 'SEAL_PROVIDER') ?? 'internal';
  if (provider !== 'internal' && provider !== 'csc') {
    throw new ConfigError(`SEAL_PROVIDER must be internal or csc, got "${provider}"`);
  }
  if (provider === 'csc' && !csc) throw new ConfigError('SEAL_PROVIDER=csc needs CSC_URL');
  return provider;
}

function switchedOn(env: Env, key: string): boolean {
  const raw = text(env, key)?.toLowerCase() ?? 'on';
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${key} must be on or off, got "${env[key]}"`);
}

function redis(env: Env): RedisConfig | undefined {
  const url = text(env, 'REDIS_URL');
  if (!url) return undefined;
  if (!/^rediss?:\/\//.test(url)) throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  return { url, keyPrefix: text(env, 'REDIS_KEY_PREFIX') ?? 'signery:' };
}

/** One entry of OIDC_PROVIDERS (spec: Authentication 5; see http/routes/oidc.ts for the flow). */
export interface OidcProviderConfig {
  /** Names the provider in paths (`/login/oidc/<name>`): lowercase letters, digits, `-`, `_`. */
  name: string;
  label: string;
  /** Issuer identifier: https://, or http:// on a loopback address only. */
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  /** How the client authenticates at the token endpoint; `none` is a public client (PKCE only). */
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  /** Always holds `openid`; default `openid email profile`. */
  scopes: string[];
  /** The tenant whose accounts it signs in to; undefined: ADMIN_TENANT's, as for POST /login. */
  tenant: string | undefined;
  /**
   * Which claims carry the identity facts a share's `oauthFactors` are checked against (spec Sharing
   * rule 3): `phoneNumber` defaults to `phone_number`; `emiratesId` has no standard claim, so a
   * provider gives it only when named here (e.g. `{"emiratesId": "idn"}`).
   */
  claims: OidcClaimNames;
}

export interface OidcClaimNames {
  phoneNumber?: string | undefined;
  emiratesId?: string | undefined;
}

const OIDC_KEYS = new Set([
  'name',
  'label',
  'issuer',
  'clientId',
  'clientSecret',
  'tokenEndpointAuthMethod',
  'scopes',
  'tenant',
  'claims',
]);
const OIDC_CLAIM_KEYS = ['phoneNumber', 'emiratesId'] as const;
const OIDC_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;

/** Parses OIDC_PROVIDERS: `[{name, label, issuer, clientId, clientSecret?, scopes?, ...}]`. */
function oidcProviders(raw: string | undefined): OidcProviderConfig[] {
  if (raw === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('OIDC_PROVIDERS must be a JSON array of providers');
  }
  if (!Array.isArray(parsed)) throw new ConfigError('OIDC_PROVIDERS must be a JSON array of providers');
  const names = new Set<string>();
  return parsed.map((entry: unknown, i): OidcProviderConfig => {
    const at = `OIDC_PROVIDERS[${i}]`;
    if (typeof entry !== 'object' || entry === null) throw new ConfigError(`${at} must be an object`);
    const e = entry as Record<string, unknown>;
    const unknown = Object.keys(e).find((k) => !OIDC_KEYS.has(k));
    if (unknown) throw new ConfigError(`${at}.${unknown} is not a provider setting`);
    const str = (key: string, required: boolean): string | undefined => {
      const value = e[key];
      if (value === undefined && !required) return undefined;
      if (typeof value !== 'string' || value === '') throw new ConfigError(`${at}.${key} must be a string`);
      return value;
    };
    const name = str('name', true) as string;
    if (!/^[a-z0-9][a-z0-9_-]{0,62}$/.test(name) || names.has(name)) {
      throw new ConfigError(`${at}.name must be unique and made of lowercase letters, digits, - and _`);
    }
    names.add(name);
    const issuer = str('issuer', true) as string;
    let url: URL;
    try {
      url = new URL(issuer);
    } catch {
      throw new ConfigError(`${at}.issuer must be a URL`);
    }
    // Tokens and the user's identity travel over this connection: plain HTTP only where nothing can listen in.
    const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
      throw new ConfigError(`${at}.issuer must be an https:// URL (http:// only on a loopback address)`);
    }
    const clientSecret = str('clientSecret', false);
    const method = str('tokenEndpointAuthMethod', false) ?? (clientSecret ? 'client_secret_basic' : 'none');
    if (!(OIDC_AUTH_METHODS as readonly string[]).includes(method)) {
      throw new ConfigError(`${at}.tokenEndpointAuthMethod must be one of ${OIDC_AUTH_METHODS.join(', ')}`);
    }
    if (method !== 'none' && !clientSecret)
      throw new ConfigError(`${at}.clientSecret is required by ${method}`);
    const scopes = e.scopes ?? ['openid', 'email', 'profile'];
    if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string' && /^[\x21-\x7e]+$/.test(s))) {
      throw new ConfigError(`${at}.scopes must be an array of scope names`);
    }
    return {
      name,
      label: str('label', false) ?? name,
      issuer,
      clientId: str('clientId', true) as string,
      clientSecret,
      tokenEndpointAuthMethod: method as OidcProviderConfig['tokenEndpointAuthMethod'],
      scopes: [...new Set(['openid', ...(scopes as string[])])],
      tenant: str('tenant', false),
      claims: claimNames(e.claims, at),
    };
  });
}

/** Parses an entry's optional `claims`: `{phoneNumber?, emiratesId?}`, each a claim name. */
function claimNames(raw: unknown, at: string): OidcClaimNames {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`${at}.claims must be an object such as {"emiratesId": "idn"}`);
  }
  const names: OidcClaimNames = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!(OIDC_CLAIM_KEYS as readonly string[]).includes(key)) {
      throw new ConfigError(`${at}.claims.${key} is not one of ${OIDC_CLAIM_KEYS.join(', ')}`);
    }
    if (typeof value !== 'string' || !/^[\w.:-]{1,100}$/.test(value)) {
      throw new ConfigError(`${at}.claims.${key} must be a claim name`);
    }
    names[key as (typeof OIDC_CLAIM_KEYS)[number]] = value;
  }
  return names;
}
