// Any query of the registry (heapx list), drawn from its generic result:
// a form of its arguments, then its tables, trees and charts. A new
// analysis appears here without code of its own.
import { h, append, clear } from '../dom.js';
import { get } from '../api.js';
import { href } from '../route.js';
import { documentView, failure, into, state } from '../widgets.js';

export default function queryView(box, r) {
  const q = state.session.queries.find(x => x.name === r.arg);
  if (!q) {
    box.appendChild(failure(new Error(`there is no query "${r.arg}"`)));
    return;
  }
  append(box, h('h2', {}, q.name), h('p', { class: 'lead' }, q.title));
  if (!q.runnable) {
    box.appendChild(h('p', { class: 'note' }, `${q.name} takes ${q.min_inputs} snapshots; start heapx serve with the file and earlier snapshots of the same program (heapx serve FILE BASELINE...).`));
    return;
  }
  const values = {};
  const form = h('form', { class: 'args', autocomplete: 'off' });
  for (const a of q.args) {
    const id = 'arg-' + a.name;
    const given = r.params.get(a.name);
    let input;
    if (a.kind === 'bool') {
      input = h('input', { type: 'checkbox', id, name: a.name, checked: given !== null ? given === 'true' : a.default });
    } else {
      input = h('input', { type: a.kind === 'int' || a.kind === 'float' ? 'number' : 'text', id, name: a.name, step: a.kind === 'float' ? 'any' : undefined,
        value: given !== null ? given : a.kind === 'size' ? String(a.default) : String(a.default), placeholder: a.required ? 'required' : '' });
    }
    values[a.name] = input;
    form.appendChild(h('label', { for: id, title: a.help }, a.name, ' ', input));
  }
  form.appendChild(h('button', { type: 'submit' }, 'Run'));
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    const params = {};
    for (const a of q.args) {
      const el = values[a.name];
      const v = a.kind === 'bool' ? String(el.checked) : el.value;
      if (v !== String(a.default)) params[a.name] = v;
    }
    const next = href('query', q.name, params);
    if (location.hash === next) run();
    else location.hash = next;
  });
  const out = h('div', { class: 'result' });
  append(box, form, out);
  const run = () => {
    const params = { form: 'generic' };
    for (const [k, v] of r.params.entries()) params[k] = v;
    if (q.args.some(a => a.required && !params[a.name])) {
      clear(out).appendChild(h('p', { class: 'note' }, 'Fill in the required arguments and run.'));
      return;
    }
    into(out, async () => documentView(await get('queries/' + encodeURIComponent(q.name), params)));
  };
  run();
}
