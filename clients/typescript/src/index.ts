import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };

/**
 * The reduced answer of a call sent with `minified: true` (the server's minified interface), by the
 * schema its `minified` parameter names: `data` is typed as the full answer, which is what a call
 * gets unless it asks, so a minified call reads its `data` as, e.g., `MinifiedAnswer<'MinifiedDocuments'>`.
 */
export type MinifiedAnswer<Name extends Extract<keyof components['schemas'], `Minified${string}`>> =
  components['schemas'][Name];

/** A typed client of the Signery API: every path, body and answer as the server describes them. */
export type SigneryClient = Client<paths>;

export interface SigneryClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The server's address, e.g. `https://sign.example.com` (the `/api/v1` paths are added). */
  baseUrl: string;
  /** A session token (POST /api/v1/login), an API key, or a recipient's link or session token. */
  token?: string;
}

/**
 * Makes a client of the Signery server at `baseUrl`, sending `token` as `Authorization: Bearer`.
 *
 * ```ts
 * const signery = createSigneryClient({ baseUrl: 'http://localhost:8080', token: process.env.SIGNERY_KEY });
 * const { data, error } = await signery.GET('/api/v1/documents/{documentId}', {
 *   params: { path: { documentId } },
 * });
 * ```
 */
export function createSigneryClient(options: SigneryClientOptions): SigneryClient {
  const { token, headers, ...rest } = options;
  return createClient<paths>({
    ...rest,
    headers: token ? { ...headers, authorization: `Bearer ${token}` } : headers,
  });
}

/**
 * The body of an upload (multipart/form-data) as openapi-fetch sends it: pass it as `bodySerializer`.
 * Text parts go first (the server reads `fileName` before the file's bytes), then the file, named
 * after `fileName`.
 *
 * ```ts
 * const { data } = await signery.POST('/api/v1/files/saveFile', {
 *   body: { file: new Blob([bytes], { type: 'application/pdf' }), fileName: 'contract.pdf' },
 *   bodySerializer: formData,
 * });
 * ```
 */
export function formData(parts: object): FormData {
  const form = new FormData();
  const entries = Object.entries(parts).filter(([, value]) => value !== undefined);
  const fileName = 'fileName' in parts && typeof parts.fileName === 'string' ? parts.fileName : 'file';
  for (const [key, value] of entries) if (!(value instanceof Blob)) form.append(key, String(value));
  for (const [key, value] of entries) if (value instanceof Blob) form.append(key, value, fileName);
  return form;
}
