import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import { auditTrailPdf } from '../../audit/audit-trail.js';
import { searchLogs } from '../../audit/search-logs.js';
import type { Deps } from '../../core/deps.js';
import { ScrollContexts } from '../../core/scroll.js';
import { actorOf } from '../authentication.js';
import { postBody } from '../route-shapes.js';
import { Bytes } from '../document-schemas.js';
import { DocumentId } from '../../core/documents/document-contract.js';
import { EXAMPLE_IDS } from '../../core/examples.js';
import { Success, withErrors } from '../schemas.js';
import { answerSuccess } from '../answers.js';
import { CloseScrollBody, LogsSearchBody } from '../../audit/contract.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const LogsAnswer = Type.Object(
  {
    total: Type.Integer(),
    results: Type.Array(
      Type.Object({
        id: Type.String(),
        time: Type.String(),
        activityType: Type.String(),
        actorId: Nullable(Type.String({ description: 'The actor’s login name.' })),
        objectType: Nullable(Type.String()),
        objectId: Nullable(Type.String()),
        requestId: Nullable(Type.String({ description: 'The request that made it (`x-request-id`).' })),
        data: Type.Object({}, { additionalProperties: true }),
        hash: Type.String({ description: 'The record’s hash, chained to the previous record’s.' }),
      }),
    ),
    scrollId: Type.Optional(Type.String()),
  },
  {
    examples: [
      {
        total: 10,
        results: [
          {
            id: '2f5b0a46-736f-4b40-8c1c-f7f810cc711d',
            time: '2026-03-01T08:05:12.000Z',
            activityType: 'documentSealed',
            actorId: 'ivy@example.com',
            objectType: 'document',
            objectId: EXAMPLE_IDS.documentId,
            requestId: EXAMPLE_IDS.requestId,
            data: {
              version: 5,
              file: EXAMPLE_IDS.signedFileId,
              levelAchieved: 'B-T',
              fellBack: false,
              onComplete: true,
            },
            hash: '5803a3c288bb32b94c38b207f2af21f60936048eb22b91d70e5db1d268ac0b24',
          },
        ],
        scrollId: 'k9Wd3Pq7Zt1Lx5Nb.1.Rt6Ym2Kp8Wx3Qz5Nv1Hc7Ja4',
      },
    ],
  },
);

/** The audit logs: searching them, closing a scroll, and one document’s audit trail. */
export function auditRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    postBody(app, deps, {
      path: '/logs/search',
      tag: 'audit',
      operationId: 'searchLogs',
      summary: 'Search the audit logs (right view_logs)',
      description:
        'Body `{logsQuery:{query:{filter:[{type, field, value}]}, size, from}, scroll:{timeout, id}}`. Filter `type` `term` (`field` activityType, actorId, objectType, objectId, requestId or id; `value`), `terms` (`values`), or `range` (`field` time; `gte`, `gt`, `lte`, `lt`). Newest first. `from` only in the first request (400 in a continuation); a continuation repeats the same query with the latest `scroll.id` and may change `size`. Answers `{total, results, scrollId}`; each record carries its chain `hash` (see `signery audit verify`). Scope, as for reports and events: an organization administrator sees the records of their organization (about its documents, folders, templates, users, files, webhooks, stamps and enums, whoever acted; about anything else, done by its members); global and super administrators see the tenant.',
      body: LogsSearchBody,
      answers: { 200: LogsAnswer },
      call: searchLogs,
    });

    app.get(
      '/documents/:documentId/audit',
      {
        schema: {
          tags: ['audit'],
          operationId: 'downloadAuditTrail',
          summary: 'Audit-trail PDF of one document',
          description:
            'application/pdf: the document’s events (time, actor, activity, detail and each record’s chain hash), its file revisions with SHA-256 and SHA-512, owner and state; sealed with the organisation key. For the owner and administrators (403 for others who see the document, 404 otherwise).',
          params: Type.Object({ documentId: DocumentId }),
          response: withErrors({ 200: Bytes('The audit-trail PDF.', 'application/pdf') }),
        },
      },
      async (request, reply) => {
        const pdf = await auditTrailPdf(deps, actorOf(request), request.params.documentId);
        return reply
          .type('application/pdf')
          .header('content-disposition', `attachment; filename="audit-${request.params.documentId}.pdf"`)
          .send(Buffer.from(pdf));
      },
    );

    app.delete(
      '/logs/scroll',
      {
        schema: {
          tags: ['audit'],
          operationId: 'closeLogScroll',
          summary: 'Close an audit-log scroll context',
          description: 'Body `{scrollId}`. Later continuations with its ids answer 404.',
          body: CloseScrollBody,
          response: withErrors({ 200: Success }),
        },
      },
      async (request) =>
        answerSuccess(new ScrollContexts(deps, 'logs').close(actorOf(request), request.body.scrollId)),
    );
  };
}
