import type { Kysely } from 'kysely';
import { PDF, StandardFonts } from '@libpdf/core';
import type { DocumentRow } from '../access/document-access.js';
import { chainedFieldsOf } from './chain.js';
import type { Database } from '../../store/db/schema.js';

/** The version of the audit trail's JSON that a document carries (`signery verify` reads it). */
export const TRAIL_FORMAT = 'signery-audit-trail/1';

/** One audit record of the document, with what its chain hash covers and the hash itself. */
export interface TrailEvent {
  id: string;
  occurredAt: string;
  activityType: string;
  actorId: string | null;
  objectType: string | null;
  objectId: string | null;
  requestId: string | null;
  data: unknown;
  /** The hash of the tenant's record before this one (not necessarily one of this document's). */
  prevHash: string;
  hash: string;
}

/** One kept version of the document's main file. */
export interface TrailRevision {
  revision: number;
  reason: string;
  actor: string | null;
  createdAt: string;
  size: number;
  sha256: string;
  sha512: string | null;
}

/**
 * A document's audit trail as it travels with the document (issue 27): its events in chain order
 * with their hashes, its file revisions with their digests, and the tenant chain's head when the
 * trail was made (the anchor a server can later show the trail belongs to). Checkable offline: each
 * event's hash is recomputed from its fields and `prevHash` (core/audit/chain.ts), each revision's
 * SHA-256 is compared with the revisions of the PDF that carries it.
 */
export interface DocumentTrail {
  format: typeof TRAIL_FORMAT;
  generatedAt: string;
  tenantId: string;
  document: {
    id: string;
    title: string;
    owner: string;
    createdBy: string;
    createdAt: string;
    version: number;
    state: string | null;
  };
  anchor: { hash: string; records: number };
  revisions: TrailRevision[];
  events: TrailEvent[];
}

/**
 * Reads a document's trail: its audit records (every record whose object is the document), its
 * revisions and the tenant chain's head. The caller has checked who may read it.
 *
 * ```ts
 * const trail = await documentTrail(deps.db, doc, deps.clock.now());
 * ```
 */
export async function documentTrail(
  db: Kysely<Database>,
  doc: DocumentRow,
  now: Date,
): Promise<DocumentTrail> {
  const [events, revisions, owner, creator, head] = await Promise.all([
    db
      .selectFrom('audit_log')
      .selectAll()
      .where('tenant_id', '=', doc.tenant_id)
      .where('object_id', '=', doc.id)
      .orderBy('seq')
      .execute(),
    db
      .selectFrom('document_revisions')
      .innerJoin('files', 'files.id', 'document_revisions.file_id')
      .select([
        'document_revisions.revision',
        'document_revisions.reason',
        'document_revisions.actor_id',
        'document_revisions.created_at',
        'files.sha256',
        'files.checksum',
        'files.size',
      ])
      .where('document_revisions.document_id', '=', doc.id)
      .orderBy('document_revisions.revision')
      .execute(),
    db.selectFrom('users').select(['name']).where('id', '=', doc.owner_id).executeTakeFirst(),
    db.selectFrom('users').select(['name']).where('id', '=', doc.created_by).executeTakeFirst(),
    db
      .selectFrom('audit_heads')
      .select(['last_hash', 'records'])
      .where('tenant_id', '=', doc.tenant_id)
      .executeTakeFirst(),
  ]);
  return {
    format: TRAIL_FORMAT,
    generatedAt: now.toISOString(),
    tenantId: doc.tenant_id,
    document: {
      id: doc.id,
      title: doc.title,
      owner: owner?.name ?? doc.owner_id,
      createdBy: creator?.name ?? doc.created_by,
      createdAt: iso(doc.created_at),
      version: doc.version,
      state: doc.share_state,
    },
    anchor: { hash: head?.last_hash ?? '', records: Number(head?.records ?? 0) },
    revisions: revisions.map((r) => ({
      revision: Number(r.revision),
      reason: r.reason,
      actor: r.actor_id,
      createdAt: iso(r.created_at),
      size: Number(r.size),
      sha256: r.sha256,
      sha512: r.checksum,
    })),
    events: events.map((e) => {
      const fields = chainedFieldsOf(e);
      return {
        id: fields.id,
        occurredAt: fields.occurredAt,
        activityType: fields.activityType,
        actorId: fields.actorId,
        objectType: fields.objectType,
        objectId: fields.objectId,
        requestId: fields.requestId,
        data: fields.data,
        prevHash: e.prev_hash,
        hash: e.hash,
      };
    }),
  };
}

