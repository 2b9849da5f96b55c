import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { IdentityProviderFailed } from '../core/identity/identity-provider-failed.js';
import { OIDC_LOGIN_TTL_SECONDS } from '../core/identity/state-flow.js';
import type { AuthMode } from './authentication.js';
import { withErrors } from './schemas.js';

/**
 * What the two browser flows through an identity provider share: the users' sign-in (routes/oidc.ts)
 * and the recipients proving who they are (routes/share-oidc.ts). Each start sends the browser to the
 * provider with a binding cookie its callback must bring back (against login CSRF).
 */

export const ProviderParams = Type.Object({
  provider: Type.String({ minLength: 1, maxLength: 63, description: 'The provider’s `name`.' }),
});

export const Redirect = Type.Null({
  description: 'Redirect: the browser goes on to `Location`.',
  headers: { location: Type.String({ format: 'uri', description: 'Where the browser goes next.' }) },
});

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

type TypeBoxApp = Parameters<FastifyPluginAsyncTypebox>[0];

/** How one flow's start and callback routes differ: their words, who may start, and the use cases. */
export interface BrowserFlow<Answer> {
  /** Where the flow's routes live: `<path>/:provider` starts, `<path>/:provider/callback` finishes. */
  path: string;
  binding: BindingCookie;
  tags: string[];
  start: {
    auth: AuthMode;
    operationId: string;
    summary: string;
    description: string;
    /** Error answers beyond the usual ones and 502. */
    errors?: Record<number, TSchema>;
    begin(
      request: FastifyRequest,
      choice: { provider: string; redirect: string | undefined },
    ): Promise<{ binding: string; authorizationUrl: string }>;
  };
  callback: {
    operationId: string;
    summary: string;
    description: string;
    /** The JSON answer when the start asked for no `redirect`. */
    answer: TSchema;
    finish(
      request: FastifyRequest,
      callback: { provider: string; query: URLSearchParams; binding: string | undefined },
    ): Promise<{ redirect: string | null; fragment: Record<string, string>; answer: Answer }>;
  };
}

/**
 * The start and callback routes of a browser flow through an identity provider: the start sends the
 * browser to the provider with the binding cookie, the callback checks it and answers the result
 * (JSON, or a redirect with the result in the fragment). A provider the flow cannot reach is 502.
 */
export function registerBrowserFlow<Answer>(app: TypeBoxApp, flow: BrowserFlow<Answer>): void {
  const { binding, tags, start, callback } = flow;
  app.get(
    `${flow.path}/:provider`,
    {
      config: { auth: start.auth },
      schema: {
        tags,
        operationId: start.operationId,
        summary: start.summary,
        description: start.description,
        params: ProviderParams,
        querystring: StartQuery,
        response: withErrors({ 302: Redirect, ...start.errors, 502: Type.Ref('ErrorBody') }),
      },
    },
    async (request, reply) => {
      const started = await start.begin(request, {
        provider: request.params.provider,
        redirect: request.query.redirect,
      });
      return binding.redirectToProvider(reply, started);
    },
  );

  app.get(
    `${flow.path}/:provider/callback`,
    {
      config: { auth: 'none' },
      schema: {
        tags,
        operationId: callback.operationId,
        summary: callback.summary,
        description: callback.description,
        params: ProviderParams,
        querystring: CallbackQuery,
        response: withErrors({ 200: callback.answer, 302: Redirect, 502: Type.Ref('ErrorBody') }),
      },
    },
    async (request, reply) => {
      const finished = await callback.finish(request, {
        provider: request.params.provider,
        query: rawCallbackQuery(request),
        binding: binding.read(request),
      });
      return binding.finish(reply, finished);
    },
  );
}
