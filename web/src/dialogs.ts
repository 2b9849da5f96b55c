import { append, field, h, messageBox, uid } from './dom.js';
import { t } from './i18n.js';
import { imageSignature, SignaturePad, typedSignature } from './signature-pad.js';

/**
 * Modal dialogs on the native <dialog> element: it keeps focus inside, closes on Escape and gives
 * focus back to what opened it.
 */
function openDialog(title: string, build: (dialog: HTMLDialogElement, body: HTMLElement) => void) {
  const titleId = uid('dialog-title');
  const body = h('div', { class: 'dialog-body' });
  const dialog = h(
    'dialog',
    { class: 'dialog', 'aria-labelledby': titleId },
    h('h2', { id: titleId, class: 'dialog-title' }, title),
    body,
  );
  const opener = document.activeElement as HTMLElement | null;
  // Registered before the caller's own listeners: focus is back on the opener before the caller's
  // code runs, so the caller may move it on (to the next field).
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (opener?.isConnected) opener.focus();
  });
  build(dialog, body);
  document.body.append(dialog);
  // Focused by hand, not by `autofocus`: Chromium ignores that in a frame of another site (an
  // embedding app, DESIGN: Embedding), where the dialog would open with focus on its first button.
  const first = dialog.querySelector<HTMLElement>('[autofocus]');
  first?.removeAttribute('autofocus');
  dialog.showModal();
  first?.focus();
  return dialog;
}

/** Cancel, and the form's submit button (Enter in a text input submits, as forms do). */
function footer(confirmLabel: string, onCancel: () => void, danger = false) {
  return h(
    'div',
    { class: 'dialog-actions' },
    h('button', { type: 'button', class: 'button button--secondary', onclick: onCancel }, t('cancel')),
    h(
      'button',
      { type: 'submit', class: `button ${danger ? 'button--danger' : 'button--primary'}` },
      confirmLabel,
    ),
  );
}

/**
 * Making a signature or initials: draw (mouse, pen, touch), type, or upload an image. Opened from the
 * keyboard it starts on Type, since drawing needs a pointer. Resolves to a PNG, or undefined.
 */
