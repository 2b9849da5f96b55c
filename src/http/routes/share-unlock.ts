import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { sendShareCode, unlockShare } from '../../sharing/protect-share.js';
import { Unauthenticated } from '../../base/errors.js';
import { EXAMPLE_IDS } from '../../core/examples.js';
import { ShareCodeBody, UnlockBody } from '../../sharing/contract.js';
import { withErrors } from '../schemas.js';

/** Unlocking a protected share: the one-time code and the unlock. */
export function shareUnlockRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/share/otp',
      {
        config: { auth: 'recipient-locked', signedCopies: true },
        schema: {
          tags: ['sharing'],
          operationId: 'sendOneTimeCode',
          summary: 'Send a one-time code (external recipients)',
          description:
            'By SMS when the share has a phone, else by e-mail (`channel` to choose). Valid 10 minutes. A share that is not protected by a code (a password only, or nothing) answers 400: a code could not unlock it. Also once the recipient acted, for RECIPIENT_DOWNLOAD_DAYS: the code unlocks the download of what they signed.',
          body: ShareCodeBody,
          response: withErrors({
            200: Type.Object(
              {
                status: Type.Literal('SUCCESS'),
                channel: Type.Enum(['sms', 'email'], { description: 'Where the code went.' }),
              },
              { examples: [{ status: 'SUCCESS', channel: 'email' }] },
            ),
          }),
        },
      },
      async (request) => {
        if (!request.recipient) throw new Unauthenticated('Send the share-link token');
        return {
          status: 'SUCCESS' as const,
          ...(await sendShareCode(deps, request.recipient, request.body ?? {})),
        };
      },
    );

    app.post(
      '/share/unlock',
      {
        config: { auth: 'recipient-locked', signedCopies: true },
        schema: {
          tags: ['sharing'],
          operationId: 'unlockShare',
          summary: 'Unlock a protected share (external recipients)',
          description: [
            '`{password}` and/or `{otp}` as the share requires, with the share-link token. Answers `{status:"SUCCESS", token}`: `token` is a recipient session, bound to this unlock, accepted wherever the link token is (every recipient endpoint, the document’s files through /files/loadFile/hash, share uploads) and valid RECIPIENT_SESSION_MINUTES (default 60) after its last use; it ends with the share (rejected, cancelled, expired, delegated, deleted: 401, as the link does) or when the sharer changes its protections (401 afterwards: open the link again). Once the recipient acted it only downloads what they signed (GET /share/signed, for RECIPIENT_DOWNLOAD_DAYS; 403 elsewhere). The link itself stays locked (403 MFA_REQUIRED) for everyone who holds it, so a forwarded mail opens nothing; keep the session for the browser tab only.',
            '5 wrong attempts lock the share for LOGIN_WINDOW_SECONDS (429 RATE_LIMITED with Retry-After), counted with refused identity-provider sign-ins; each attempt is counted before its password or code is checked, so parallel attempts count too. A code works once, even for parallel requests. A share with `allowedOAuths` is unlocked by proving the recipient’s identity with one of them (GET /share/oidc, GET /share/oidc/{provider}), which gives a session of its own; until then this call answers 403 MFA_REQUIRED. When such a share also has a password or code, call this with that session’s token: it answers a new session that passed them all. Once the recipient acted (signed, approved, …), for RECIPIENT_DOWNLOAD_DAYS, unlocking again (the password, a new code) answers a session that only downloads what they signed (GET /share/signed); a share that is over otherwise: 401 (the link no longer opens it).',
          ].join('\n\n'),
          body: UnlockBody,
          response: withErrors({
            200: Type.Object(
              {
                status: Type.Literal('SUCCESS'),
                token: Type.String({
                  description: 'The recipient session: send it as `token` instead of the link from now on.',
                }),
              },
              { examples: [{ status: 'SUCCESS', token: EXAMPLE_IDS.recipientSession }] },
            ),
            409: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) => {
        if (!request.recipient) throw new Unauthenticated('Send the share-link token');
        return { status: 'SUCCESS' as const, ...(await unlockShare(deps, request.recipient, request.body)) };
      },
    );
  };
}
