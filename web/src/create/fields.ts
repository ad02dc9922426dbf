// Labelled form fields bound to the create form's state, and the server's fieldViolations shown
// next to the field they name. Every input has a <label for>; its `data-field` is the request
// path it fills (model.ts formPathOf: "spec.workerPoolSpecs[0].replicaCount"), "[*]" standing for
// every pool where one field fills all of them (the training code).
import { FieldViolation } from '../api';
import { h } from '../util';
import { inFormWords } from './field_words';
import { formPathOf } from './model';

let nextId = 0;
export const fieldId = () => `f${++nextId}`;

export interface FieldOptions {
  path?: string;         // the request path (data-field)
  hint?: string;         // shown under the field
  type?: string;         // input type
  placeholder?: string;
  required?: boolean;
  min?: number; max?: number; step?: string;
  list?: string;         // a datalist id
  rows?: number;         // a textarea of at least this many rows (it grows with its lines)
  readonly?: boolean;    // shown, not editable
}

// A textarea as tall as its lines (at least `min` rows); wrapped long lines make it taller still
// while it is shown.
function fitRows(area: HTMLTextAreaElement, min: number) {
  area.rows = Math.max(min, area.value.split('\n').length);
  area.style.height = '';
  if (area.scrollHeight > area.clientHeight && area.clientHeight > 0) area.style.height = `${area.scrollHeight + 2}px`;
}

// A labelled text/number input or textarea: `get` reads the state, `set` writes it on each edit.
export function inputField(label: string, get: () => string | number, set: (v: string) => void,
  o: FieldOptions = {}): HTMLElement {
  const id = fieldId();
  const attrs: Record<string, unknown> = {
    id, name: id, 'data-field': o.path, placeholder: o.placeholder, required: o.required,
    min: o.min, max: o.max, step: o.step, list: o.list, 'aria-describedby': o.hint ? `${id}-hint` : undefined,
    readonly: o.readonly,
  };
  const input = (o.rows
    ? h('textarea', { ...attrs, rows: o.rows })
    : h('input', { ...attrs, type: o.type ?? 'text' })) as HTMLInputElement;
  input.value = String(get());
  const fit = o.rows ? () => fitRows(input as unknown as HTMLTextAreaElement, o.rows!) : () => { /* an input */ };
  fit();
  input.addEventListener('input', () => { set(input.value); clearError(input); fit(); });
  input.addEventListener('focus', fit);
  return wrap(label, id, input, o.hint);
}

// A labelled select of `options` ([value, text] pairs).
export function selectField(label: string, options: [string, string][], get: () => string,
  set: (v: string) => void, o: FieldOptions = {}): HTMLElement {
  const id = fieldId();
  const select = h('select', { id, name: id, 'data-field': o.path },
    ...options.map(([v, t]) => h('option', { value: v, text: t, selected: v === get() }))) as HTMLSelectElement;
  select.addEventListener('change', () => { set(select.value); clearError(select); });
  return wrap(label, id, select, o.hint);
}

export function checkboxField(label: string, get: () => boolean, set: (v: boolean) => void): HTMLElement {
  const id = fieldId();
  const box = h('input', { id, name: id, type: 'checkbox', checked: get() }) as HTMLInputElement;
  box.addEventListener('change', () => set(box.checked));
  return h('div.field.check', {}, box, h('label', { for: id, text: label }));
}

function wrap(label: string, id: string, control: HTMLElement, hint?: string): HTMLElement {
  return h('div.field', {}, h('label', { for: id, text: label }), control,
    hint ? h('div.hint', { id: `${id}-hint`, text: hint }) : null,
    h('div.field-error', { role: 'alert', hidden: true }));
}

// Where a control's message goes: a group's own slot, else the slot beside the input.
function errorSlotOf(control: Element): HTMLElement | null {
  const holder = control.tagName === 'FIELDSET' ? control : control.parentElement;
  return holder?.querySelector(':scope > .field-error') ?? null;
}

function clearError(control: Element) {
  control.removeAttribute('aria-invalid');
  const err = errorSlotOf(control);
  if (err) { err.hidden = true; err.textContent = ''; }
}

export function clearErrors(root: HTMLElement) {
  root.querySelectorAll('[aria-invalid]').forEach(clearError);
}

// The control a violation's field path belongs to: the exact path, the same path for every pool
// ("[*]"), else the field whose path is the longest prefix of it (a message about
// "spec.workerPoolSpecs[1].machineSpec.machineType" goes to that pool's machine type field).
export function controlFor(root: HTMLElement, field: string): HTMLElement | null {
  const path = formPathOf(field);
  const fields = [...root.querySelectorAll<HTMLElement>('[data-field]')];
  const generic = path.replace(/workerPoolSpecs\[\d+\]/, 'workerPoolSpecs[*]');
  const exact = fields.find((el) => el.dataset.field === path) ?? fields.find((el) => el.dataset.field === generic);
  if (exact) return exact;
  let best: HTMLElement | null = null;
  for (const el of fields) {
    const f = el.dataset.field!;
    const prefix = path.startsWith(f + '.') || path.startsWith(f + '[') || generic.startsWith(f + '.');
    if (prefix && (!best || f.length > best.dataset.field!.length)) best = el;
  }
  return best;
}

// Shows each violation next to its field; returns those no field took, and the first control.
export function showViolations(root: HTMLElement, violations: FieldViolation[]) {
  clearErrors(root);
  const unplaced: FieldViolation[] = [];
  let first: HTMLElement | null = null;
  for (const v of violations) {
    const control = controlFor(root, v.field);
    const err = control ? errorSlotOf(control) : null;
    if (!control || !err) { unplaced.push(v); continue; }
    control.setAttribute('aria-invalid', 'true');
    err.hidden = false;
    const text = inFormWords(v.description);
    err.textContent = err.textContent ? `${err.textContent} ${text}` : text;
    first ??= control;
  }
  return { unplaced, first };
}

// Rows of key/value pairs (env vars, labels) with add and remove.
export function keyValueRows(title: string, rows: { key: string; value: string }[], path: string,
  keyLabel = 'Name', valueLabel = 'Value'): HTMLElement {
  const box = h('div.kv');
  const render = () => {
    box.replaceChildren(...rows.map((row, i) => h('div.kv-row', {},
      inputField(`${keyLabel} ${i + 1}`, () => row.key, (v) => { row.key = v; }, { path: `${path}[${i}]` }),
      inputField(`${valueLabel} ${i + 1}`, () => row.value, (v) => { row.value = v; }),
      h('button.remove', { type: 'button', text: 'Remove', 'aria-label': `remove ${keyLabel.toLowerCase()} ${i + 1}`,
        onclick: () => { rows.splice(i, 1); render(); } }))),
    h('button', { type: 'button', text: `Add ${title}`, onclick: () => { rows.push({ key: '', value: '' }); render(); } }));
  };
  render();
  return h('fieldset.group', { 'data-field': path }, h('legend', { text: title[0].toUpperCase() + title.slice(1) + 's' }),
    h('div.field-error', { role: 'alert', hidden: true }), box);
}