export function signatureDialog(
  kind: 'signature' | 'initials',
  byKeyboard: boolean,
): Promise<Blob | undefined> {
  return new Promise((resolve) => {
    let result: Blob | undefined;
    openDialog(t(kind === 'signature' ? 'dialog.signature' : 'dialog.initials'), (dialog, body) => {
      const error = h('div', { class: 'dialog-error' });
      const pad = new SignaturePad(t('draw.label'));
      const typed = h('input', {
        type: 'text',
        autocomplete: kind === 'signature' ? 'name' : 'off',
        maxlength: kind === 'signature' ? 80 : 10,
        class: 'input',
      });
      const preview = h('p', { class: 'typed-preview', 'aria-hidden': 'true' });
      typed.addEventListener('input', () => {
        preview.textContent = typed.value;
      });
      const upload = h('input', { type: 'file', accept: 'image/png,image/jpeg', class: 'input' });
      const uploadPreview = h('img', { class: 'upload-preview', alt: '', hidden: true });
      upload.addEventListener('change', () => {
        const file = upload.files?.[0];
        if (uploadPreview.src) URL.revokeObjectURL(uploadPreview.src);
        if (file) {
          uploadPreview.src = URL.createObjectURL(file);
          uploadPreview.hidden = false;
        } else uploadPreview.hidden = true;
      });

      const panels = {
        draw: h(
          'div',
          {},
          h('div', { class: 'pad-frame' }, pad.canvas),
          h(
            'div',
            { class: 'pad-actions' },
            h('p', { class: 'hint' }, t('draw.hint')),
            h(
              'button',
              { type: 'button', class: 'button button--secondary', onclick: () => pad.clear() },
              t('draw.clear'),
            ),
          ),
        ),
        type: h(
          'div',
          {},
          field(t(kind === 'signature' ? 'type.signature' : 'type.initials'), typed),
          preview,
        ),
        upload: h('div', {}, field(t('upload.label'), upload), uploadPreview),
      };
      type Mode = keyof typeof panels;
      const modes: Mode[] = ['draw', 'type', 'upload'];
      let mode: Mode = byKeyboard ? 'type' : 'draw';
      const tabs = new Map<Mode, HTMLButtonElement>();
      const tablist = h('div', { class: 'tabs', role: 'tablist', 'aria-label': t('dialog.modes') });
      for (const m of modes) {
        const panelId = uid('panel');
        const tab = h(
          'button',
          { type: 'button', role: 'tab', id: uid('tab'), 'aria-controls': panelId },
          t(`tab.${m}`),
        );
        tab.addEventListener('click', () => select(m));
        tabs.set(m, tab);
        tablist.append(tab);
        const panel = panels[m];
        panel.id = panelId;
        panel.setAttribute('role', 'tabpanel');
        panel.setAttribute('aria-labelledby', tab.id);
        panel.className = 'tab-panel';
      }
      tablist.addEventListener('keydown', (event) => {
        const index = modes.indexOf(mode);
        const next =
          event.key === 'ArrowRight' ? (index + 1) % 3 : event.key === 'ArrowLeft' ? (index + 2) % 3 : -1;
        if (next === -1) return;
        event.preventDefault();
        const target = modes[next] as Mode;
        select(target);
        tabs.get(target)?.focus();
      });
      function select(m: Mode) {
        mode = m;
        for (const [name, tab] of tabs) {
          const active = name === m;
          tab.setAttribute('aria-selected', String(active));
          tab.tabIndex = active ? 0 : -1;
          panels[name].hidden = !active;
        }
        error.replaceChildren();
        if (m === 'draw') window.requestAnimationFrame(() => pad.isEmpty && pad.resize());
      }

      const form = h('form', { class: 'dialog-form', novalidate: true });
      append(form, tablist, panels.draw, panels.type, panels.upload, error);
      const cancel = () => dialog.close();
      const confirm = async () => {
        const blob =
          mode === 'draw'
            ? await pad.toBlob()
            : mode === 'type'
              ? await typedSignature(typed.value)
              : upload.files?.[0]
                ? await imageSignature(upload.files[0])
                : undefined;
        if (!blob) {
          const bad = mode === 'upload' && upload.files?.[0];
          error.replaceChildren(messageBox('error', t(bad ? 'dialog.badImage' : 'dialog.empty')));
          return;
        }
        result = blob;
        dialog.close();
      };
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        void confirm();
      });
      append(form, footer(t('dialog.use'), cancel));
      body.append(form);
      dialog.addEventListener('close', () => resolve(result));
      select(mode);
      // showModal() focuses the autofocus element at once, so typing right away lands in the right place.
      (mode === 'type' ? typed : tabs.get(mode))?.setAttribute('autofocus', '');
      window.requestAnimationFrame(() => pad.resize());
    });
  });
}

export interface FormInput {
  name: string;
  label: string;
  kind: 'text' | 'email' | 'textarea' | 'file' | 'password' | 'date' | 'number' | 'select';
  /** Marked in the label, and an empty value is refused on the control. */
  required?: boolean;
  value?: string;
  maxLength?: number;
  accept?: string;
  autocomplete?: string;
  /** Under the label, tied to the control (aria-describedby). */
  hint?: string;
  /** A select's choices (an empty first choice asks to choose, unless `value` is one of them). */
  options?: { value: string; label: string }[];
  /** A number's or a date's bounds and step, as the native control takes them. */
  min?: string;
  max?: string;
  step?: string;
  /**
   * Why the value cannot be taken, shown on the control (the control is passed too: a number input
   * whose text is no number has the value '' and `validity.badInput`), or undefined.
   */
  validate?: (
    value: string,
    control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement,
  ) => string | undefined;
}

type Control = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

