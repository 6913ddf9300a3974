// Comparison (DevTools): per class, the objects new since the last
// baseline and those deleted, with their sizes; a class opens to its new
// objects.
import { h, append, clear, cut, fmtBytes, fmtCount, fmtID, formatValue, objectLink } from '../dom.js';
import { get } from '../api.js';
import { current, setParams } from '../route.js';
import { classWord, closeRow, failure, level, pager, state, warnings } from '../widgets.js';
import { selectionPanel } from '../objectpanel.js';
import { instanceLoader } from './summary.js';

const PAGE = 100;

const cols = () => [
  ['constructor', classWord(), 'text'], ['new', '# New', 'count'], ['deleted', '# Deleted', 'count'], ['delta', '# Delta', 'delta'],
  ['alloc_size', 'Alloc. size', 'bytes'], ['freed_size', 'Freed size', 'bytes'], ['size_delta', 'Size delta', 'bytes_delta'],
  ['base_count', 'Base count', 'count'], ['target_count', 'Target count', 'count'],
];

export default function comparison(box, r) {
  const session = state.session;
  box.appendChild(h('h2', {}, 'Comparison'));
  if (!session.baselines.length) {
    box.appendChild(h('p', { class: 'note' }, 'There is no earlier snapshot to compare with. Start heapx serve with the file and earlier snapshots of the same program, oldest first: heapx serve FILE BASELINE...'));
    return;
  }
  const p = r.params;
  let filter = p.get('filter') || '';
  let sort = p.get('sort') || '';
  let order = p.get('order') || 'desc';
  let offset = Number(p.get('offset')) || 0;
  const open = new Set((p.get('open') || '').split(',').filter(Boolean));
  const sel = h('div', { class: 'selection-box' });
  const select = id => {
    setParams({ sel: id });
    for (const tr of box.querySelectorAll('tr.selected')) tr.classList.remove('selected');
    for (const tr of box.querySelectorAll(`tr[data-id="${CSS.escape(id)}"]`)) tr.classList.add('selected');
    clear(sel).appendChild(selectionPanel(id));
  };
  const info = h('div');
  const input = h('input', { type: 'search', class: 'filter', placeholder: `Filter by ${classWord().toLowerCase()}`, value: filter, 'aria-label': 'Class filter', spellcheck: 'false' });
  const pagerBox = h('span', { class: 'pager-box' });
  const head = h('tr');
  const body = h('tbody');
  append(box, info, h('div', { class: 'toolbar' }, input, pagerBox),
    h('div', { class: 'scroll' }, h('table', { class: 'grid comparison' }, h('thead', {}, head), body)), sel);
  const objCells = o => [h('td'), h('td'), h('td'), h('td', { class: 'num' }, fmtBytes(o.shallow_size)), h('td'), h('td', { class: 'num' }, 'retains ' + fmtBytes(o.retained_size)), h('td'), h('td')];

  const load = async () => {
    clear(head);
    for (const [key, title, kind] of cols()) {
      const active = sort === key;
      const th = h('th', { class: (kind !== 'text' ? 'num ' : '') + 'sortable' + (active ? ' sorted' : '') }, h('button', { type: 'button' }, title, active ? (order === 'asc' ? ' ▲' : ' ▼') : ''));
      th.firstChild.addEventListener('click', () => {
        if (sort === key) order = order === 'asc' ? 'desc' : 'asc';
        else { sort = key; order = kind === 'text' ? 'asc' : 'desc'; }
        offset = 0;
        setParams({ sort, order, offset: 0 });
        load();
      });
      head.appendChild(th);
    }
    clear(body).appendChild(h('tr', {}, h('td', { colspan: 9 }, 'Loading…')));
    let d;
    try {
      d = await get('diff', { filter, sort, order, offset, limit: PAGE });
    } catch (err) {
      clear(body).appendChild(h('tr', {}, h('td', { colspan: 9 }, failure(err))));
      return;
    }
    append(clear(info), warnings(d.warnings),
      h('p', { class: 'note' }, `${d.target.split('/').pop()} compared with ${d.base.split('/').pop()}: ` + (d.matching === 'id'
        ? `${fmtCount(d.new)} new objects (${fmtBytes(d.alloc_size)}), ${fmtCount(d.deleted)} deleted (${fmtBytes(d.freed_size)}); objects matched by id.`
        : 'objects cannot be matched by id between these snapshots, so classes are compared by count and size.')));
    clear(pagerBox).appendChild(pager({ total: d.matched, offset: d.offset }, PAGE, o => { offset = o; setParams({ offset: o }); load(); }));
    clear(body);
    for (const c of d.classes) {
      const canOpen = d.matching === 'id' && c.new > 0 && c.class >= 0;
      const deletedCell = d.matching === 'id' && c.deleted > 0
        ? h('button', { type: 'button', class: 'link deleted', title: 'List the deleted objects (in the baseline)', onclick: () => deleted(c) }, formatValue('count', c.deleted)) : null;
      const toggle = canOpen ? h('button', { type: 'button', class: 'toggle', 'aria-expanded': 'false', title: 'Show the new objects' }, '▸') : h('span', { class: 'toggle-space' });
      const tr = h('tr', { class: 'class-row', 'data-row': c.index, 'data-name': c.constructor },
        cols().map(([key, , kind], i) => h('td', { class: kind !== 'text' ? 'num' : 'first' }, i === 0 ? [toggle, h('span', { class: 'name', title: c.constructor }, cut(c.constructor))] : key === 'deleted' && deletedCell ? deletedCell : formatValue(kind, c[key]))));
      tr._kids = [];
      const openIt = () => {
        tr._isOpen = true;
        toggle.textContent = '▾';
        level(body, tr, 1, instanceLoader(`diff/${c.index}/new`, select, objCells), 9);
      };
      if (canOpen) {
        toggle.addEventListener('click', () => {
          if (tr._isOpen) {
            closeRow(tr);
            toggle.textContent = '▸';
            open.delete(String(c.index));
          } else {
            openIt();
            open.add(String(c.index));
          }
          setParams({ open: [...open].join(',') });
        });
      }
      body.appendChild(tr);
      if (canOpen && open.has(String(c.index))) openIt();
    }
    if (!d.classes.length) body.appendChild(h('tr', {}, h('td', { colspan: 9 }, filter ? 'No class matches the filter.' : 'Nothing changed.')));
  };
  // deleted lists, below the table, the objects of comparison row c the
  // baseline has and the file does not, each opening in the inspector
  // on the baseline.
  const deleted = async (c, offset = 0) => {
    setParams({ deleted: c.index, deleted_offset: offset || '' });
    clear(sel).appendChild(h('p', {}, 'Loading…'));
    let p;
    try {
      p = await get(`diff/${c.index}/deleted`, { offset, limit: PAGE });
    } catch (err) {
      clear(sel).appendChild(failure(err));
      return;
    }
    const base = state.session.inputs[p.snapshot];
    append(clear(sel),
      h('h3', {}, `Deleted ${p.class.constructor} objects: in ${base ? base.path.split('/').pop() : 'the baseline'}, not in ${state.session.file.split('/').pop()}`),
      pager({ total: p.total, offset: p.offset }, PAGE, o => deleted(c, o)),
      h('table', { class: 'grid deleted-objects' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Object'), h('th', { class: 'num' }, 'Shallow size'), h('th', { class: 'num' }, 'Retained size'))),
        h('tbody', {}, p.objects.map(o => h('tr', { 'data-id': fmtID(o.id) },
          h('td', {}, objectLink(o, {}, p.snapshot)), h('td', { class: 'num' }, fmtBytes(o.shallow_size)), h('td', { class: 'num' }, fmtBytes(o.retained_size)))))));
  };
  let timer;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => { filter = input.value; offset = 0; setParams({ filter, offset: 0 }); load(); }, 200);
  });
  load();
  const s = current().params.get('sel');
  if (s) select(s);
  const del = current().params.get('deleted');
  if (del) deleted({ index: Number(del), constructor: '' }, Number(current().params.get('deleted_offset')) || 0);
}
