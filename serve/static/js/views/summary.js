// Summary (DevTools): the classes, sortable and filtered; a class
// expands to its instances, largest retained size first, an instance to
// its references; a selected instance shows its retainers and paths.
import { h, append, clear, cut, fmtBytes, fmtCount, fmtDistance, fmtID, fmtPercent, frameLocation } from '../dom.js';
import { get } from '../api.js';
import { current, setParams } from '../route.js';
import { classWord, closeRow, failure, level, pager, referenceLoader, selectButton, state } from '../widgets.js';
import { selectionPanel } from '../objectpanel.js';

const PAGE = 100;
const INSTANCES = 50;

const columns = () => [
  { key: 'constructor', title: classWord(), num: false },
  { key: 'distance', title: 'Distance', num: true },
  { key: 'count', title: 'Count', num: true },
  { key: 'shallow_size', title: 'Shallow size', num: true, pct: true },
  { key: 'retained_size', title: 'Retained size', num: true, pct: true },
];

// rowCells are an object's cells under the Summary's columns.
const rowCells = o => [h('td', { class: 'num' }, fmtDistance(o.distance)), h('td'), h('td', { class: 'num' }, fmtBytes(o.shallow_size)), h('td'),
  h('td', { class: 'num' }, fmtBytes(o.retained_size)), h('td')];

// instanceLoader loads a page of a list of objects (path, an API
// endpoint answering an object page) as tree items, each expanding to its
// references.
export function instanceLoader(path, select, cells = rowCells, params = {}) {
  return async offset => {
    const p = await get(path, { ...params, offset, limit: INSTANCES });
    return {
      total: p.total, offset: p.offset, limit: INSTANCES,
      items: p.objects.map(o => ({
        first: selectButton(o, select),
        cells: cells(o),
        kids: referenceLoader(fmtID(o.id), select, cells),
        attrs: { class: 'instance', 'data-id': fmtID(o.id) },
      })),
    };
  };
}

