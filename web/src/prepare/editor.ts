import { ApiFailure, NetworkFailure, type Api, type DocumentView } from '../api.js';
import { announce, field, focusHeading, h, messageBox } from '../dom.js';
import { t } from '../i18n.js';
import type { PdfViewer } from '../pdf-viewer.js';
import { loadViewer } from '../viewer-code.js';
import {
  blamed,
  canBeRequired,
  FIELD_KINDS,
  PURPOSES,
  requiredByDefault,
  roundFraction,
  shareBody,
  type DrawnField,
  type FieldKind,
  type Purpose,
  type Recipient,
} from './share-body.js';
import { pt } from './texts.js';

/** What a failed call says: the API's own message (it names the field at fault), or the network's. */
export function apiMessage(error: unknown): string {
  if (error instanceof NetworkFailure) return t('error.network');
  if (error instanceof ApiFailure) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/** The box a tap (or the keyboard) places, in fractions of the page: about what each kind needs. */
const DEFAULT_SIZE: Record<FieldKind, { w: number; h: number }> = {
  signature: { w: 0.3, h: 0.07 },
  initials: { w: 0.12, h: 0.05 },
  text: { w: 0.3, h: 0.035 },
  readOnlyText: { w: 0.35, h: 0.035 },
  date: { w: 0.2, h: 0.035 },
  checkbox: { w: 0.04, h: 0.03 },
  stamp: { w: 0.2, h: 0.1 },
  file: { w: 0.3, h: 0.05 },
};
/** An arrow key moves (or resizes) by half a percent of the page; with Shift, by five. */
const STEP = 0.005;
const BIG_STEP = 0.05;
/** The smallest box, in either direction: a drag shorter than this is a tap. */
const MIN_SIZE = 0.01;
/** Recipients' colours (prepare.css `.pf-c0` … `.pf-c5`), in the order they were added. */
const COLOURS = 6;

interface PlacedField extends DrawnField {
  id: number;
  element: HTMLButtonElement;
  /** The API's message when it refused the share because of this field. */
  error?: string;
}

const clamp = (value: number, min: number, max: number) => Math.min(Math.max(value, min), max);

/**
 * The editor of /prepare/<documentId>: the document's pages (pdf-viewer.ts), where the sender draws
 * fields for recipients, and a panel with the recipients, the field type and recipient to draw, the
 * selected field's settings, and Send / Copy JSON. Positions are kept as fractions of the page
 * (spec Position: origin top left), read from the page's overlay, which has the page's size at any
 * zoom; they are rounded only in the body (share-body.ts).
 */
export class PrepareEditor {
  readonly #main: HTMLElement;
  readonly #api: Api;
  readonly #documentId: string;
  readonly #leave: HTMLElement;
  #doc: DocumentView | undefined;
  #viewer: PdfViewer | undefined;
  #recipients: Recipient[] = [];
  #recipientErrors = new Map<string, string>();
  #fields: PlacedField[] = [];
  #nextId = 1;
  #selected: number | undefined;
  #kind: FieldKind = 'signature';
  #toolRecipient = '';
  #armed = false;
  #sent = false;
  #lastStatus: HTMLElement | undefined;
  #json = '';

  // The panel's parts, rebuilt by render() (a change of language) and by their own updates.
  #recipientsBox = h('div', { class: 'prepare-section-body' });
  #toolsBox = h('div', { class: 'prepare-section-body' });
  #selectedBox = h('div', { class: 'prepare-section-body' });
  #outBox = h('div', { class: 'prepare-section-body' });
  #shareTo = h('input', { type: 'text', class: 'input', autocomplete: 'off', spellcheck: 'false' });
  #purpose = h('select', { class: 'input' });
  #recipientFeedback = h('div', { class: 'form-feedback' });

  constructor(main: HTMLElement, api: Api, documentId: string, leave: HTMLElement) {
    this.#main = main;
    this.#api = api;
    this.#documentId = documentId;
    this.#leave = leave;
  }

  /** Reads the document and its PDF, and shows the editor. */
  async open(): Promise<void> {
    const doc = (
      await this.#api.json<{ results: DocumentView[] }>(
        'GET',
        `/documents/${encodeURIComponent(this.#documentId)}`,
      )
    ).results[0];
    if (!doc) throw new Error('no document');
    this.#doc = doc;
    const { PdfViewer } = await loadViewer();
    this.#viewer = new PdfViewer();
    this.#viewer.element.classList.add('prepare-viewer');
    this.render();
    if (!doc.pdfFile?.content) {
      this.#viewer.fail(messageBox('error', pt('editor.noPdf')));
      return;
    }
    try {
      await this.#viewer.load(await this.#api.file(doc.pdfFile.content));
    } catch (error) {
      this.#viewer.fail(messageBox('error', t('viewer.failed', { message: apiMessage(error) })));
      return;
    }
    for (let page = 1; page <= this.#viewer.pageCount; page++) {
      const overlay = this.#viewer.overlay(page);
      overlay?.classList.add('prepare-overlay');
      overlay?.addEventListener('pointerdown', (event) => this.#startDrawing(event, page, overlay));
    }
    for (const placed of this.#fields) this.#viewer.overlay(placed.page)?.append(placed.element);
  }

  /** The whole view in the current language (the fields drawn so far are kept). */
  render(): void {
    const doc = this.#doc;
    const viewer = this.#viewer;
    if (!doc || !viewer) return;
    const heading = h('h1', {}, doc.documentTitle);
    const section = (id: string, title: string, body: HTMLElement) =>
      h(
        'section',
        { class: 'prepare-section', 'aria-labelledby': `${id}-title` },
        h('h2', { id: `${id}-title` }, title),
        body,
      );
    const panel = h(
      'div',
      { class: 'prepare-panel' },
      h(
        'nav',
        { class: 'session-bar', 'aria-label': pt('title') },
        h('a', { href: '/prepare', class: 'back-link' }, `← ${pt('editor.back')}`),
        this.#leave,
      ),
      h('div', { class: 'prepare-head' }, heading, h('p', {}, pt('editor.intro'))),
      section('recipients', pt('recipients.title'), this.#recipientsBox),
      section('tools', pt('tools.title'), this.#toolsBox),
      section('selected', pt('selected.title'), this.#selectedBox),
      section('out', pt('out.title'), this.#outBox),
    );
    this.#purpose.replaceChildren(...PURPOSES.map((p) => h('option', { value: p }, pt(`purpose.${p}`))));
    this.#renderRecipients();
    this.#renderTools();
    this.#renderSelected();
    this.#renderOut();
    for (const placed of this.#fields) this.#paint(placed);
    this.#main.replaceChildren(h('div', { class: 'prepare-layout' }, panel, viewer.element));
    this.#main.dataset.view = 'prepare';
    focusHeading(heading);
  }

  // --- recipients ---

  #renderRecipients(): void {
    const list = this.#recipients.length
      ? h(
          'ul',
          { class: 'prepare-recipients' },
          ...this.#recipients.map((r, i) => {
            const remove = h(
              'button',
              {
                type: 'button',
                class: 'button button--secondary prepare-small',
                'aria-label': pt('recipients.remove', { name: r.shareTo }),
              },
              '✕',
            );
            remove.addEventListener('click', () => this.#removeRecipient(r.shareTo));
            const error = this.#recipientErrors.get(r.shareTo);
            return h(
              'li',
              { class: 'prepare-recipient' },
              h('span', { class: `prepare-swatch pf-c${i % COLOURS}`, 'aria-hidden': 'true' }),
              h(
                'span',
                { class: 'prepare-recipient-name' },
                `${r.shareTo} · ${pt(`purpose.${r.sharePurpose}`)}`,
              ),
              remove,
              error ? messageBox('error', error) : null,
            );
          }),
        )
      : h('p', { class: 'hint' }, pt('recipients.empty'));
    const add = h('button', { type: 'submit', class: 'button button--secondary' }, pt('recipients.add'));
    const form = h(
      'form',
      { class: 'form prepare-recipient-form', novalidate: true },
      field(pt('recipients.shareTo'), this.#shareTo),
      field(pt('recipients.purpose'), this.#purpose),
      this.#recipientFeedback,
      add,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.#addRecipient();
    });
    this.#recipientsBox.replaceChildren(list, form);
  }

  #addRecipient(): void {
    const shareTo = this.#shareTo.value.trim();
    const refuse = (text: string) => {
      this.#shareTo.setAttribute('aria-invalid', 'true');
      this.#recipientFeedback.replaceChildren(messageBox('error', text));
      this.#shareTo.focus();
    };
    if (!shareTo) return refuse(pt('recipients.nameEmpty'));
    if (this.#recipients.some((r) => r.shareTo.toLowerCase() === shareTo.toLowerCase()))
      return refuse(pt('recipients.twice', { name: shareTo }));
    this.#shareTo.removeAttribute('aria-invalid');
    this.#recipientFeedback.replaceChildren();
    this.#recipients.push({ shareTo, sharePurpose: (this.#purpose.value || 'sign') as Purpose });
    this.#toolRecipient ||= shareTo;
    this.#shareTo.value = '';
    this.#purpose.value = 'sign';
    this.#renderRecipients();
    this.#renderTools();
    this.#renderSelected();
    this.#shareTo.focus();
    announce(`${shareTo} · ${pt(`purpose.${this.#recipients.at(-1)?.sharePurpose ?? 'sign'}`)}`);
  }

  #removeRecipient(shareTo: string): void {
    if (this.#fields.some((f) => f.recipient === shareTo)) {
      this.#recipientErrors.set(shareTo, pt('recipients.hasFields', { name: shareTo }));
      this.#renderRecipients();
      return;
    }
    this.#recipients = this.#recipients.filter((r) => r.shareTo !== shareTo);
    this.#recipientErrors.delete(shareTo);
    if (this.#toolRecipient === shareTo) this.#toolRecipient = this.#recipients[0]?.shareTo ?? '';
    this.#renderRecipients();
    this.#renderTools();
    this.#shareTo.focus();
  }

  #colourOf(shareTo: string): number {
    return (
      Math.max(
        0,
        this.#recipients.findIndex((r) => r.shareTo === shareTo),
      ) % COLOURS
    );
  }

  #recipientSelect(value: string, onChange: (value: string) => void): HTMLSelectElement {
    const select = h(
      'select',
      { class: 'input' },
      ...this.#recipients.map((r) => h('option', { value: r.shareTo }, r.shareTo)),
    );
    select.value = value;
    select.addEventListener('change', () => onChange(select.value));
    return select;
  }

  // --- the drawing tools ---

  #renderTools(): void {
    if (this.#recipients.length === 0) {
      this.#armed = false;
      this.#showArmed();
      this.#toolsBox.replaceChildren(h('p', { class: 'hint' }, pt('tools.needRecipient')));
      return;
    }
    const kind = h(
      'select',
      { class: 'input' },
      ...FIELD_KINDS.map((k) => h('option', { value: k }, pt(`kind.${k}`))),
    );
    kind.value = this.#kind;
    kind.addEventListener('change', () => {
      this.#kind = kind.value as FieldKind;
    });
    const recipient = this.#recipientSelect(this.#toolRecipient, (value) => {
      this.#toolRecipient = value;
    });
    const draw = h(
      'button',
      { type: 'button', class: 'button button--primary prepare-draw', 'aria-pressed': String(this.#armed) },
      pt('tools.draw'),
    );
    draw.addEventListener('click', (event) => {
      // From the keyboard (no pointer) a box is placed in the middle of the page in
      // view, and moved with the arrow keys; with a pointer, the next drag on a page draws it.
      // A tap's click may have `detail` 0 too: its pointer type tells it from a key.
      const pointer = event instanceof PointerEvent && event.pointerType !== '';
      if (event.detail === 0 && !pointer) this.#placeFromKeyboard();
      else this.#arm(!this.#armed);
    });
    this.#toolsBox.replaceChildren(
      h(
        'div',
        { class: 'prepare-tool-row' },
        field(pt('tools.kind'), kind),
        field(pt('tools.recipient'), recipient),
      ),
      draw,
      h('p', { class: 'hint', id: 'drawing-hint' }, pt('tools.drawing')),
    );
    draw.setAttribute('aria-describedby', 'drawing-hint');
  }

  #arm(armed: boolean): void {
    this.#armed = armed && this.#recipients.length > 0;
    this.#toolsBox.querySelector('.prepare-draw')?.setAttribute('aria-pressed', String(this.#armed));
    this.#showArmed();
    // On a phone the pages are under the panel: they come into view, ready for the finger.
    if (this.#armed) this.#viewer?.element.scrollIntoView({ block: 'nearest', behavior: 'instant' });
  }

  #showArmed(): void {
    this.#viewer?.element.classList.toggle('prepare-viewer--drawing', this.#armed);
  }

  #pagePoint(event: PointerEvent, overlay: HTMLElement): { x: number; y: number } {
    const box = overlay.getBoundingClientRect();
    return {
      x: clamp((event.clientX - box.left) / box.width, 0, 1),
      y: clamp((event.clientY - box.top) / box.height, 0, 1),
    };
  }

  /** A drag on a page while drawing: the box follows the pointer from where it went down. */
  #startDrawing(event: PointerEvent, page: number, overlay: HTMLElement): void {
    if (!this.#armed || event.target !== overlay || event.button !== 0 || !this.#toolRecipient) return;
    event.preventDefault();
    overlay.setPointerCapture(event.pointerId);
    const start = this.#pagePoint(event, overlay);
    const placed = this.#add({
      kind: this.#kind,
      recipient: this.#toolRecipient,
      page,
      position: { percentX: start.x, percentY: start.y, percentWidth: 0, percentHeight: 0 },
      required: requiredByDefault(this.#kind),
      text: '',
    });
    const follow = (moved: PointerEvent) => {
      const at = this.#pagePoint(moved, overlay);
      placed.position = {
        percentX: Math.min(start.x, at.x),
        percentY: Math.min(start.y, at.y),
        percentWidth: Math.abs(at.x - start.x),
        percentHeight: Math.abs(at.y - start.y),
      };
      this.#paint(placed);
    };
    const end = (last: PointerEvent) => {
      follow(last);
      overlay.removeEventListener('pointermove', follow);
      overlay.removeEventListener('pointerup', end);
      overlay.removeEventListener('pointercancel', end);
      const size = DEFAULT_SIZE[placed.kind];
      const p = placed.position;
      // A tap places the kind's usual box with its corner there; a thin drag keeps its long side.
      if (p.percentWidth < MIN_SIZE && p.percentHeight < MIN_SIZE) {
        p.percentX = start.x;
        p.percentY = start.y;
      }
      if (p.percentWidth < MIN_SIZE) p.percentWidth = size.w;
      if (p.percentHeight < MIN_SIZE) p.percentHeight = size.h;
      this.#fit(placed);
      this.#arm(false);
      this.#placed(placed);
    };
    overlay.addEventListener('pointermove', follow);
    overlay.addEventListener('pointerup', end);
    overlay.addEventListener('pointercancel', end);
  }

  /** The page most in view: where a box placed from the keyboard goes. */
  #pageInView(): number {
    const scroller = this.#viewer?.element.querySelector('.viewer-scroll');
    const view = scroller?.getBoundingClientRect();
    let best = 1;
    let shown = -1;
    for (const page of this.#viewer?.element.querySelectorAll<HTMLElement>('.page') ?? []) {
      const box = page.getBoundingClientRect();
      const visible = view ? Math.min(box.bottom, view.bottom) - Math.max(box.top, view.top) : 0;
      if (visible > shown) {
        shown = visible;
        best = Number(page.dataset.page) || 1;
      }
    }
    return best;
  }

  #placeFromKeyboard(): void {
    if (!this.#toolRecipient || !this.#viewer?.pageCount) return;
    const size = DEFAULT_SIZE[this.#kind];
    const placed = this.#add({
      kind: this.#kind,
      recipient: this.#toolRecipient,
      page: this.#pageInView(),
      position: {
        percentX: 0.5 - size.w / 2,
        percentY: 0.5 - size.h / 2,
        percentWidth: size.w,
        percentHeight: size.h,
      },
      required: requiredByDefault(this.#kind),
      text: '',
    });
    this.#arm(false);
    this.#placed(placed);
  }

  // --- fields ---

  #add(drawn: DrawnField): PlacedField {
    const element = h('button', { type: 'button', class: 'prepare-field' });
    const placed: PlacedField = { ...drawn, id: this.#nextId++, element };
    element.dataset.field = String(placed.id);
    element.addEventListener('pointerdown', (event) => this.#startMoving(event, placed));
    element.addEventListener('keydown', (event) => this.#keys(event, placed));
    element.addEventListener('click', () => this.#select(placed.id, false));
    this.#fields.push(placed);
    this.#viewer?.overlay(placed.page)?.append(element);
    this.#paint(placed);
    return placed;
  }

  /** A field just drawn or placed: selected, said, and focused (a read-only text: on its text). */
  #placed(placed: PlacedField): void {
    // Only now: on a phone the panel is above the pages, and a change of its height while the
    // finger draws would move the page under it.
    this.#renderOut();
    this.#select(placed.id, true);
    announce(
      pt('field.added', {
        kind: pt(`kind.${placed.kind}`),
        recipient: placed.recipient,
        page: placed.page,
      }),
    );
  }

  /** The field's box, colour and names, from its state. */
  #paint(placed: PlacedField): void {
    const { element, position: p } = placed;
    element.style.left = `${p.percentX * 100}%`;
    element.style.top = `${p.percentY * 100}%`;
    element.style.width = `${p.percentWidth * 100}%`;
    element.style.height = `${p.percentHeight * 100}%`;
    element.className = [
      'prepare-field',
      `pf-c${this.#colourOf(placed.recipient)}`,
      placed.id === this.#selected ? 'prepare-field--selected' : '',
      placed.error ? 'prepare-field--error' : '',
    ]
      .filter(Boolean)
      .join(' ');
    element.setAttribute('aria-pressed', String(placed.id === this.#selected));
    const kind = pt(`kind.${placed.kind}`);
    const name = pt('field.name', { kind, recipient: placed.recipient, page: placed.page });
    element.setAttribute('aria-label', placed.text ? `${name}: ${placed.text}` : name);
    // What the box shows is the start of its name (WCAG 2.5.3, label in name), or its text.
    const label =
      placed.kind === 'readOnlyText' && placed.text
        ? placed.text
        : pt('field.short', { kind, recipient: placed.recipient });
    element.replaceChildren(
      h('span', { class: 'prepare-field-label' }, label),
      h('span', { class: 'prepare-handle', 'aria-hidden': 'true' }),
    );
  }

  /** Keeps the box on its page and at least MIN_SIZE in each direction. */
  #fit(placed: PlacedField): void {
    const p = placed.position;
    p.percentWidth = clamp(p.percentWidth, MIN_SIZE, 1);
    p.percentHeight = clamp(p.percentHeight, MIN_SIZE, 1);
    p.percentX = clamp(p.percentX, 0, 1 - p.percentWidth);
    p.percentY = clamp(p.percentY, 0, 1 - p.percentHeight);
    this.#paint(placed);
  }

  /** Dragging a field moves it; dragging its corner resizes it. */
  #startMoving(event: PointerEvent, placed: PlacedField): void {
    if (event.button !== 0) return;
    event.stopPropagation();
    event.preventDefault();
    const overlay = placed.element.parentElement;
    if (!overlay) return;
    const resizing = (event.target as HTMLElement).classList.contains('prepare-handle');
    const box = overlay.getBoundingClientRect();
    const from = { x: event.clientX, y: event.clientY, ...placed.position };
    placed.element.setPointerCapture(event.pointerId);
    this.#select(placed.id, false);
    placed.element.focus();
    const follow = (moved: PointerEvent) => {
      const dx = (moved.clientX - from.x) / box.width;
      const dy = (moved.clientY - from.y) / box.height;
      if (resizing) {
        placed.position.percentWidth = clamp(from.percentWidth + dx, MIN_SIZE, 1 - from.percentX);
        placed.position.percentHeight = clamp(from.percentHeight + dy, MIN_SIZE, 1 - from.percentY);
      } else {
        placed.position.percentX = clamp(from.percentX + dx, 0, 1 - from.percentWidth);
        placed.position.percentY = clamp(from.percentY + dy, 0, 1 - from.percentHeight);
      }
      this.#paint(placed);
    };
    const end = () => {
      placed.element.removeEventListener('pointermove', follow);
      placed.element.removeEventListener('pointerup', end);
      placed.element.removeEventListener('pointercancel', end);
      this.#renderSelected();
    };
    placed.element.addEventListener('pointermove', follow);
    placed.element.addEventListener('pointerup', end);
    placed.element.addEventListener('pointercancel', end);
  }

  /** Arrow keys move the field (Shift: further), Alt and the arrows resize it, Delete removes it. */
  #keys(event: KeyboardEvent, placed: PlacedField): void {
    if (event.key === 'Delete' || event.key === 'Backspace') {
      event.preventDefault();
      this.#delete(placed);
      return;
    }
    const arrows: Record<string, [number, number]> = {
      ArrowLeft: [-1, 0],
      ArrowRight: [1, 0],
      ArrowUp: [0, -1],
      ArrowDown: [0, 1],
    };
    const direction = arrows[event.key];
    if (!direction) return;
    event.preventDefault();
    const step = event.shiftKey ? BIG_STEP : STEP;
    const p = placed.position;
    if (event.altKey) {
      p.percentWidth += direction[0] * step;
      p.percentHeight += direction[1] * step;
    } else {
      p.percentX += direction[0] * step;
      p.percentY += direction[1] * step;
    }
    this.#fit(placed);
    this.#select(placed.id, false);
  }

  #delete(placed: PlacedField): void {
    const index = this.#fields.indexOf(placed);
    placed.element.remove();
    this.#fields = this.#fields.filter((f) => f !== placed);
    if (this.#selected === placed.id) this.#selected = undefined;
    this.#renderSelected();
    this.#renderOut();
    announce(pt('field.deleted'));
    const next = this.#fields[Math.min(index, this.#fields.length - 1)];
    if (next) {
      this.#select(next.id, false);
      next.element.focus();
    } else (this.#toolsBox.querySelector<HTMLElement>('.prepare-draw') ?? this.#shareTo).focus();
  }

  #select(id: number, focus: boolean): void {
    const before = this.#selected;
    this.#selected = id;
    for (const placed of this.#fields) if (placed.id === id || placed.id === before) this.#paint(placed);
    this.#renderSelected();
    const placed = this.#fields.find((f) => f.id === id);
    if (!focus || !placed) return;
    const text = this.#selectedBox.querySelector<HTMLInputElement>('.prepare-text');
    if (placed.kind === 'readOnlyText' && text) {
      text.scrollIntoView({ block: 'nearest' });
      text.focus();
    } else placed.element.focus();
  }

  #renderSelected(): void {
    const placed = this.#fields.find((f) => f.id === this.#selected);
    if (!placed) {
      this.#selectedBox.replaceChildren(h('p', { class: 'hint' }, pt('selected.none')));
      return;
    }
    const recipient = this.#recipientSelect(placed.recipient, (value) => {
      placed.recipient = value;
      placed.error = undefined;
      this.#paint(placed);
    });
    const parts: HTMLElement[] = [
      h('p', { class: 'prepare-kind' }, pt(`kind.${placed.kind}`)),
      field(pt('selected.recipient'), recipient),
    ];
    if (canBeRequired(placed.kind)) {
      const required = h('input', { type: 'checkbox' });
      required.checked = placed.required;
      required.addEventListener('change', () => {
        placed.required = required.checked;
      });
      parts.push(h('label', { class: 'checkbox' }, required, pt('selected.required')));
    }
    if (placed.kind === 'readOnlyText') {
      const text = h('input', { type: 'text', class: 'input prepare-text', maxlength: 10_000 });
      text.value = placed.text;
      text.addEventListener('input', () => {
        placed.text = text.value;
        this.#paint(placed);
      });
      parts.push(field(pt('selected.text'), text));
    }
    const p = placed.position;
    const shown = (value: number) => roundFraction(value).toFixed(4);
    parts.push(
      h(
        'p',
        { class: 'hint prepare-position' },
        pt('selected.position', {
          page: placed.page,
          x: shown(p.percentX),
          y: shown(p.percentY),
          w: shown(p.percentWidth),
          h: shown(p.percentHeight),
        }),
      ),
    );
    if (placed.error) parts.push(messageBox('error', placed.error));
    const remove = h('button', { type: 'button', class: 'button button--danger' }, pt('selected.delete'));
    remove.addEventListener('click', () => this.#delete(placed));
    parts.push(remove);
    this.#selectedBox.replaceChildren(...parts);
  }

  // --- send, or copy the body ---

  #body(): Record<string, unknown> {
    return shareBody(this.#documentId, this.#recipients, this.#fields);
  }

  #renderOut(): void {
    const send = h(
      'button',
      { type: 'button', class: 'button button--primary prepare-send', disabled: this.#sent },
      pt('out.send'),
    );
    send.addEventListener('click', () => void this.#send(send));
    const copy = h('button', { type: 'button', class: 'button button--secondary' }, pt('out.copy'));
    copy.addEventListener('click', () => void this.#copy());
    const json = h('textarea', {
      class: 'input prepare-json',
      readonly: true,
      rows: 14,
      spellcheck: 'false',
    });
    json.value = this.#json;
    const jsonField = field(pt('out.json'), json);
    jsonField.hidden = this.#json === '';
    this.#outBox.replaceChildren(
      h(
        'p',
        { class: 'hint' },
        this.#fields.length === 0
          ? pt('fields.empty')
          : this.#fields.length === 1
            ? pt('fields.one')
            : pt('fields.count', { n: this.#fields.length }),
      ),
      h('div', { class: 'button-row' }, send, copy),
      h('div', { class: 'prepare-status' }, this.#lastStatus ?? null),
      jsonField,
    );
  }

  #status(message: HTMLElement): void {
    this.#lastStatus = message;
    this.#renderOut();
    message.scrollIntoView?.({ block: 'nearest' });
  }

  async #send(button: HTMLButtonElement): Promise<void> {
    if (this.#recipients.length === 0) {
      this.#status(messageBox('error', pt('out.noRecipients')));
      this.#shareTo.focus();
      return;
    }
    for (const placed of this.#fields) placed.error = undefined;
    this.#recipientErrors.clear();
    button.disabled = true;
    this.#main.setAttribute('aria-busy', 'true');
    try {
      await this.#api.json<unknown[]>('POST', '/share', this.#body());
      this.#sent = true;
      const names = this.#recipients.map((r) => r.shareTo).join(', ');
      this.#status(messageBox('success', pt('out.sent', { names })));
    } catch (error) {
      const message = apiMessage(error);
      const at = error instanceof ApiFailure ? blamed(message) : undefined;
      const placed = at?.part === 'field' ? this.#fields[at.index] : undefined;
      const recipient = at?.part === 'recipient' ? this.#recipients[at.index] : undefined;
      if (placed) placed.error = message;
      if (recipient) this.#recipientErrors.set(recipient.shareTo, message);
      for (const f of this.#fields) this.#paint(f);
      this.#renderRecipients();
      this.#status(messageBox('error', pt('out.failed', { message })));
      if (placed) {
        this.#select(placed.id, false);
        this.#viewer?.reveal(placed.element);
      }
    } finally {
      this.#main.removeAttribute('aria-busy');
      this.#renderSelected();
    }
  }

  async #copy(): Promise<void> {
    this.#json = JSON.stringify(this.#body(), null, 2);
    let copied = false;
    try {
      await navigator.clipboard.writeText(this.#json);
      copied = true;
    } catch {
      // No clipboard (an insecure origin, a refusal): the text is in the box to copy by hand.
    }
    this.#status(messageBox(copied ? 'success' : 'info', pt(copied ? 'out.copied' : 'out.copyFailed')));
    const json = this.#outBox.querySelector<HTMLTextAreaElement>('.prepare-json');
    if (!copied) json?.select();
  }
}
