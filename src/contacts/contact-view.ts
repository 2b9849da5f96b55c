import type { Selectable } from 'kysely';
import type { ContactTable } from '../store/db/schema.js';

export type ContactRow = Selectable<ContactTable>;

/** A contact as the API shows it (spec: Other resources; the shape is ours, DESIGN Contract). */
export interface ContactView {
  id: string;
  name: string;
  email: string | null;
  phone: string | null;
  organisation: string | null;
  /** File id of the photo (a POST /files/photo upload), or null. */
  photo: string | null;
  createDate: string;
  modifyDate: string;
  _version: number;
}

export function contactView(row: ContactRow): ContactView {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    organisation: row.organisation,
    photo: row.photo,
    createDate: row.created_at,
    modifyDate: row.updated_at,
    _version: row.version,
  };
}