/** The native control of an input: a select with its choices, a textarea, or an input of its type. */
function controlFor(input: FormInput): Control {
  if (input.kind === 'select') {
    const select = h('select', { class: 'input' });
    const chosen = input.options?.some((o) => o.value === input.value);
    if (!chosen) select.append(h('option', { value: '' }, t('select.placeholder')));
    for (const option of input.options ?? [])
      select.append(h('option', { value: option.value }, option.label));
    return select;
  }
  if (input.kind === 'textarea')
    return h('textarea', { rows: 4, class: 'input', maxlength: input.maxLength });
  return h('input', {
    type: input.kind,
    class: 'input',
    maxlength:
      input.kind === 'file' || input.kind === 'date' || input.kind === 'number' ? undefined : input.maxLength,
    accept: input.accept,
    autocomplete: input.autocomplete,
    min: input.min,
    max: input.max,
    step: input.step,
    inputmode: input.kind === 'number' ? 'decimal' : undefined,
  });
}

/**
 * A small form in a dialog (reject, delegate, a field's value, a requested file). Each input's problem
 * (empty while required, or its `validate`) shows on the control itself, which gets the focus; `check`
 * may refuse the values as a whole with a message. The dialog then stays open. Resolves to the
 * values, or undefined.
 */
export function formDialog(options: {
  title: string;
  intro?: string;
  inputs: FormInput[];
  confirm: string;
  danger?: boolean;
  check?: (values: Record<string, string>, files: Record<string, File | undefined>) => string | undefined;
}): Promise<{ values: Record<string, string>; files: Record<string, File | undefined> } | undefined> {
  return new Promise((resolve) => {
    let result: { values: Record<string, string>; files: Record<string, File | undefined> } | undefined;
    openDialog(options.title, (dialog, body) => {
      const form = h('form', { class: 'dialog-form', novalidate: true });
      if (options.intro) form.append(h('p', {}, options.intro));
      const controls = new Map<string, { control: Control; error: HTMLElement }>();
      for (const input of options.inputs) {
        const control = controlFor(input);
        if (input.required) control.setAttribute('aria-required', 'true');
        if (input.value) control.value = input.value;
        const label = input.required ? t('form.requiredLabel', { label: input.label }) : input.label;
        const wrapper = field(label, control, input.hint);
        const error = h('p', { class: 'field-error', id: uid('error'), role: 'alert', hidden: true });
        wrapper.append(error);
        controls.set(input.name, { control, error });
        form.append(wrapper);
      }
      const error = h('div', { class: 'dialog-error' });
      form.append(error);
      form.append(footer(options.confirm, () => dialog.close(), options.danger));
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        const values: Record<string, string> = {};
        const files: Record<string, File | undefined> = {};
        let firstProblem: Control | undefined;
        for (const input of options.inputs) {
          const found = controls.get(input.name);
          if (!found) continue;
          const { control } = found;
          if (control instanceof HTMLInputElement && input.kind === 'file')
            files[input.name] = control.files?.[0];
          else values[input.name] = control.value.trim();
          const empty = input.kind === 'file' ? !files[input.name] : !values[input.name];
          const badInput = control instanceof HTMLInputElement && control.validity.badInput;
          const problem =
            empty && input.required && !badInput
              ? t('form.empty')
              : empty && !badInput
                ? undefined
                : input.validate?.(values[input.name] ?? '', control);
          showProblem(control, found.error, problem);
          if (problem) firstProblem ??= control;
        }
        const problem = firstProblem ? undefined : options.check?.(values, files);
        error.replaceChildren(...(problem ? [messageBox('error', problem)] : []));
        if (firstProblem || problem) {
          firstProblem?.focus();
          return;
        }
        result = { values, files };
        dialog.close();
      });
      body.append(form);
      dialog.addEventListener('close', () => resolve(result));
      form.querySelector('input, textarea, select')?.setAttribute('autofocus', '');
    });
  });
}

/**
 * A control's problem, shown under it and read with it (aria-invalid, aria-describedby), or cleared.
 * Its element is an alert: the message is read out when it appears, not only with the control.
 */
function showProblem(control: Control, error: HTMLElement, problem: string | undefined): void {
  const described = (control.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .filter((id) => id && id !== error.id);
  error.textContent = problem ?? '';
  error.hidden = !problem;
  if (problem) {
    control.setAttribute('aria-invalid', 'true');
    described.push(error.id);
  } else control.removeAttribute('aria-invalid');
  if (described.length > 0) control.setAttribute('aria-describedby', described.join(' '));
  else control.removeAttribute('aria-describedby');
}
