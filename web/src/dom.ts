/**
 * A few DOM helpers instead of a framework. Text always goes in as text (never as HTML), and styles
 * only through classes or the CSSOM: the page's Content-Security-Policy forbids inline ones.
 */

type Child = Node | string | null | undefined | false;
type Attributes = Record<string, string | number | boolean | undefined | null | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (name === 'class') element.className = String(value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Element, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

let ids = 0;
/** A fresh element id, for label/aria-describedby pairs. */
export function uid(prefix: string): string {
  ids += 1;
  return `${prefix}-${ids}`;
}

/** A labelled form control: `<label for>` + the control + an optional hint tied by aria-describedby. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement,
  hint?: string,
): HTMLDivElement {
  control.id ||= uid('f');
  const wrapper = h('div', { class: 'form-field' }, h('label', { for: control.id }, label));
  if (hint) {
    const hintId = uid('hint');
    control.setAttribute('aria-describedby', hintId);
    append(wrapper, h('p', { class: 'hint', id: hintId }, hint));
  }
  append(wrapper, control);
  return wrapper;
}

/** Says something to screen readers through the page's polite live region. */
export function announce(message: string): void {
  const region = document.getElementById('status');
  if (!region) return;
  region.textContent = '';
  // A new text node after a tick, so the same message said twice is read twice.
  window.setTimeout(() => {
    region.textContent = message;
  }, 30);
}

/** Moves focus to an element that is not normally focusable (a heading after a view change). */
export function focusHeading(element: HTMLElement | null): void {
  if (!element) return;
  if (!element.hasAttribute('tabindex')) element.setAttribute('tabindex', '-1');
  element.focus();
}

/** A message box: `alert` for errors (read at once), `status` for news. */
export function messageBox(kind: 'error' | 'info' | 'success', text: string): HTMLDivElement {
  return h('div', { class: `message message--${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

export function clear(element: Element): void {
  element.replaceChildren();
}
