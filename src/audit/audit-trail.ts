import { PDF, StandardFonts } from '@libpdf/core';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadManageable } from '../core/access/document-access.js';
import { defaultLevel, sealBytes } from '../core/signing/seal.js';
import { readJson } from '../store/db/json.js';

const PAGE = { width: 595, height: 842, margin: 48 };
const LINE = 12;
const SIZE = 8.5;
/** Characters per line at SIZE in Helvetica within the margins (conservative). */
const WRAP = 118;

/**
 * GET /documents/:id/audit: an audit-trail PDF for one document — its events (time, actor, activity,
 * detail, chain hash), its file revisions with their SHA-256 and SHA-512, and who holds it — sealed
 * with the organisation key so the trail itself is tamper-evident (pdfsig validates it). For the
 * owner and administrators of the document (others who see it: 403; everyone else: 404).
 */
export async function auditTrailPdf(deps: Deps, actor: Actor, documentId: string): Promise<Uint8Array> {
  const doc = await loadManageable(deps.db, actor, documentId);
  const [events, revisions, owner, creator] = await Promise.all([
    deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('tenant_id', '=', doc.tenant_id)
      .where('object_id', '=', doc.id)
      .orderBy('seq')
      .execute(),
    deps.db
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
    deps.db.selectFrom('users').select(['name']).where('id', '=', doc.owner_id).executeTakeFirst(),
    deps.db.selectFrom('users').select(['name']).where('id', '=', doc.created_by).executeTakeFirst(),
  ]);
  const now = deps.clock.now();

  const lines: { text: string; bold?: boolean }[] = [];
  const add = (text: string, bold = false) => {
    for (const part of wrap(text)) lines.push({ text: part, bold });
  };
  add('Audit trail', true);
  add(`Document: ${doc.title}`);
  add(`Document id: ${doc.id}`);
  add(`Owner: ${owner?.name ?? doc.owner_id}    Created by: ${creator?.name ?? doc.created_by}`);
  add(
    `Created: ${iso(doc.created_at)}    Version: ${doc.version}    State: ${doc.share_state ?? 'not shared'}`,
  );
  add(`Generated: ${now.toISOString()} by ${actor.name}`);
  add('');
  add(`File revisions (${revisions.length})`, true);
  for (const r of revisions) {
    add(`#${r.revision}  ${iso(r.created_at)}  ${r.reason}  by ${r.actor_id ?? '-'}  ${r.size} bytes`);
    add(`    SHA-256 ${r.sha256}`);
    if (r.checksum) add(`    SHA-512 ${r.checksum}`);
  }
  add('');
  add(`Events (${events.length}), oldest first; each hash chains to the tenant's previous record`, true);
  for (const e of events) {
    add(`${iso(e.occurred_at)}  ${e.activity_type}  by ${e.actor_id ?? '-'}`);
    const detail = JSON.stringify(readJson<Record<string, unknown>>(e.data, {}));
    if (detail !== '{}') add(`    ${detail}`);
    add(`    record ${e.id}  hash ${e.hash}`);
  }

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
  const sealed = await sealBytes(deps, {
    operation: 'seal',
    pdf: await pdf.save(),
    signerName: 'Signery audit trail',
    level: defaultLevel(deps),
    reason: `Audit trail of document ${doc.id}`,
  });
  return sealed.pdf;
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