export default function summary(box, r) {
  const p = r.params;
  const total = state.session.total_size;
  let filter = p.get('filter') || '';
  let sort = p.get('sort') || 'retained_size';
  let order = p.get('order') || (sort === 'constructor' || sort === 'distance' ? 'asc' : 'desc');
  let offset = Number(p.get('offset')) || 0;
  // DevTools' filter "Objects allocated between Snapshot 1 and Snapshot
  // 2", offered with baselines of one process taken in one session.
  const filters = state.session.allocation_filters || [];
  let allocated = filters.some(f => f.key === p.get('allocated')) ? p.get('allocated') : '';
  const open = new Set((p.get('open') || '').split(',').filter(Boolean));
  const sel = h('div', { class: 'selection-box' });

  const select = id => {
    setParams({ sel: id });
    for (const tr of box.querySelectorAll('tr.selected')) tr.classList.remove('selected');
    for (const tr of box.querySelectorAll(`tr[data-id="${CSS.escape(id)}"]`)) tr.classList.add('selected');
    clear(sel).appendChild(selectionPanel(id));
    sel.scrollIntoView({ block: 'nearest' });
  };

  const input = h('input', { type: 'search', class: 'filter', placeholder: `Filter by ${classWord().toLowerCase()}`, value: filter, 'aria-label': 'Class filter', spellcheck: 'false' });
  const count = h('span', { class: 'count' });
  let allocSelect = null;
  if (state.session.baselines.length) {
    const note = state.session.allocation_filters_note;
    allocSelect = h('select', { class: 'allocated', 'aria-label': 'Objects to count', disabled: !filters.length, title: note || 'Count only the objects allocated between two snapshots (by their ids)' },
      h('option', { value: '' }, 'All objects'),
      ...filters.map(f => h('option', { value: f.key, selected: f.key === allocated }, f.title)));
    allocSelect.addEventListener('change', () => {
      allocated = allocSelect.value;
      offset = 0;
      open.clear();
      setParams({ allocated, offset: 0, open: '' });
      load();
    });
  }
  const head = h('tr');
  const body = h('tbody');
  const pagerBox = h('div', { class: 'pager-box' });
  const table = h('table', { class: 'grid summary' }, h('thead', {}, head), body);
  append(box, h('h2', {}, 'Summary'), h('div', { class: 'toolbar' }, allocSelect, input, count, pagerBox), h('div', { class: 'scroll' }, table), sel);

  const drawHead = () => {
    clear(head);
    for (const c of columns()) {
      const active = sort === c.key;
      const th = h('th', { class: (c.num ? 'num ' : '') + 'sortable' + (active ? ' sorted' : ''), colspan: c.pct ? 2 : 1, 'aria-sort': active ? (order === 'asc' ? 'ascending' : 'descending') : 'none' },
        h('button', { type: 'button' }, c.title, active ? (order === 'asc' ? ' ▲' : ' ▼') : ''));
      th.firstChild.addEventListener('click', () => {
        if (sort === c.key) order = order === 'asc' ? 'desc' : 'asc';
        else { sort = c.key; order = c.num && c.key !== 'distance' ? 'desc' : 'asc'; }
        offset = 0;
        setParams({ sort, order, offset: 0 });
        load();
      });
      head.appendChild(th);
    }
  };

  const toggleOpen = (c, isOpen) => {
    if (isOpen) open.add(String(c)); else open.delete(String(c));
    setParams({ open: [...open].join(',') });
  };

  const load = async () => {
    drawHead();
    clear(body).appendChild(h('tr', {}, h('td', { colspan: 8 }, 'Loading…')));
    let page;
    try {
      page = await get('classes', { filter, sort, order, offset, limit: PAGE, allocated });
    } catch (err) {
      clear(body).appendChild(h('tr', {}, h('td', { colspan: 8 }, failure(err))));
      return;
    }
    clear(body);
    count.textContent = filter ? `${fmtCount(page.matched)} of ${fmtCount(page.class_count)} classes` : `${fmtCount(page.class_count)} classes`;
    if (page.allocated) count.textContent += ` · ${fmtCount(page.allocated.count)} objects, ${fmtBytes(page.allocated.shallow_size)}`;
    clear(pagerBox).appendChild(pager({ total: page.matched, offset: page.offset }, PAGE, o => { offset = o; setParams({ offset: o }); load(); }));
    for (const c of page.classes) {
      const toggle = h('button', { type: 'button', class: 'toggle', 'aria-expanded': 'false', title: 'Show the instances' }, '▸');
      const name = c.constructor + (c.location ? ` (script ${c.location.script_id}:${c.location.line + 1}:${c.location.column + 1})` : '');
      // Dumps with allocation stacks say where most of the class was
      // allocated (heapx summary's "Allocated in").
      const a = c.allocation_site;
      const site = a ? h('span', { class: 'site', title: `${fmtCount(a.count)} of its objects were allocated in ${a.function}` },
        ` ${a.function} ${frameLocation(a)} (${fmtPercent(a.percent)})`) : null;
      const tr = h('tr', { class: 'class-row', 'data-class': c.index, 'data-name': c.constructor },
        h('td', { class: 'first' }, toggle, h('span', { class: 'name', title: name }, cut(name)), site),
        h('td', { class: 'num' }, fmtDistance(c.distance)),
        h('td', { class: 'num' }, fmtCount(c.count)),
        h('td', { class: 'num' }, fmtBytes(c.shallow_size)), h('td', { class: 'num pct' }, fmtPercent(100 * c.shallow_size / total)),
        h('td', { class: 'num' }, fmtBytes(c.retained_size)), h('td', { class: 'num pct' }, fmtPercent(100 * c.retained_size / total)));
      tr._kids = [];
      const openIt = () => {
        tr._isOpen = true;
        toggle.textContent = '▾';
        toggle.setAttribute('aria-expanded', 'true');
        return level(body, tr, 1, instanceLoader(`classes/${c.index}/instances`, select, rowCells, { allocated }), 7);
      };
      toggle.addEventListener('click', () => {
        if (tr._isOpen) {
          closeRow(tr);
          toggle.textContent = '▸';
          toggle.setAttribute('aria-expanded', 'false');
          toggleOpen(c.index, false);
        } else {
          openIt();
          toggleOpen(c.index, true);
        }
      });
      tr.addEventListener('dblclick', () => toggle.click());
      body.appendChild(tr);
      if (open.has(String(c.index))) openIt();
    }
    if (!page.classes.length) body.appendChild(h('tr', {}, h('td', { colspan: 7 }, filter ? 'No class matches the filter.' : allocated ? 'No object was allocated then.' : 'No classes.')));
  };

  let timer;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      filter = input.value;
      offset = 0;
      setParams({ filter, offset: 0 });
      load();
    }, 200);
  });
  load();
  const s = current().params.get('sel');
  if (s) select(s);
}
