import { readJson } from '../../store/db/json.js';
import type { FileRecord, FileRepair } from '../../store/files/file-store.js';

/** The File record of the spec and Contract (`file` object of upload answers). */
export interface FileView {
  id: string;
  /** Same value as `id`, for clients written against earlier releases (Contract). */
  hash: string;
  fileId: string;
  documentname: string;
  originalname: string;
  mimetype: string;
  size: number;
  checksum: string | null;
  pages?: number;
  createDate: string;
  /** A PDF repaired at upload: what was wrong, and the size and checksum of the bytes as they came. */
  repaired?: FileRepair;
}

export function fileView(file: FileRecord): FileView {
  const repaired = readJson<FileRepair | null>(file.repair, null);
  return {
    id: file.id,
    hash: file.id,
    fileId: file.id,
    documentname: file.name,
    originalname: file.name,
    mimetype: file.mimetype,
    size: Number(file.size),
    checksum: file.checksum,
    ...(file.pages !== null ? { pages: file.pages } : {}),
    createDate: file.created_at,
    ...(repaired ? { repaired } : {}),
  };
}
