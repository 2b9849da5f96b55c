import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { IdentityProviderFailed } from '../core/identity/identity-provider-failed.js';
import { OIDC_LOGIN_TTL_SECONDS } from '../core/identity/state-flow.js';

/**
 * What the two browser flows through an identity provider share: the users' sign-in (routes/oidc.ts)
 * and the recipients proving who they are (routes/share-oidc.ts). Each start sends the browser to the
 * provider with a binding cookie its callback must bring back (against login CSRF).
 */

export const ProviderParams = Type.Object({
  provider: Type.String({ minLength: 1, maxLength: 63, description: 'The provider’s `name`.' }),
});

export const Redirect = Type.Null({ description: 'Redirect: see `Location`.' });

/** A start's query: where the browser goes once the flow is done (checked by the flow's use case). */
export const StartQuery = Type.Object(
  { redirect: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })) },
  { additionalProperties: false },
);

/** A provider's callback query. Providers add parameters of their own (`session_state`, `scope`, ...). */
export const CallbackQuery = Type.Object(
  {
    state: Type.Optional(Type.String({ maxLength: 500 })),
    code: Type.Optional(Type.String({ maxLength: 4000 })),
    iss: Type.Optional(Type.String({ maxLength: 2000 })),
    error: Type.Optional(Type.String({ maxLength: 200 })),
    error_description: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: true },
);

/** The callback's query exactly as received: openid-client validates it (iss among others), not our parse. */
export function rawCallbackQuery(request: FastifyRequest): URLSearchParams {
  return new URLSearchParams(request.raw.url?.split('?')[1] ?? '');
}

/** The cookie that ties a callback to the browser that started the flow, scoped to the flow's path. */
export class BindingCookie {
  readonly #name: string;
  readonly #path: string;
  readonly #secure: boolean;

  constructor(name: string, path: string, publicUrl: string) {
    this.#name = name;
    this.#path = path;
    this.#secure = publicUrl.startsWith('https://');
  }

  /** Sets the cookie and sends the browser to the provider. */
  redirectToProvider(
    reply: FastifyReply,
    started: { binding: string; authorizationUrl: string },
  ): FastifyReply {
    void reply.setCookie(this.#name, started.binding, {
      httpOnly: true,
      // Lax: sent on the provider's top-level redirect back to us, not on cross-site subrequests.
      sameSite: 'lax',
      secure: this.#secure,
      path: this.#path,
      maxAge: OIDC_LOGIN_TTL_SECONDS,
    });
    void reply.header('cache-control', 'no-store');
    return reply.redirect(started.authorizationUrl, 302);
  }

  /** The binding the browser brought back. */
  read(request: FastifyRequest): string | undefined {
    return request.cookies[this.#name];
  }

  /**
   * Once the callback ran: the binding is used up and the answer is never cached. When the start
   * asked for a `redirect`, the browser goes there with the result in the fragment (which browsers
   * never send on); otherwise the result is answered as JSON.
   */
  finish<T>(
    reply: FastifyReply,
    finished: { redirect: string | null; fragment: Record<string, string>; answer: T },
  ): T | FastifyReply {
    void reply.clearCookie(this.#name, { path: this.#path });
    void reply.header('cache-control', 'no-store');
    if (!finished.redirect) return finished.answer;
    const fragment = new URLSearchParams(finished.fragment);
    return reply.redirect(`${finished.redirect}#${fragment.toString()}`, 302);
  }
}

/** Operators need to know why a provider failed; the caller only learns that it did. */
export function logProviderFailures(app: FastifyInstance): void {
  app.addHook('onError', async (request, _reply, error) => {
    if (!(error instanceof IdentityProviderFailed)) return;
    request.log.warn(
      { provider: (request.params as { provider?: string }).provider, reason: describe(error.cause) },
      'identity provider failed',
    );
  });
}

/** A provider failure for the log: error names and messages only, never a body, code or token. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const detail = 'error' in error && typeof error.error === 'string' ? ` (${error.error})` : '';
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.name}: ${error.message}${detail}${cause}`;
}
