import { createHash } from 'node:crypto';
import type { TenantProperties } from '../settings/properties.js';

/**
 * The electronic-signature consent statement a recipient accepts before signing (DESIGN "Decided this
 * round": "the signer accepts an electronic-signature consent statement; the acceptance is an audit
 * record with activity `consentAccepted`"). A tenant words it per language (`consentStatements`);
 * a language it left out reads the built-in text. Kept on the server, not in the page, because the
 * audit record names the statement by its SHA-256: the text hashed must be the text shown.
 *
 * ```ts
 * const consent = consentStatement(properties, share.language); // { text, language, sha256 }
 * ```
 */

/** The built-in statements, one per language the signer page speaks (web/src/i18n.ts). */
export const DEFAULT_CONSENT_STATEMENTS: Readonly<Record<string, string>> = {
  en: 'I agree to sign this document electronically. My electronic signature is as binding as my handwritten signature, and I agree to receive the documents of this transaction electronically.',
  de: 'Ich bin damit einverstanden, dieses Dokument elektronisch zu unterschreiben. Meine elektronische Unterschrift ist so verbindlich wie meine handschriftliche Unterschrift, und ich bin damit einverstanden, die Dokumente dieses Vorgangs elektronisch zu erhalten.',
  fr: 'J’accepte de signer ce document par voie électronique. Ma signature électronique m’engage autant que ma signature manuscrite, et j’accepte de recevoir les documents de cette transaction par voie électronique.',
};

export interface ConsentStatement {
  text: string;
  /** The language the statement is in: the share's, when a statement exists for it, else English. */
  language: string;
  /** SHA-256 (hex) of the text's UTF-8 bytes: what the audit record names. */
  sha256: string;
}

/** The statement in force for a share's language (the tenant's wording, else the built-in one). */
export function consentStatement(
  properties: Pick<TenantProperties, 'consentStatements'>,
  language: string | undefined,
): ConsentStatement {
  const own = properties.consentStatements ?? {};
  const wanted = language?.toLowerCase().slice(0, 2);
  const chosen =
    wanted && (typeof own[wanted] === 'string' || wanted in DEFAULT_CONSENT_STATEMENTS) ? wanted : 'en';
  const text = own[chosen] ?? DEFAULT_CONSENT_STATEMENTS[chosen] ?? DEFAULT_CONSENT_STATEMENTS.en!;
  return { text, language: chosen, sha256: createHash('sha256').update(text, 'utf8').digest('hex') };
}
