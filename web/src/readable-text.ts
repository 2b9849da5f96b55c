import { announce, h } from './dom.js';
import { t } from './i18n.js';
import type { PdfViewer } from './pdf-viewer.js';

/** A field as the readable text lists it: where it is, what it says, and the way back to it. */
export interface ReadableField {
  page: number;
  /** Its top, a fraction of the page's height: the field is listed among the lines it stands by. */
  top: number;
  label: string;
  /** Leaves the readable text and puts the focus on the field on its page. */
  jump: () => void;
}

/**
 * The readable mode (issue 40: "at fit width the body text is about 6 CSS px, so every line needs
 * zooming"): the document's text layer as reflowed text at the page's own font size, page by page,
 * with each of the signer's fields listed where it stands among the lines, as a button that goes back
 * to the field on its page. A toggle (aria-pressed) switches it on and off.
 */
export class ReadableMode {
  readonly button: HTMLButtonElement;
  readonly #viewer: () => PdfViewer | undefined;
  readonly #fields: () => ReadableField[];
  #on = false;

  constructor(viewer: () => PdfViewer | undefined, fields: () => ReadableField[]) {
    this.#viewer = viewer;
    this.#fields = fields;
    this.button = h(
      'button',
      { type: 'button', class: 'button button--secondary readable-toggle', 'aria-pressed': 'false' },
      t('readable.show'),
    );
    this.button.addEventListener('click', () => void this.toggle());
  }

  /** A new render of the page (a new viewer, perhaps a new language): the pages again, the words anew. */
  reset(): void {
    this.#on = false;
    this.button.setAttribute('aria-pressed', 'false');
    this.button.textContent = t('readable.show');
  }

  get on(): boolean {
    return this.#on;
  }

  async toggle(on = !this.#on): Promise<void> {
    const viewer = this.#viewer();
    if (!viewer) return;
    this.#on = on;
    // A toggle keeps its name; its pressed state says which view is shown.
    this.button.setAttribute('aria-pressed', String(on));
    if (!on) {
      viewer.showInstead(undefined);
      return;
    }
    viewer.showInstead(await this.#panel(viewer));
    announce(t('readable.shown'));
  }

  async #panel(viewer: PdfViewer): Promise<HTMLElement> {
    const fields = this.#fields();
    const panel = h('article', { class: 'readable-text', 'aria-label': t('readable.title') });
    for (let page = 1; page <= viewer.pageCount; page++) {
      const id = `readable-page-${page}`;
      const section = h(
        'section',
        { class: 'readable-page', 'aria-labelledby': id },
        h('h2', { id, class: 'small-heading' }, t('readable.page', { n: page, total: viewer.pageCount })),
      );
      const lines = await viewer.textLines(page);
      const here = fields.filter((f) => f.page === page).sort((a, b) => a.top - b.top);
      let paragraph: HTMLElement | undefined;
      let last = -1;
      const chip = (field: ReadableField) => {
        paragraph = undefined;
        section.append(
          h(
            'p',
            { class: 'readable-field' },
            h(
              'button',
              { type: 'button', class: 'button button--secondary', onclick: field.jump },
              field.label,
            ),
          ),
        );
      };
      for (const line of lines) {
        while (here[0] && here[0].top <= line.top) chip(here.shift()!);
        // A gap of more than about two lines starts a new paragraph.
        if (!paragraph || line.top - last > 0.035) {
          paragraph = h('p', {});
          section.append(paragraph);
        } else paragraph.append(' ');
        paragraph.append(line.text);
        last = line.top;
      }
      for (const field of here) chip(field);
      panel.append(section);
    }
    return panel;
  }
}