const PAGE = { width: 595, height: 842, margin: 48 };
const LINE = 12;
const SIZE = 8.5;
/** Characters per line at SIZE in Helvetica within the margins (conservative). */
const WRAP = 118;

/**
 * The trail as pages people read: the document, its file revisions with their SHA-256 and SHA-512,
 * and its events (time, activity, actor, detail, record id and chain hash), oldest first.
 *
 * ```ts
 * const pdf = await trailPages(trail, `Generated by ${actor.name}`);
 * ```
 */
export async function trailPages(trail: DocumentTrail, generatedBy: string): Promise<Uint8Array> {
  const { document: doc, revisions, events } = trail;
  const lines: { text: string; bold?: boolean }[] = [];
  const add = (text: string, bold = false) => {
    for (const part of wrap(text)) lines.push({ text: part, bold });
  };
  add('Audit trail', true);
  add(`Document: ${doc.title}`);
  add(`Document id: ${doc.id}`);
  add(`Owner: ${doc.owner}    Created by: ${doc.createdBy}`);
  add(`Created: ${doc.createdAt}    Version: ${doc.version}    State: ${doc.state ?? 'not shared'}`);
  add(`Generated: ${trail.generatedAt} by ${generatedBy}`);
  add('');
  add(`File revisions (${revisions.length})`, true);
  for (const r of revisions) {
    add(`#${r.revision}  ${r.createdAt}  ${r.reason}  by ${r.actor ?? '-'}  ${r.size} bytes`);
    add(`    SHA-256 ${r.sha256}`);
    if (r.sha512) add(`    SHA-512 ${r.sha512}`);
  }
  add('');
  add(`Events (${events.length}), oldest first; each hash chains to the tenant's previous record`, true);
  for (const e of events) {
    add(`${e.occurredAt}  ${e.activityType}  by ${e.actorId ?? '-'}`);
    const detail = JSON.stringify(e.data ?? {});
    if (detail !== '{}') add(`    ${detail}`);
    add(`    record ${e.id}  hash ${e.hash}`);
  }
  if (trail.anchor.hash) add(`Tenant chain head: ${trail.anchor.hash} after ${trail.anchor.records} records`);

  const pdf = PDF.create();
  pdf.setTitle(`Audit trail: ${doc.title}`);
  pdf.setAuthor('Signery');
  const perPage = Math.floor((PAGE.height - 2 * PAGE.margin) / LINE);
  const pages = Math.max(1, Math.ceil(lines.length / perPage));
  for (let p = 0; p < pages; p++) {
    const page = pdf.addPage({ width: PAGE.width, height: PAGE.height });
    lines.slice(p * perPage, (p + 1) * perPage).forEach((line, i) => {
      if (!line.text) return;
      page.drawText(line.text, {
        x: PAGE.margin,
        y: PAGE.height - PAGE.margin - (i + 1) * LINE,
        size: line.bold ? SIZE + 1.5 : SIZE,
        font: line.bold ? StandardFonts.HelveticaBold : StandardFonts.Helvetica,
      });
    });
    page.drawText(`${doc.id}  page ${p + 1} of ${pages}`, {
      x: PAGE.margin,
      y: PAGE.margin / 2,
      size: 7,
      font: StandardFonts.Helvetica,
    });
  }
  return pdf.save();
}

function iso(value: string): string {
  return new Date(value).toISOString();
}

/** Hard-wraps a line for a fixed-width budget, breaking at spaces where it can. */
function wrap(text: string): string[] {
  // Helvetica covers WinAnsi only: anything else is shown as '?'.
  const safe = text.replace(/[^\x20-\x7e\u00a0-\u00ff]/g, '?');
  if (safe.length <= WRAP) return [safe];
  const parts: string[] = [];
  let rest = safe;
  while (rest.length > WRAP) {
    const cut = rest.lastIndexOf(' ', WRAP);
    const at = cut > WRAP / 2 ? cut : WRAP;
    parts.push(rest.slice(0, at));
    rest = `    ${rest.slice(at).trimStart()}`;
  }
  parts.push(rest);
  return parts;
}
