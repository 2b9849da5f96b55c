import { isDone, type Field } from './fields.js';

/**
 * What a signer filled in so far, kept for the tab (issue 40: "progress 5 of 8 went back to 2 of 8
 * after a reload"): the values typed, the choices, the boxes checked, and the signatures, initials,
 * stamps and images given (their upload ids, and the picture itself when small enough to show again).
 * In sessionStorage only, so it lasts as long as the tab and no longer; never in localStorage, cookies
 * or IndexedDB. It is filed under the share (or the document, for internal users) and the PDF the
 * fields were filled on: once the document's PDF changed, what was kept belongs to another document.
 * (Its `_version` is no key: attaching a requested file raises it without changing the PDF.) Cleared
 * when the signer signs, rejects or passes the request on.
 */

const PREFIX = 'signery.progress.';
/** A picture larger than this (as a data URL) is not kept: the field then shows its state in words. */
const MAX_PICTURE = 400_000;

/** One field's answer, by the field's id on the page. */
interface KeptField {
  text?: string;
  fileId?: string;
  fileName?: string;
  picture?: string;
}

export interface KeptProgress {
  fields: Record<string, KeptField>;
}

export class ProgressStore {
  readonly #key: string;

  /** `owner`: the share id (or the document id); `pdf`: the id of the PDF the fields are on. */
  constructor(owner: string, pdf: string) {
    this.#key = `${PREFIX}${owner}.${pdf}`;
  }

  /**
   * Puts what was kept back on the fields, and each kept picture in `pictures` (by its upload id);
   * true when anything was.
   */
  restore(fields: Field[], pictures: Map<string, string>): boolean {
    let kept: KeptProgress | undefined;
    try {
      kept = JSON.parse(sessionStorage.getItem(this.#key) ?? 'null') as KeptProgress | undefined;
    } catch {
      return false;
    }
    if (!kept?.fields) return false;
    let any = false;
    for (const field of fields) {
      const answer = kept.fields[field.id];
      if (!answer) continue;
      if (typeof answer.text === 'string') field.text = answer.text;
      if (typeof answer.fileId === 'string') field.fileId = answer.fileId;
      if (typeof answer.fileName === 'string') field.fileName = answer.fileName;
      const picture = typeof answer.picture === 'string' ? blobUrlOf(answer.picture) : undefined;
      if (picture) field.previewUrl = picture;
      if (picture && answer.fileId && answer.picture) pictures.set(answer.fileId, answer.picture);
      any = true;
    }
    return any;
  }

  /** Keeps the fields' answers (a field's picture as the data URL `pictures` has for its upload). */
  save(fields: Field[], pictures: ReadonlyMap<string, string>): void {
    const kept: KeptProgress = { fields: {} };
    for (const field of fields) {
      if (!isDone(field) && field.text === undefined) continue;
      const answer: KeptField = {};
      if (field.text !== undefined) answer.text = field.text;
      if (field.fileId !== undefined) answer.fileId = field.fileId;
      if (field.fileName !== undefined) answer.fileName = field.fileName;
      const picture = field.fileId ? pictures.get(field.fileId) : undefined;
      if (picture && picture.length <= MAX_PICTURE) answer.picture = picture;
      kept.fields[field.id] = answer;
    }
    try {
      sessionStorage.setItem(this.#key, JSON.stringify(kept));
    } catch {
      // No storage, or full: the progress lives on the page only.
    }
  }

  /** Forgets what was kept (the signer is done with the request). */
  clear(): void {
    try {
      sessionStorage.removeItem(this.#key);
    } catch {
      // No storage: nothing was kept.
    }
  }
}

/** A picture as a data URL, to keep it with the progress. */
export function dataUrlOf(blob: Blob): Promise<string | undefined> {
  return new Promise((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(typeof reader.result === 'string' ? reader.result : undefined);
    reader.onerror = () => resolve(undefined);
    reader.readAsDataURL(blob);
  });
}

/** A kept picture shown again: the page's policy allows `blob:` images, not `data:` ones. */
function blobUrlOf(dataUrl: string): string | undefined {
  const match = /^data:(image\/(?:png|jpeg));base64,([A-Za-z0-9+/=]+)$/.exec(dataUrl);
  if (!match) return undefined;
  try {
    const bytes = Uint8Array.from(atob(match[2] ?? ''), (c) => c.charCodeAt(0));
    return URL.createObjectURL(new Blob([bytes], { type: match[1] }));
  } catch {
    return undefined;
  }
}
