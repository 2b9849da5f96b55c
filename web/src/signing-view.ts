import { ApiFailure, NetworkFailure, type Api, type DocumentView, type ShareView } from './api.js';
import { formDialog, signatureDialog } from './dialogs.js';
import { answerOf, pictureForm, valueForm } from './field-forms.js';
import { announce, append, focusHeading, h, messageBox } from './dom.js';
import {
  clampPosition,
  fieldsFromShare,
  initialsOnEveryPage,
  isDone,
  isValueKind,
  PICTURE_KINDS,
  placedSignature,
  shownAnswer,
  signBody,
  stampedTexts,
  type Field,
  type FieldKind,
} from './fields.js';
import { t, type MessageKey } from './i18n.js';
import type { PdfViewer } from './pdf-viewer.js';
import { dataUrlOf, ProgressStore } from './progress-store.js';
import { ReadableMode, type ReadableField } from './readable-text.js';
import { loadViewer } from './viewer-code.js';
import { notifyEmbedder } from './notify-embedder.js';

const SIMPLE_ACTIONS = ['approve', 'review', 'accept', 'execute'];
/** A field on the page: a button opening its dialog, or a checkbox. */
type FieldControl = HTMLButtonElement | HTMLInputElement;
/** The share's own statuses that end the recipient's part, with what the page says about each. */
const SHARE_ENDED: Record<string, [MessageKey, MessageKey]> = {
  done: ['share.done', 'share.doneBody'],
  delegated: ['share.delegated', 'share.delegatedBody'],
  notRequired: ['share.notRequired', 'share.notRequiredBody'],
};
const TERMINAL = ['completed', 'cancelled', 'expired', 'rejected'];
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface DocumentContext {
  api: Api;
  /** Internal users name the document; a share link knows its own. */
  documentId?: string;
  /** The link or session stopped working (401). */
  onInvalid: () => void;
  /** Shown above the title (internal users: back to their pending documents). */
  back?: HTMLElement;
  /** The first page as the server drew it (an object URL), asked for beside the document. */
  preview?: Promise<string | undefined>;
}

/** The longest the viewer's code waits for the first page's image before it loads anyway. */
const PREVIEW_WAIT_MS = 3_000;

/** Set once pdf-viewer.js has loaded: later renders have no wait to fill. */
let viewerLoaded = false;

type Outcome = 'signed' | 'rejected' | 'delegated' | 'executed';

/** A user's message for a failed call: the server's own text for refusals, ours for the network. */
/**
 * What a person reads when something failed: plain words in their language. A request the server
 * found invalid says so without the server's validation text (written for integrators); a refusal
 * the server explains (a share that allows no delegation, a document no longer open) keeps its reason.
 */
export function describeError(error: unknown): string {
  if (error instanceof NetworkFailure) return t('error.network');
  if (error instanceof ApiFailure) {
    if (error.code === 'VALIDATION_ERROR' || error.code === 'FILE_NOT_USABLE') return t('error.invalid');
    if (error.code === 'VERSION_MISMATCH') return t('error.changed');
    if (error.status === 413) return t('error.tooLarge');
    if (error.status === 429) return t('error.tooMany');
    if (error.status >= 500) return t('error.busy');
    return t('error.generic', { message: error.message });
  }
  return t('error.generic', { message: error instanceof Error ? error.message : String(error) });
}

/**
 * The document page: read the PDF, fill in the recipient's fields in order, then sign, reject,
 * delegate or do the share's simple action; a clear notice for completed, cancelled, expired and
 * rejected documents, and the signed PDF to download once complete.
 */
