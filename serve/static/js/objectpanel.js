// What is shown of a selected object wherever one is selected (Summary,
// Comparison, Dominators, the inspector): the retainers tree, which
// expands upward as DevTools' does, and the shortest retainer paths, with
// DevTools' "ignore this retainer".
import { h, append, clear, fmtBytes, fmtCount, fmtDistance, fmtID, objectLink } from './dom.js';
import { get } from './api.js';
import { edgeLabel, failure, loading, objectHeads, objectCells } from './widgets.js';
import { current, setParams } from './route.js';

const RETAINER_PAGE = 50;

// ignored returns the ids the address says to ignore.
function ignored() {
  const v = current().params.get('ignore');
  return v ? v.split(',').filter(Boolean) : [];
}

// retainersTree is the tree of the object with id's retainers: each row
// a retaining edge and the object it leaves from, which expands to its
// own retainers. The rows of the first shortest path open by themselves,
// as in DevTools. onIgnore(id) is called when a row's object is to be
// ignored.
export function retainersTree(id, path, onIgnore) {
  const body = h('tbody');
  const table = h('table', { class: 'grid tree retainers' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Retainer'), objectHeads(), h('th', { class: 'act' }, ''))), body);
  // chain: the ids, from the target up, the first path goes through.
  const chain = path ? path.steps.map(st => st.to.id).reverse().slice(1) : [];
  const rootId = path ? path.root.id : null;
  if (path && rootId !== null) chain.push(rootId);
  expand(body, null, id, 0, chain, onIgnore);
  return h('div', { class: 'scroll' }, table);
}

// expand loads the retainers of the object ref under row (null: at the
// top of body), one page at a time.
async function expand(body, row, ref, depth, chain, onIgnore, offset = 0, after = row) {
  const wait = h('tr', { class: 'pending' }, h('td', { colspan: 5 }, 'Loading…'));
  body.insertBefore(wait, after ? after.nextSibling : body.firstChild);
  let page;
  try {
    page = await get('objects/' + encodeURIComponent(ref) + '/retainers', { offset, limit: RETAINER_PAGE });
  } catch (err) {
    wait.replaceWith(h('tr', {}, h('td', { colspan: 5 }, failure(err))));
    return;
  }
  const rows = [];
  const ign = new Set(ignored());
  for (const e of page.edges) {
    const from = e.from;
    const weak = e.strength !== 'strong';
    const toggle = h('button', { type: 'button', class: 'toggle', 'aria-expanded': 'false', title: 'Show what retains this object' }, '▸');
    const first = h('td', {}, toggle, edgeLabel(e), h('span', { class: 'in' }, ' in '), objectLink(from),
      weak ? h('span', { class: 'tag weak' }, e.strength) : null,
      ign.has(fmtID(from.id)) ? h('span', { class: 'tag ignored' }, 'ignored') : null);
    first.style.paddingLeft = (4 + 14 * Math.min(depth, 40)) + 'px';
    const ignoreBtn = h('button', { type: 'button', class: 'ignore', title: 'Ignore this retainer: find paths that avoid it' }, 'ignore');
    const tr = h('tr', { class: weak ? 'weak' : '', 'data-id': fmtID(from.id) }, first, objectCells(from), h('td', { class: 'act' }, ignoreBtn));
    tr._kids = [];
    tr._open = rest => {
      tr._isOpen = true;
      toggle.textContent = '▾';
      toggle.setAttribute('aria-expanded', 'true');
      expand(body, tr, fmtID(from.id), depth + 1, rest, onIgnore);
    };
    ignoreBtn.addEventListener('click', () => onIgnore && onIgnore(fmtID(from.id)));
    toggle.addEventListener('click', () => {
      if (tr._isOpen) {
        collapse(tr);
        toggle.textContent = '▸';
        toggle.setAttribute('aria-expanded', 'false');
      } else {
        tr._open([]);
      }
    });
    rows.push(tr);
  }
  if (page.total > offset + page.edges.length) {
    const more = h('button', { type: 'button', class: 'more' }, `${fmtCount(page.total - offset - page.edges.length)} more retainers…`);
    const tr = h('tr', { class: 'more-row' }, h('td', { colspan: 5 }, more));
    tr.firstChild.style.paddingLeft = (18 + 14 * Math.min(depth, 40)) + 'px';
    more.addEventListener('click', () => {
      tr.remove();
      expand(body, row, ref, depth, [], onIgnore, offset + RETAINER_PAGE, rows[rows.length - 1]);
    });
    rows.push(tr);
  }
  if (page.total === 0) {
    const tr = h('tr', { class: 'none' }, h('td', { colspan: 5 }, depth === 0 ? 'Nothing retains this object.' : 'No retainers.'));
    tr.firstChild.style.paddingLeft = (18 + 14 * Math.min(depth, 40)) + 'px';
    rows.push(tr);
  }
  const frag = document.createDocumentFragment();
  append(frag, rows);
  wait.replaceWith(frag);
  if (row) row._kids.push(...rows);
  // Open the row the first path goes through.
  if (chain.length) {
    const next = rows.find(r => r.dataset.id === fmtID(chain[0]));
    if (next) {
      next.classList.add('on-path');
      if (chain.length > 1 && depth < 12) next._open(chain.slice(1));
    }
  }
}

// collapse removes the rows under row.
function collapse(row) {
  for (const k of row._kids || []) {
    collapse(k);
    k.remove();
  }
  row._kids = [];
  row._isOpen = false;
}

// pathsView draws up to k shortest paths to the object id, root first,
// avoiding the ignored objects.
export function pathsView(data, onUnignore) {
  const box = h('div', { class: 'paths' });
  if (data.ignored.length) {
    box.appendChild(h('p', { class: 'ignored-list' }, 'Ignoring: ', data.ignored.map(n =>
      h('span', { class: 'chip' }, objectLink(n), h('button', { type: 'button', class: 'unignore', title: 'Stop ignoring', onclick: () => onUnignore(fmtID(n.id)) }, '×')))));
  }
  if (!data.paths.length) {
    box.appendChild(h('p', { class: 'note' }, data.no_weak && !data.ignored.length
      ? 'No retainer path without weak references: the object is held only through weak references or a WeakMap\'s table (unticked, the paths show how).'
      : 'No retainer path: nothing reachable from the roots keeps this object alive' +
        (data.ignored.length ? ' without the ignored objects.' : ' (it is garbage or only weakly held).')));
    return box;
  }
  if (data.through_runtime) {
    box.appendChild(h('p', { class: 'note through-runtime' }, 'Every path without weak references goes through the runtime\'s own objects (Node\'s or the engine\'s): these take the fewest of them.'));
  }
  data.paths.forEach((p, i) => {
    const rows = [h('tr', {}, h('td', {}, h('span', { class: 'edge' }, ''), ' ', objectLink(p.root)), objectCells(p.root))];
    p.steps.forEach((st, j) => {
      if (p.elided && j === p.elided.after) {
        rows.push(h('tr', { class: 'elided' }, h('td', { colspan: 4 }, `… ${fmtCount(p.elided.hops)} more hops …`)));
      }
      rows.push(h('tr', {}, h('td', {}, edgeLabel(st), ' ', objectLink(st.to)), objectCells(st.to)));
    });
    const kind = p.system ? 'from internal roots' : 'from a user root';
    box.appendChild(h('section', { class: 'path' },
      h('h4', {}, `Path ${i + 1}: ${fmtCount(p.steps.length + (p.elided ? p.elided.hops : 0))} edges, ${kind}`),
      h('div', { class: 'scroll' }, h('table', { class: 'grid path-table' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Retainer edge and object'), objectHeads())), h('tbody', {}, rows)))));
  });
  return box;
}

// retainersAndPaths draws, side by side, the shortest retainer paths of
// the object id (k of them, avoiding the ignored objects: k= and ignore=
// in the address) and its retainers tree.
export function retainersAndPaths(id) {
  const box = h('div', { class: 'panes' });
  const render = async () => {
    clear(box).appendChild(loading());
    const k = Number(current().params.get('k')) || 3;
    // MAT's "excluding weak/soft references" (paths --no-weak).
    const noWeak = current().params.get('noweak') === '1';
    const ign = ignored();
    try {
      const paths = await get('objects/' + encodeURIComponent(id) + '/paths', { k, ignore: ign.join(','), no_weak: noWeak || undefined });
      const setIgnore = list => { setParams({ ignore: list.join(',') }); render(); };
      const onIgnore = rid => { if (!ign.includes(rid)) setIgnore([...ign, rid]); };
      const onUnignore = rid => setIgnore(ign.filter(x => x !== rid));
      const kSelect = h('select', { 'aria-label': 'Number of paths' }, [1, 3, 5, 10, 20].map(n => h('option', { value: n, selected: n === k }, String(n))));
      kSelect.addEventListener('change', () => { setParams({ k: kSelect.value }); render(); });
      const weakBox = h('input', { type: 'checkbox', class: 'no-weak', checked: noWeak });
      weakBox.addEventListener('change', () => { setParams({ noweak: weakBox.checked ? '1' : '' }); render(); });
      const weakLabel = h('label', { class: 'no-weak', title: 'As MAT\'s path to GC roots excluding weak/soft references: no weak or WeakMap references, and none through the runtime\'s own objects (Node\'s or the engine\'s) where the object has such paths' },
        weakBox, ' without weak references');
      append(clear(box),
        h('div', { class: 'pane' }, h('h4', {}, 'Shortest retainer paths ', kSelect, ' ', weakLabel), pathsView(paths, onUnignore)),
        h('div', { class: 'pane' }, h('h4', {}, 'Retainers'), retainersTree(id, paths.paths[0], onIgnore)));
    } catch (err) {
      clear(box).appendChild(failure(err));
    }
  };
  render();
  return box;
}

// selectionPanel shows a selected object: what it is, its shortest
// paths and its retainers tree.
export function selectionPanel(id) {
  const panel = h('section', { class: 'selection', 'aria-label': 'Selected object' }, loading());
  get('objects/' + encodeURIComponent(id)).then(obj => {
    const o = obj.object;
    append(clear(panel),
      h('h3', {}, 'Selected: ', objectLink(o), ' ', h('a', { class: 'button', href: '#/object/' + encodeURIComponent(fmtID(o.id)) }, 'Inspect')),
      h('p', { class: 'facts' }, `${o.constructor} · ${o.type} · retained ${fmtBytes(o.retained_size)} · shallow ${fmtBytes(o.shallow_size)} · distance ${fmtDistance(o.distance)}`),
      retainersAndPaths(fmtID(o.id)));
  }, err => clear(panel).appendChild(failure(err)));
  return panel;
}
