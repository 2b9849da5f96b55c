import { h } from './dom.js';
import { LANGUAGES, language, setLanguage, t } from './i18n.js';

/**
 * The frame of a page (index.html, verify.html) in the current language: the skip link, the language
 * menu (filled once; a choice sets the language, then calls `changed`), the document's title and
 * language.
 */
export function renderChrome(title: string, changed: () => void): void {
  const select = document.getElementById('language') as HTMLSelectElement | null;
  const label = document.querySelector<HTMLLabelElement>('label[for="language"]');
  const skip = document.querySelector<HTMLAnchorElement>('.skip-link');
  if (label) label.textContent = t('language');
  if (skip) skip.textContent = t('skip');
  document.title = title;
  document.documentElement.lang = language();
  if (!select) return;
  if (select.options.length === 0) {
    for (const [code, name] of Object.entries(LANGUAGES))
      select.append(h('option', { value: code, lang: code }, name));
    select.addEventListener('change', () => {
      setLanguage(select.value);
      changed();
    });
  }
  select.value = language();
}