export class SigningPage {
  readonly #main: HTMLElement;
  readonly #ctx: DocumentContext;
  #doc: DocumentView;
  #fields: Field[] = [];
  #fieldsFromShare: boolean;
  #initialsEverywhere = false;
  #images: Partial<Record<'signature' | 'initials', { fileId: string; url: string }>> = {};
  /** The pictures given (signatures, initials, stamps, images) as data URLs, by upload id: kept for reloads. */
  #pictures = new Map<string, string>();
  #progressStore: ProgressStore | undefined;
  /** The document's text reflowed, for phones (readable-text.ts). */
  readonly #readable = new ReadableMode(
    () => this.#viewer,
    () => this.#readableFields(),
  );
  /** Each field's controls, one per page it is on. */
  #buttons = new Map<string, FieldControl[]>();
  #visited = -1;
  #outcome: Outcome | undefined;
  /**
   * The document could not be read again after the outcome: a share link (or its session) only
   * downloads what its recipient signed once they acted (GET /share/signed), and nothing after a
   * rejection or a delegation.
   */
  #unreadAfterOutcome = false;
  /** After signing or acting by link: the download is the signed copy (GET /share/signed). */
  #signedCopyOnly = false;
  #delegatedTo = '';
  /** The sentence saying what the share asks, while it is to be done. */
  #ask: HTMLElement | undefined;
  #delegateRefused = false;
  #busy = false;
  #pdfBytes: ArrayBuffer | undefined;
  #pdfFileId: string | undefined;
  #viewer: PdfViewer | undefined;
  #notice!: HTMLElement;
  #progress!: HTMLElement;
  /** Under the scroll area: the progress, the action status and the actions; hidden with none. */
  #dock!: HTMLElement;
  #actions!: HTMLElement;
  /** Beside the action buttons: what an action is doing, or why it failed. */
  #actionStatus!: HTMLElement;
  /** Above the action buttons, once every required field is done: what is signed, and the consent. */
  #review!: HTMLElement;
  /** The consent statement's box was ticked (kept across renders; a new statement unticks it). */
  #consented = false;
  /** The read-only texts signing stamps, drawn on the pages (issue 40, 2). */
  #stamps: HTMLElement[] = [];
  #focusBeforeBusy: HTMLElement | undefined;

  constructor(main: HTMLElement, ctx: DocumentContext, doc: DocumentView) {
    this.#main = main;
    this.#ctx = ctx;
    this.#doc = doc;
    this.#fieldsFromShare = (doc.share?.signatureFields?.length ?? 0) > 0;
  }

  /** The caller's own share, as the last document answer had it (GET /share/document sends it). */
  get #share(): ShareView | undefined {
    return this.#doc.share;
  }

  /** What the share asks of the recipient; a document answer without its share asks nothing. */
  get #purpose(): string {
    return this.#share?.shareType ?? 'view';
  }

  get #documentId(): string {
    return this.#doc.documentId;
  }

  get #state(): string | undefined {
    return this.#doc.workflow.shareStateName;
  }

  get #canAct(): boolean {
    if (this.#outcome || this.#busy) return false;
    if (this.#state && TERMINAL.includes(this.#state)) return false;
    // Only the share whose turn it is acts (the server answers 409 to the others).
    if (this.#share?.status !== 'active') return false;
    return this.#purpose === 'sign' || SIMPLE_ACTIONS.includes(this.#purpose);
  }

  /**
   * What an approval (or a review, an acceptance, a task) asks of the reader, in words, while it is
   * theirs to do; a view share says there is nothing to do. Signing explains itself by its fields.
   */
  #asked(): string | undefined {
    if (this.#share && this.#purpose === 'view') return t('ask.view');
    if (!this.#canAct || !SIMPLE_ACTIONS.includes(this.#purpose)) return undefined;
    return t(`ask.${this.#purpose as 'approve' | 'review' | 'accept' | 'execute'}`);
  }

  get #signing(): boolean {
    return this.#canAct && this.#purpose === 'sign';
  }

  /**
   * Builds the page from the current state (also after a change of language). `focus` after a step
   * the user took: the title (unlocking, opening from the list), so keyboard users start there, or
   * the notice (an outcome). Focus moves before the PDF loads, never after: by then the user may have
   * moved on.
   */
  async render(focus: 'title' | 'notice' | undefined = undefined): Promise<void> {
    const title = h('h1', { class: 'doc-title', id: 'doc-title' }, this.#doc.documentTitle);
    const header = h(
      'header',
      { class: 'doc-header' },
      this.#ctx.back ?? null,
      title,
      h(
        'p',
        { class: 'doc-meta' },
        t('doc.from', {
          owner: this.#share?.sharedByDisplayName || this.#share?.sharedBy || this.#doc.owner,
        }),
      ),
    );
    if (this.#share?.delegatedBy)
      append(header, h('p', { class: 'doc-meta' }, t('doc.delegatedBy', { from: this.#share.delegatedBy })));
    const ask = this.#asked();
    this.#ask = ask ? h('p', { class: 'doc-ask' }, ask) : undefined;
    if (this.#ask) append(header, this.#ask);
    const verified = this.#share?.identityVerified;
    if (verified) {
      const provider =
        this.#share?.identityProviders?.find((p) => p.name === verified.provider)?.label ?? verified.provider;
      append(header, h('p', { class: 'doc-meta' }, t('doc.identity', { provider })));
    }
    if (this.#share?.privateMessage) {
      const id = 'sender-message';
      append(
        header,
        h(
          'aside',
          { class: 'sender-message', 'aria-labelledby': id },
          h('h2', { id, class: 'small-heading' }, t('doc.message')),
          h('p', {}, this.#share.privateMessage),
        ),
      );
    }
    this.#notice = h('div', { class: 'notice-area' });
    this.#actions = h('div', { class: 'action-bar', role: 'group', 'aria-label': t('action.group') });
    this.#actionStatus = h('div', { class: 'action-status' });
    this.#review = h('section', { class: 'review', 'aria-labelledby': 'review-title', hidden: true });
    this.#progress = h('p', { class: 'progress', 'aria-live': 'polite' });
    // Above the pages, scrolling with them: what the document is, and what happened to it.
    const lead = h('div', { class: 'doc-lead' }, header, this.#notice);
    this.#readable.reset();
    if (this.#doc.pdfFile) lead.append(h('div', { class: 'readable-bar' }, this.#readable.button));
    if (this.#signing && !this.#fieldsFromShare) lead.append(this.#placementPanel());
    // On a slow phone pdf.js takes seconds to arrive: meanwhile the title and the first page as the
    // server drew it (issue 25: "the first page visible within 2 s on a slow phone profile").
    const shown = this.#ctx.preview;
    const preview = this.#takePreview();
    if (preview && shown && !viewerLoaded) {
      const section = h('section', { class: 'viewer', 'aria-label': t('doc.document') });
      section.append(h('div', { class: 'viewer-scroll' }, lead, preview));
      section.dataset.state = 'loading';
      this.#main.replaceChildren(h('div', { class: 'doc-layout' }, section));
      this.#main.dataset.view = 'document';
      if (focus === 'title') focusHeading(title);
      // The viewer's code comes after the image (viewer-code.ts), which then has the connection alone;
      // an image slow to come (a server busy drawing) holds the viewer back no longer than this.
      await Promise.race([shown, new Promise((resolve) => setTimeout(resolve, PREVIEW_WAIT_MS))]);
    }
    // pdf.js is the bulk of the page's code: loaded only here, so unlocking and signing in start fast.
    const { PdfViewer } = await loadViewer();
    viewerLoaded = true;
    this.#viewer?.destroy();
    this.#buttons.clear();
    const viewer = new PdfViewer(lead, preview);
    this.#viewer = viewer;
    // Under the one scroll area, always in view: where the signer stands and their next step.
    this.#dock = h(
      'div',
      { class: 'action-dock' },
      h(
        'div',
        { class: 'dock-inner' },
        this.#review,
        this.#actionStatus,
        h('div', { class: 'dock-row' }, this.#progress, this.#actions),
      ),
    );
    const layout = h('div', { class: 'doc-layout' }, viewer.element, this.#dock);
    this.#main.replaceChildren(layout);
    this.#main.dataset.view = 'document';
    if (focus === 'title') focusHeading(title);
    this.#renderNotice(focus === 'notice');
    this.#renderActions();
    await this.#loadPdf();
  }

  /**
   * The first page as the server drew it, in the place the viewer's first page will take; on the
   * first render only (later ones have the PDF at hand). Removed when there is no such image.
   */
  #takePreview(): HTMLElement | undefined {
    const url = this.#ctx.preview;
    if (!url) return undefined;
    this.#ctx.preview = undefined;
    const image = h('img', { class: 'page-preview-image', alt: t('viewer.preview') });
    const box = h('div', { class: 'page-preview' }, image);
    void url.then(async (src) => {
      if (!src) return box.remove();
      // Too late: pdf.js has drawn the page already.
      if (!image.isConnected) return URL.revokeObjectURL(src);
      image.src = src;
      try {
        await image.decode();
        image.dataset.shown = 'true';
      } catch {
        box.remove();
      }
    });
    return box;
  }

  async #loadPdf(): Promise<void> {
    const viewer = this.#viewer;
    const fileId = this.#doc.pdfFile?.content;
    if (!viewer || !fileId) return;
    try {
      if (!this.#pdfBytes || this.#pdfFileId !== fileId) {
        this.#pdfBytes = await this.#ctx.api.file(fileId);
        this.#pdfFileId = fileId;
      }
      // pdf.js takes the buffer over: it gets a copy so the page can render again later.
      await viewer.load(this.#pdfBytes.slice(0));
    } catch (error) {
      const message =
        error instanceof NetworkFailure
          ? t('error.network')
          : error instanceof Error
            ? error.message
            : String(error);
      viewer.fail(messageBox('error', t('viewer.failed', { message })));
      return;
    }
    if (this.#fields.length === 0) {
      this.#fields = this.#initialFields(viewer.pageCount);
      if (this.#signing) this.#restoreProgress(fileId);
    }
    if (this.#signing) this.#placeFields();
    this.#updateProgress();
  }

  #initialFields(pageCount: number): Field[] {
    if (this.#fieldsFromShare) {
      // What the recipient submitted before (a reload, a second visit) shows on its field.
      const submitted = new Map((this.#doc.submittedFiles ?? []).map((f) => [f.field, f.documentname]));
      const fields = fieldsFromShare(this.#share?.signatureFields ?? [], pageCount, this.#share?.dateFormat);
      const shown = fields.map((field) => {
        const name = field.kind === 'file' && field.answerId ? submitted.get(field.answerId) : undefined;
        return name === undefined ? field : { ...field, fileName: name };
      });
      // Fields but none for the signature (text or file fields only): the signer places it, as the
      // server lets a signer place a mark they were given no field for (field-confinement.ts).
      const signs = this.#signing && !fields.some((field) => field.kind === 'signature');
      return signs ? [...shown, placedSignature(pageCount, this.#viewer?.signatures ?? [])] : shown;
    }
    return [placedSignature(pageCount, this.#viewer?.signatures ?? [])];
  }

  // --- progress kept for the tab (progress-store.ts) ---

  #restoreProgress(pdfFileId: string): void {
    this.#progressStore = new ProgressStore(this.#share?.shareId ?? this.#documentId, pdfFileId);
    if (!this.#progressStore.restore(this.#fields, this.#pictures)) return;
    // A signature or initials given before the reload fills the other such fields too, as it did.
    for (const field of this.#fields)
      if ((field.kind === 'signature' || field.kind === 'initials') && field.fileId && field.previewUrl)
        this.#images[field.kind] ??= { fileId: field.fileId, url: field.previewUrl };
  }

  /** The signer's fields as the readable text lists them, each a way back to itself on its page. */
  #readableFields(): ReadableField[] {
    if (!this.#signing) return [];
    return this.#fields.flatMap((field) =>
      field.pages.map((page, i) => {
        const state = isDone(field)
          ? t('field.done')
          : t(field.required ? 'field.required' : 'field.optional');
        // Named as the sharer named it (its tooltip), else by its kind.
        const label = t('readable.field', { name: field.tooltip ?? t(`field.${field.kind}`), state });
        return {
          page,
          top: field.position.percentY,
          label,
          jump: () =>
            void this.#readable.toggle(false).then(() => {
              const control = this.#buttons.get(field.id)?.[i];
              if (!control) return;
              this.#visited = this.#fields.indexOf(field);
              this.#viewer?.reveal(control);
              control.focus({ preventScroll: true });
            }),
        };
      }),
    );
  }

  #keepProgress(): void {
    this.#progressStore?.save(this.#fields, this.#pictures);
  }

  // --- fields ---

  /** Without fields from the share: where the signature goes, and initials on every page if wanted. */
  #placementPanel(): HTMLElement {
    const headingId = 'fields-title';
    const box = h('input', { type: 'checkbox', id: 'initials-everywhere' });
    box.checked = this.#initialsEverywhere;
    box.addEventListener('change', () => this.#toggleInitials(box.checked));
    return h(
      'section',
      { class: 'fields-panel', 'aria-labelledby': headingId },
      h('h2', { id: headingId, class: 'small-heading' }, t('fields.title')),
      h('p', { class: 'hint' }, t('fields.placeHint')),
      h('div', { class: 'checkbox' }, box, h('label', { for: box.id }, t('fields.initialsEverywhere'))),
    );
  }

  #toggleInitials(on: boolean): void {
    this.#initialsEverywhere = on;
    const pageCount = this.#viewer?.pageCount ?? 1;
    this.#fields = this.#fields.filter((f) => f.id !== 'placed-initials');
    if (on) {
      const initials = initialsOnEveryPage(pageCount);
      const image = this.#images.initials;
      if (image) Object.assign(initials, { fileId: image.fileId, previewUrl: image.url });
      this.#fields.push(initials);
    }
    this.#placeFields();
    this.#updateProgress();
  }

  #placeFields(): void {
    const viewer = this.#viewer;
    if (!viewer) return;
    for (const controls of this.#buttons.values())
      for (const c of controls) (c.closest('.field-check') ?? c).remove();
    this.#buttons.clear();
    this.#placeStampedTexts();
    // DOM order is visiting order, so Tab goes through the fields in order too.
    for (const field of this.#fields) {
      const controls: FieldControl[] = [];
      for (const page of field.pages) {
        const overlay = viewer.overlay(page);
        if (!overlay) continue;
        const control = field.kind === 'checkbox' ? this.#checkbox(field) : this.#fieldButton(field);
        overlay.append(control.closest('.field-check') ?? control);
        controls.push(control);
      }
      this.#buttons.set(field.id, controls);
      this.#paintField(field);
    }
  }

  /**
   * The texts signing will stamp that the signer fills in nothing for (read-only and imported fields),
   * on their pages before signing, as the stamp draws them: Helvetica at the field's size in points
   * (a share of the page's width, so they scale with the page), aligned, coloured and filled as the
   * PDF will have them.
   */
  #placeStampedTexts(): void {
    const viewer = this.#viewer;
    for (const stamp of this.#stamps) stamp.remove();
    this.#stamps = [];
    if (!viewer || !this.#fieldsFromShare) return;
    for (const text of stampedTexts(this.#share?.signatureFields ?? [], viewer.pageCount)) {
      for (const page of text.pages) {
        const overlay = viewer.overlay(page);
        const width = viewer.pageWidth(page);
        if (!overlay || !width) continue;
        const points = (size: number) => `calc(${size} * 100cqw / ${width})`;
        const box = h('div', { class: 'stamped-text', 'data-stamped': 'text' }, text.text);
        const { percentX, percentY, percentWidth, percentHeight } = text.position;
        Object.assign(box.style, {
          left: `${percentX * 100}%`,
          top: `${percentY * 100}%`,
          width: `${percentWidth * 100}%`,
          height: `${percentHeight * 100}%`,
          fontSize: points(text.fontSize),
          padding: points(2),
          textAlign: text.align,
          fontWeight: text.bold ? '700' : '400',
          ...(text.color ? { color: text.color } : {}),
          ...(text.backgroundColor ? { backgroundColor: text.backgroundColor } : {}),
        });
        overlay.prepend(box);
        this.#stamps.push(box);
      }
    }
  }

  /** A field filled in through a dialog (or, for signatures and initials, the drawing one). */
  #fieldButton(field: Field): HTMLButtonElement {
    const button = h('button', {
      type: 'button',
      class: `field field--${field.kind}`,
      'data-field': field.id,
    });
    button.addEventListener('click', (event) => {
      // The click that ends a drag is not a request to sign.
      if (button.dataset.dragEnded === 'true') return;
      void this.#activate(field, event.detail === 0);
    });
    if (field.movable) this.#makeMovable(field, button);
    return button;
  }

  /** A checkbox field is the native checkbox itself, checked in place (Space with the keyboard). */
  #checkbox(field: Field): HTMLInputElement {
    const box = h('input', { type: 'checkbox', class: 'field field--checkbox', 'data-field': field.id });
    // A tap target of 44×44 around the box, with a visible caption above it (styles.css), so the
    // box neither covers its clause nor goes unnamed (issue 40).
    h(
      'label',
      { class: 'field-check' },
      box,
      h('span', { class: 'field-caption', 'aria-hidden': 'true' }, field.tooltip ?? t('field.checkbox')),
    );
    box.addEventListener('change', () => {
      field.text = String(box.checked);
      // The same box on other pages follows.
      this.#paintField(field);
      this.#updateProgress();
      this.#keepProgress();
    });
    return box;
  }

  #paintField(field: Field): void {
    const done = isDone(field);
    for (const [i, control] of (this.#buttons.get(field.id) ?? []).entries()) {
      placeOnPage(control.closest<HTMLElement>('.field-check') ?? control, field);
      control.classList.toggle('field--done', done);
      control.classList.toggle('field--movable', field.movable);
      control.disabled = !this.#signing;
      const state = done ? t('field.done') : t(field.required ? 'field.required' : 'field.optional');
      let label = t('field.label', { kind: t(`field.${field.kind}`), state, page: field.pages[i] ?? 1 });
      if (field.tooltip) label += `. ${field.tooltip}`;
      if (control instanceof HTMLInputElement) {
        // A checkbox says itself whether it is checked.
        control.checked = field.text === 'true';
        control.setAttribute('aria-label', label);
        continue;
      }
      // A value answered shows as it will be stamped: its size in points, scaled with the page.
      const answered = done && isValueKind(field.kind);
      control.classList.toggle('field--answer', answered);
      const width = this.#viewer?.pageWidth(field.pages[i] ?? 1);
      control.style.fontSize = answered && width ? `calc(${field.fontSize ?? 12} * 100cqw / ${width})` : '';
      // What the box shows is also part of its name (WCAG 2.5.3, label in name).
      const visible = done && field.previewUrl ? '' : this.#fieldText(field, done);
      if (visible && visible !== field.tooltip) label += `. ${visible}`;
      if (field.movable) label += `. ${t('fields.placeHint')}`;
      control.setAttribute('aria-label', label);
      control.replaceChildren(
        done && field.previewUrl
          ? h('img', { src: field.previewUrl, alt: '' })
          : h('span', { class: 'field-text' }, visible),
      );
      fitLabel(control);
    }
  }

  /** What a field's box says: its answer once given, else what to do there. */
  #fieldText(field: Field, done: boolean): string {
    if (field.kind === 'file' && field.fileName !== undefined)
      return t('file.attached', { name: field.fileName });
    if (done && isValueKind(field.kind)) return shownAnswer(field);
    // An empty value field shows what it asks for, when the sharer said so.
    if (field.tooltip && isValueKind(field.kind)) return field.tooltip;
    const cta: Partial<Record<FieldKind, MessageKey>> = {
      signature: 'field.signHere',
      initials: 'field.initialHere',
      stamp: 'field.stampHere',
      image: 'field.imageHere',
      file: 'field.attachHere',
      select: 'field.chooseHere',
    };
    return t(cta[field.kind] ?? 'field.fillHere');
  }

  #updateProgress(): void {
    const total = this.#fields.length;
    const done = this.#fields.filter(isDone).length;
    this.#progress.textContent = t('fields.progress', { done, total });
    this.#renderActions();
  }

  /** The required fields still to do, in visiting order. */
  get #missing(): Field[] {
    return this.#fields.filter((f) => f.required && !isDone(f));
  }

  /** The Next field step: the next required field still to do after the last one visited. */
  #nextField(): void {
    const missing = this.#missing;
    const after = missing.find((f) => this.#fields.indexOf(f) > this.#visited);
    this.#focusField(after ?? missing[0]);
  }

  #focusField(field: Field | undefined): void {
    const control = field ? this.#buttons.get(field.id)?.[0] : undefined;
    if (!field || !control) return;
    this.#visited = this.#fields.indexOf(field);
    this.#viewer?.reveal(control);
    control.focus({ preventScroll: true });
  }

  /**
   * After a field is done: on to the next required one still to do (from the top again if need be),
   * else the next optional one after it, else the sign button.
   */
  #advance(from: Field): void {
    const start = this.#fields.indexOf(from);
    const after = this.#fields.slice(start + 1);
    const rest = [...after, ...this.#fields.slice(0, start)];
    const next = rest.find((f) => !isDone(f) && f.required) ?? after.find((f) => !isDone(f));
    if (next) this.#focusField(next);
    else
      (
        this.#review.querySelector<HTMLInputElement>('#consent-box:not(:checked)') ??
        this.#actions.querySelector<HTMLButtonElement>('[data-action="sign"]')
      )?.focus();
  }

  async #activate(field: Field, byKeyboard: boolean): Promise<void> {
    if (!this.#signing) return;
    try {
      if (field.kind === 'signature' || field.kind === 'initials') {
        const kind = field.kind;
        const existing = this.#images[kind];
        if (existing && !isDone(field)) {
          Object.assign(field, { fileId: existing.fileId, previewUrl: existing.url });
        } else {
          const png = await signatureDialog(kind, byKeyboard);
          if (!png) return;
          const uploaded = await this.#ctx.api.uploadImage(kind, png);
          const image = { fileId: uploaded.file.id, url: URL.createObjectURL(png) };
          const data = await dataUrlOf(png);
          if (data) this.#pictures.set(image.fileId, data);
          this.#images[kind] = image;
          Object.assign(field, { fileId: image.fileId, previewUrl: image.url });
        }
      } else if (PICTURE_KINDS.includes(field.kind)) {
        // A stamp or an image, PNG or JPEG (the server decodes it and refuses anything else).
        const answer = await formDialog(pictureForm(field));
        const picture = answer?.files.picture;
        if (!picture) return;
        const fileId =
          field.kind === 'stamp'
            ? (await this.#ctx.api.uploadStamp(this.#documentId, picture)).id
            : (await this.#ctx.api.uploadPicture(picture)).file.id;
        const data = await dataUrlOf(picture);
        if (data) this.#pictures.set(fileId, data);
        Object.assign(field, { fileId, previewUrl: URL.createObjectURL(picture) });
      } else if (isValueKind(field.kind)) {
        const answer = await formDialog(valueForm(field));
        if (!answer) return;
        field.text = answerOf(field, answer.values.value ?? '');
      } else {
        // Until they sign, recipients may replace what they submitted (the server keeps it after).
        if (!field.answerId) return;
        const replacing = field.fileName !== undefined;
        const intro = replacing ? t('file.replaceIntro', { name: field.fileName ?? '' }) : field.tooltip;
        const answer = await formDialog({
          title: t(replacing ? 'file.replaceTitle' : 'file.title'),
          ...(intro ? { intro } : {}),
          inputs: [{ name: 'file', label: t('file.label'), kind: 'file', required: true }],
          confirm: t(replacing ? 'file.replace' : 'file.save'),
        });
        const file = answer?.files.file;
        if (!file) return;
        await this.#ctx.api.submitFile(this.#documentId, field.answerId, file);
        field.fileName = file.name;
      }
    } catch (error) {
      this.#showError(error);
      return;
    }
    this.#paintField(field);
    this.#updateProgress();
    this.#keepProgress();
    announce(t('fields.progress', { done: this.#fields.filter(isDone).length, total: this.#fields.length }));
    this.#advance(field);
  }

  /** Drag with any pointer; arrow keys nudge (Shift: more), Page Up/Down change the page. */
  #makeMovable(field: Field, button: HTMLButtonElement): void {
    let start: { x: number; y: number; dragging: boolean } | undefined;
    button.addEventListener('pointerdown', (event) => {
      if (event.button !== 0 && event.pointerType === 'mouse') return;
      start = { x: event.clientX, y: event.clientY, dragging: false };
      button.setPointerCapture(event.pointerId);
    });
    button.addEventListener('pointermove', (event) => {
      if (!start) return;
      if (event.buttons === 0) {
        start = undefined;
        return;
      }
      const dx = event.clientX - start.x;
      const dy = event.clientY - start.y;
      if (Math.abs(dx) + Math.abs(dy) < 6 && !start.dragging) return;
      start.dragging = true;
      // A drag may end on another page: the field follows to the page under the pointer.
      const page = document
        .elementsFromPoint(event.clientX, event.clientY)
        .find((e) => e instanceof HTMLElement && e.classList.contains('page')) as HTMLElement | undefined;
      const pageNumber = Number(page?.dataset.page ?? field.pages[0]);
      const box = (page ?? button.parentElement)?.getBoundingClientRect();
      if (!box) return;
      const { percentWidth, percentHeight } = field.position;
      field.position = clampPosition({
        percentX: (event.clientX - box.left) / box.width - percentWidth / 2,
        percentY: (event.clientY - box.top) / box.height - percentHeight / 2,
        percentWidth,
        percentHeight,
      });
      if (pageNumber !== field.pages[0]) {
        this.#moveToPage(field, pageNumber, false);
        // Moving the button to another page's overlay released the capture: keep dragging it.
        if (button.isConnected) button.setPointerCapture(event.pointerId);
      } else this.#paintField(field);
    });
    const end = () => {
      if (start?.dragging) {
        // The browser sends that click right after this pointerup, before any timer runs.
        button.dataset.dragEnded = 'true';
        window.setTimeout(() => delete button.dataset.dragEnded, 0);
      }
      start = undefined;
    };
    button.addEventListener('pointerup', end);
    button.addEventListener('pointercancel', end);
    button.addEventListener('keydown', (event) => {
      const step = event.shiftKey ? 0.05 : 0.01;
      const moves: Record<string, [number, number]> = {
        ArrowLeft: [-step, 0],
        ArrowRight: [step, 0],
        ArrowUp: [0, -step],
        ArrowDown: [0, step],
      };
      const move = moves[event.key];
      if (move) {
        event.preventDefault();
        field.position = clampPosition({
          ...field.position,
          percentX: field.position.percentX + move[0],
          percentY: field.position.percentY + move[1],
        });
        this.#paintField(field);
      } else if (event.key === 'PageUp' || event.key === 'PageDown') {
        event.preventDefault();
        this.#moveToPage(field, (field.pages[0] ?? 1) + (event.key === 'PageUp' ? -1 : 1), true);
      }
    });
  }

  #moveToPage(field: Field, page: number, refocus: boolean): void {
    const count = this.#viewer?.pageCount ?? 1;
    const target = Math.min(Math.max(page, 1), count);
    if (target === field.pages[0]) return;
    field.pages = [target];
    const button = this.#buttons.get(field.id)?.[0];
    const overlay = this.#viewer?.overlay(target);
    if (!button || !overlay) return;
    overlay.append(button);
    this.#paintField(field);
    announce(t('fields.movedTo', { page: target }));
    if (refocus) {
      this.#viewer?.reveal(button);
      button.focus({ preventScroll: true });
    }
  }

  // --- actions ---

  #renderActions(): void {
    const actions = this.#actions;
    // Built anew when the next step changes: focus on one of the buttons stays on the bar.
    const focused = actions.contains(document.activeElement)
      ? ((document.activeElement as HTMLElement).dataset.action ?? '')
      : undefined;
    actions.replaceChildren();
    const button = (key: MessageKey, kind: string, action: string, onClick: () => void) =>
      h(
        'button',
        { type: 'button', class: `button button--${kind}`, 'data-action': action, onclick: onClick },
        t(key),
      );
    if (this.#canAct) {
      // The next step, always in view: the next required field while some are left, then Sign.
      if (this.#purpose === 'sign' && this.#missing.length > 0)
        actions.append(button('fields.next', 'primary', 'next', () => this.#nextField()));
      else if (this.#purpose === 'sign')
        actions.append(button('action.sign', 'primary', 'sign', () => void this.#sign()));
      else {
        const key: MessageKey = `action.${this.#purpose as 'approve' | 'review' | 'accept' | 'execute'}`;
        actions.append(button(key, 'primary', 'execute', () => void this.#execute()));
      }
      const delegable = (this.#share?.rights ?? []).includes('delegate') && !this.#delegateRefused;
      if (delegable)
        actions.append(button('action.delegate', 'secondary', 'delegate', () => void this.#delegate()));
      actions.append(button('action.reject', 'danger', 'reject', () => void this.#reject()));
    }
    if ((this.#state === 'completed' && this.#doc.pdfFile) || this.#signedCopyOnly) {
      actions.append(button('action.download', 'primary', 'download', () => void this.#download()));
    }
    this.#renderReview();
    actions.hidden = actions.childElementCount === 0;
    this.#progress.hidden = !this.#signing;
    this.#dock.hidden =
      actions.hidden && this.#progress.hidden && this.#review.hidden && !this.#actionStatus.hasChildNodes();
    if (focused !== undefined)
      (
        actions.querySelector<HTMLElement>(`[data-action="${focused}"]`) ?? actions.querySelector('button')
      )?.focus();
  }

  /**
   * The review before the final Sign (issue 40, 2), once every required field is done: what is about
   * to be signed ("You are about to sign <title>, 3 pages, 8 fields"), and the electronic-signature
   * consent statement with an unticked box; Sign records the consent first (POST /share/consent).
   * Kept while it stays the same step: a tick, and focus on the box, survive a re-render.
   */
  #renderReview(): void {
    const review = this.#review;
    const shown = this.#canAct && this.#purpose === 'sign' && this.#missing.length === 0;
    if (!shown || this.#fields.length === 0) {
      review.hidden = true;
      review.replaceChildren();
      return;
    }
    const focused = review.contains(document.activeElement);
    const pages = this.#viewer?.pageCount ?? this.#doc.pdfFile?.pages ?? 1;
    const count = this.#fields.length;
    const line = t('review.line', {
      title: this.#doc.documentTitle,
      pages: pages === 1 ? t('review.page') : t('review.pages', { count: pages }),
      fields: count === 1 ? t('review.field') : t('review.fields', { count }),
    });
    const content: HTMLElement[] = [
      h('h2', { id: 'review-title', class: 'small-heading' }, t('review.title')),
      h('p', { class: 'review-line' }, line),
    ];
    if (this.#stamps.length > 0) content.push(h('p', { class: 'hint' }, t('review.stamped')));
    const consent = this.#doc.consent;
    if (consent) {
      const box = h('input', { type: 'checkbox', id: 'consent-box', 'aria-describedby': 'consent-text' });
      box.checked = this.#consented;
      box.addEventListener('change', () => {
        this.#consented = box.checked;
        if (box.checked) this.#actionStatus.replaceChildren();
      });
      content.push(
        h(
          'div',
          {
            class: 'consent-text',
            id: 'consent-text',
            role: 'region',
            'aria-label': t('consent.label'),
            lang: consent.language,
            // A long statement scrolls in its box: the keyboard reaches it too.
            tabindex: '0',
          },
          consent.text,
        ),
        h('div', { class: 'checkbox consent-check' }, box, h('label', { for: box.id }, t('consent.agree'))),
      );
    }
    review.replaceChildren(...content);
    review.hidden = false;
    if (focused) review.querySelector<HTMLInputElement>('#consent-box')?.focus();
  }

  /** The notice above the document: what happened, or the state that ends the request. */
  #renderNotice(focus: boolean): void {
    const notice = (title: string, body: string, kind: 'success' | 'info' | 'error') => {
      const id = 'notice-title';
      return h(
        'section',
        { class: `notice notice--${kind}`, 'aria-labelledby': id },
        h('h2', { id, class: 'notice-title' }, title),
        h('p', {}, body),
      );
    };
    let content: HTMLElement | undefined;
    const state = this.#state;
    const owesAction = this.#purpose === 'sign' || SIMPLE_ACTIONS.includes(this.#purpose);
    const ended = owesAction && this.#share ? SHARE_ENDED[this.#share.status] : undefined;
    if (this.#outcome === 'signed') {
      const waiting = this.#doc.waitingFor;
      content = notice(
        t('sign.doneTitle'),
        this.#unreadAfterOutcome
          ? ''
          : state === 'completed'
            ? t('sign.completed')
            : waiting.length > 0
              ? t('sign.waiting', { names: waiting.join(', ') })
              : '',
        'success',
      );
    } else if (this.#outcome === 'rejected') content = notice(t('state.rejected'), t('reject.done'), 'info');
    else if (this.#outcome === 'delegated')
      content = notice(
        t('delegate.doneTitle', { email: this.#delegatedTo }),
        t('delegate.done', { email: this.#delegatedTo }),
        'success',
      );
    else if (this.#outcome === 'executed') content = notice(t('executed.done'), '', 'success');
    else if (state === 'completed')
      content = notice(t('state.completed'), t('state.completedBody'), 'success');
    else if (state === 'cancelled') content = notice(t('state.cancelled'), t('state.cancelledBody'), 'info');
    else if (state === 'expired') content = notice(t('state.expired'), t('state.expiredBody'), 'info');
    else if (state === 'rejected') content = notice(t('state.rejected'), t('state.rejectedBody'), 'info');
    else if (this.#share?.status === 'waiting')
      content = notice(t('share.waiting'), t('share.waitingBody'), 'info');
    else if (ended) content = notice(t(ended[0]), t(ended[1]), 'info');
    else if (!this.#canAct) content = h('div', {}, messageBox('info', t('state.view')));
    this.#notice.replaceChildren(...(content ? [content] : []));
    if (focus) focusHeading(this.#notice.querySelector('h2') ?? document.getElementById('doc-title'));
  }

  /**
   * An action that failed says so where it was taken, beside the buttons (not at the top of a page
   * scrolled far down), and the person stays where they were: the button they pressed keeps focus.
   */
  #showError(error: unknown): void {
    if (error instanceof ApiFailure && error.status === 401) {
      this.#ctx.onInvalid();
      return;
    }
    this.#showStatus(messageBox('error', describeError(error)));
  }

  /** A message beside the action buttons, brought into view. */
  #showStatus(message: HTMLElement): void {
    this.#actionStatus.replaceChildren(message);
    this.#dock.hidden = false;
    message.scrollIntoView?.({ block: 'nearest' });
  }

  #setBusy(busy: boolean): void {
    this.#busy = busy;
    this.#main.setAttribute('aria-busy', String(busy));
    if (busy) {
      // A disabled button loses focus to the page's body: remember it, to give it back.
      const active = document.activeElement;
      this.#focusBeforeBusy = active instanceof HTMLElement ? active : undefined;
      this.#actionStatus.replaceChildren();
    }
    for (const b of this.#actions.querySelectorAll('button')) b.disabled = busy;
    if (!busy && this.#focusBeforeBusy?.isConnected && document.activeElement !== this.#focusBeforeBusy) {
      this.#focusBeforeBusy.focus();
    }
  }

  async #refresh(): Promise<DocumentView> {
    const answer = await this.#ctx.api.document(this.#ctx.documentId);
    const doc = answer.results[0];
    if (!doc) throw new Error('no document');
    this.#doc = doc;
    return doc;
  }

  /** After an outcome: the new state, the notice (focused), the actions, and the new PDF when it changed. */
  async #finish(outcome: Outcome): Promise<void> {
    this.#outcome = outcome;
    notifyEmbedder(outcome, { documentId: this.#documentId, shareId: this.#share?.shareId });
    // Done with the request: what was kept for a reload goes.
    this.#progressStore?.clear();
    // Done: the page shows the outcome and what comes next, no longer what was asked.
    this.#ask?.remove();
    this.#actionStatus.replaceChildren();
    try {
      await this.#refresh();
    } catch {
      // The outcome stands. A share link no longer reads the document once its recipient acted: it
      // downloads what they signed (issue 37 item 9).
      this.#unreadAfterOutcome = true;
      this.#signedCopyOnly = this.#ctx.api.isShare && (outcome === 'signed' || outcome === 'executed');
    }
    if (outcome === 'signed' && this.#doc.pdfFile?.content !== this.#pdfFileId) {
      // The page is built again around the signed PDF, the outcome focused once.
      this.#fields = [];
      await this.render('notice');
      return;
    }
    for (const buttons of this.#buttons.values()) for (const b of buttons) b.disabled = true;
    this.#renderActions();
    this.#renderNotice(true);
  }

  async #sign(): Promise<void> {
    const missing = this.#fields.filter((f) => f.required && !isDone(f));
    if (missing.length > 0 || this.#fields.length === 0) {
      this.#showStatus(messageBox('error', t('sign.incomplete', { count: Math.max(missing.length, 1) })));
      this.#focusField(missing[0]);
      return;
    }
    const consent = this.#doc.consent;
    if (consent && !this.#consented) {
      this.#showStatus(messageBox('error', t('consent.required')));
      this.#review.querySelector<HTMLInputElement>('#consent-box')?.focus();
      return;
    }
    this.#setBusy(true);
    this.#showStatus(messageBox('info', t('sign.working')));
    if (consent) {
      try {
        await this.#ctx.api.acceptConsent(this.#documentId, consent.sha256);
      } catch (error) {
        this.#setBusy(false);
        if (error instanceof ApiFailure && error.code === 'CONSENT_CHANGED') return this.#consentChanged();
        this.#showError(error);
        return;
      }
    }
    const body = signBody(this.#fields);
    const request = {
      id: this.#documentId,
      signatures: body.signatures,
      ...(body.annotations.length > 0 ? { annotations: body.annotations } : {}),
      ...(body.images.length > 0 ? { images: body.images } : {}),
    };
    try {
      // Uploads of requested files change the document's version: sign the current one, and once
      // more when something else changed it in between (spec Documents rule 1).
      let doc = await this.#refresh();
      try {
        await this.#ctx.api.sign(doc._version, request);
      } catch (error) {
        if (!(error instanceof ApiFailure && error.code === 'VERSION_MISMATCH')) throw error;
        doc = await this.#refresh();
        await this.#ctx.api.sign(doc._version, request);
      }
    } catch (error) {
      this.#setBusy(false);
      this.#showError(error);
      return;
    }
    this.#setBusy(false);
    await this.#finish('signed');
  }

  /** The tenant reworded the statement since the page read it: the new one, to read and accept. */
  async #consentChanged(): Promise<void> {
    try {
      await this.#refresh();
    } catch (error) {
      this.#showError(error);
      return;
    }
    this.#consented = false;
    this.#renderActions();
    this.#showStatus(messageBox('error', t('consent.changed')));
    this.#review.querySelector<HTMLInputElement>('#consent-box')?.focus();
  }

  async #execute(): Promise<void> {
    this.#setBusy(true);
    try {
      await this.#ctx.api.execute(this.#documentId, this.#purpose);
    } catch (error) {
      this.#setBusy(false);
      this.#showError(error);
      return;
    }
    this.#setBusy(false);
    await this.#finish('executed');
  }

  async #reject(): Promise<void> {
    // A reason is asked for, not forced: rejecting without one is asked once (issue 40).
    let askedForReason = false;
    const answer = await formDialog({
      title: t('reject.title'),
      inputs: [{ name: 'reason', label: t('reject.reason'), kind: 'textarea', maxLength: 2000 }],
      confirm: t('reject.confirm'),
      danger: true,
      check: (values) => {
        if (values.reason || askedForReason) return undefined;
        askedForReason = true;
        return t('reject.noReason');
      },
    });
    if (!answer) return;
    this.#setBusy(true);
    try {
      await this.#ctx.api.reject(this.#documentId, answer.values.reason ?? '');
    } catch (error) {
      this.#setBusy(false);
      this.#showError(error);
      return;
    }
    this.#setBusy(false);
    await this.#finish('rejected');
  }

  async #delegate(): Promise<void> {
    const answer = await formDialog({
      title: t('delegate.title'),
      inputs: [
        {
          name: 'email',
          label: t('delegate.email'),
          kind: 'email',
          required: true,
          maxLength: 320,
          autocomplete: 'off',
        },
        { name: 'message', label: t('delegate.message'), kind: 'textarea', maxLength: 5000 },
      ],
      confirm: t('delegate.confirm'),
      check: (values) => {
        const email = (values.email ?? '').trim();
        if (!EMAIL.test(email)) return t('delegate.invalid');
        // Passing the request on to oneself would change nothing (the server refuses it too).
        const own = this.#share?.sharedWith ?? [];
        return own.some((a) => a.toLowerCase() === email.toLowerCase()) ? t('delegate.self') : undefined;
      },
    });
    if (!answer) return;
    this.#setBusy(true);
    const email = answer.values.email ?? '';
    try {
      await this.#ctx.api.delegate(this.#documentId, email, answer.values.message ?? '');
    } catch (error) {
      this.#setBusy(false);
      if (error instanceof ApiFailure && /own recipient/.test(error.message)) {
        this.#showStatus(messageBox('error', t('delegate.self')));
        return;
      }
      if (error instanceof ApiFailure && error.status === 403) {
        // The share has no `delegate` right: the button goes, the server's reason stays on screen.
        this.#delegateRefused = true;
        this.#renderActions();
      }
      this.#showError(error);
      return;
    }
    this.#setBusy(false);
    this.#delegatedTo = email;
    await this.#finish('delegated');
  }

  async #download(): Promise<void> {
    const fileId = this.#doc.pdfFile?.content;
    if (!fileId && !this.#signedCopyOnly) return;
    try {
      const bytes =
        this.#signedCopyOnly || !fileId ? await this.#ctx.api.signedCopy() : await this.#ctx.api.file(fileId);
      const url = URL.createObjectURL(new Blob([bytes], { type: 'application/pdf' }));
      const link = h('a', { href: url, download: `${safeName(this.#doc.documentTitle)}.pdf`, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (error) {
      this.#showError(error);
    }
  }
}

/**
 * A field's box at its place on the page, at least 44×44 CSS px (WCAG 2.5.5; issue 40: "tap targets
 * are exactly 24 px high"), grown around its centre so it stays over the spot it marks. A checkbox's
 * target is a square around its box.
 */
function placeOnPage(box: HTMLElement, field: Field): void {
  const { percentX: x, percentY: y, percentWidth: w, percentHeight: hgt } = field.position;
  const pct = (n: number) => `${(n * 100).toFixed(4)}%`;
  if (field.kind === 'checkbox') {
    box.style.left = `calc(${pct(x + w / 2)} - ${TARGET / 2}px)`;
    box.style.top = `calc(${pct(y + hgt / 2)} - ${TARGET / 2}px)`;
    return;
  }
  box.style.width = `max(${TARGET}px, ${pct(w)})`;
  box.style.height = `max(${TARGET}px, ${pct(hgt)})`;
  box.style.left = `calc(${pct(x)} - (max(${TARGET}px, ${pct(w)}) - ${pct(w)}) / 2)`;
  box.style.top = `calc(${pct(y)} - (max(${TARGET}px, ${pct(hgt)}) - ${pct(hgt)}) / 2)`;
}

/** The smallest tap target, in CSS px. */
const TARGET = 44;

/**
 * A label that does not fit in its box on one line at a readable size goes outside it, under the box
 * (issue 40: "Number / of seats", "nitial", "2026-12- / 01" were cut): checked now and whenever the
 * box changes size (a zoom, a rotation).
 */
function fitLabel(control: HTMLElement): void {
  const check = () => {
    const text = control.querySelector<HTMLElement>('.field-text');
    control.classList.remove('field--outside');
    if (!text || !control.isConnected) return;
    if (text.scrollWidth > control.clientWidth - 4 || text.offsetHeight > control.clientHeight)
      control.classList.add('field--outside');
  };
  check();
  if (!control.dataset.fitting) {
    control.dataset.fitting = 'true';
    new ResizeObserver(check).observe(control);
  }
}

function safeName(title: string): string {
  return (
    title
      .replace(/[\\/:*?"<>|\p{Cc}]+/gu, ' ')
      .trim()
      .slice(0, 120) || 'document'
  );
}
