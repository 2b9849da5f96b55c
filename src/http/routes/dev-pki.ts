import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../core/deps.js';
import type { DevCa } from '../../pki/dev-ca.js';
import { NotFound, ValidationError } from '../../base/errors.js';

// An OCSP request names a few certificates; anything larger is not one.
const MAX_OCSP_REQUEST = 16 * 1024;

/**
 * What the development CA publishes under PUBLIC_URL, as its seal certificate names it (issue 23): its
 * CRL at `/pki/dev-ca.crl` and its OCSP responder at `/pki/ocsp` (RFC 6960: POST with an
 * `application/ocsp-request` body, or GET with the request base64 in the path). No token: revocation
 * data is public. With a configured seal key (SEAL_P12, SEAL_PKCS11_*) there is no dev CA: 404.
 */
export function devPkiRoutes(deps: Deps) {
  return async (app: FastifyInstance) => {
    const devCa = async (): Promise<DevCa> => {
      const { devCa } = await deps.seal();
      if (!devCa) throw new NotFound('No development CA: the seal key is configured');
      return devCa;
    };
    app.addContentTypeParser(
      'application/ocsp-request',
      { parseAs: 'buffer', bodyLimit: MAX_OCSP_REQUEST },
      (_request, body, done) => done(null, body),
    );
    const route = { config: { auth: 'none' as const }, schema: { hide: true } };

    app.get('/pki/dev-ca.crl', route, async (_request, reply) => {
      const crl = await (await devCa()).issueCrl({ now: deps.clock.now() });
      return reply
        .header('content-type', 'application/pkix-crl')
        .header('cache-control', 'max-age=3600')
        .send(Buffer.from(crl));
    });

    const answer = async (request: Uint8Array) =>
      Buffer.from(await (await devCa()).answerOcsp(request, deps.clock.now()));
    app.post('/pki/ocsp', route, async (request, reply) => {
      if (!Buffer.isBuffer(request.body))
        throw new ValidationError('An OCSP request is sent as application/ocsp-request');
      return reply.header('content-type', 'application/ocsp-response').send(await answer(request.body));
    });
    app.get<{ Params: { '*': string } }>('/pki/ocsp/*', route, async (request, reply) => {
      const encoded = decodeURIComponent(request.params['*']);
      return reply
        .header('content-type', 'application/ocsp-response')
        .send(await answer(new Uint8Array(Buffer.from(encoded, 'base64'))));
    });
  };
}
