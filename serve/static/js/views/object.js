// The object inspector: one object's facts, its dominators, and tabs for
// its fields (references), its retainers and paths, and what it
// dominates.
import { h, clear, cut, fmtBytes, fmtCount, fmtDistance, fmtID, fmtPercent, frameLocation, objectLink, objectName } from '../dom.js';
import { get } from '../api.js';
import { current, href, setParams } from '../route.js';
import { classWord, into, level, objectCells, objectHeads, referenceLoader, state } from '../widgets.js';
import { retainersAndPaths } from '../objectpanel.js';

const tabs = [['fields', 'Fields'], ['retainers', 'Retainers and paths'], ['dominated', 'Dominated objects']];

export default function object(box, r) {
  const ref = r.arg;
  let tab = r.params.get('tab') || 'fields';
  into(box, async () => {
    const d = await get('objects/' + encodeURIComponent(ref));
    const o = d.object;
    const id = fmtID(o.id);
    const snapshot = Number(r.params.get('snapshot')) || 0;
    const input = state.session.inputs[snapshot];
    const total = input ? input.total_size : state.session.total_size;
    const facts = [
      ...(snapshot > 0 ? [['Snapshot', `${input ? input.path.split('/').pop() : snapshot} (baseline ${snapshot})`]] : []),
      ['Type', `${o.type} (${d.category})`],
      [classWord(), d.class && !snapshot ? h('a', { href: href('summary', '', { filter: d.class.constructor, open: d.class.index }) }, d.class.constructor) : o.constructor],
      ['Shallow size', `${fmtBytes(o.shallow_size)} (${fmtCount(o.shallow_size)} bytes)`],
      ['Retained size', `${fmtBytes(o.retained_size)} (${fmtCount(o.retained_size)} bytes, ${fmtPercent(100 * o.retained_size / total)} of the heap)`],
      ['Distance', fmtDistance(o.distance)],
      ['Dominator', d.dominators.length ? objectLink(d.dominators[0]) : 'none (the root)'],
      ['References', fmtCount(d.references)], ['Retainers', fmtCount(d.retainers)], ['Dominated objects', fmtCount(d.children)],
    ];
    const tabBar = h('div', { class: 'tabs', role: 'tablist' });
    const pane = h('div', { class: 'tab-pane', role: 'tabpanel' });
    const show = t => {
      tab = t;
      setParams({ tab: t === 'fields' ? '' : t });
      for (const b of tabBar.children) b.setAttribute('aria-selected', String(b.dataset.tab === t));
      clear(pane);
      if (t === 'fields') pane.appendChild(fields(id));
      else if (t === 'retainers') pane.appendChild(retainersAndPaths(id));
      else pane.appendChild(dominated(id));
    };
    for (const [t, label] of tabs) tabBar.appendChild(h('button', { type: 'button', role: 'tab', 'data-tab': t, onclick: () => show(t) }, label));
    const chain = d.dominators.length > 1 ? h('details', { class: 'chain' },
      h('summary', {}, `Dominator chain (${fmtCount(d.dominator_depth)} up to the root)`),
      h('ol', {}, d.dominators.map(n => h('li', {}, objectLink(n), ` ${fmtBytes(n.retained_size)}`)))) : null;
    // DevTools' Allocation stack pane: only dumps with allocation stacks
    // have one.
    const stack = d.allocation_stack ? h('details', { class: 'chain allocation-stack', open: true },
      h('summary', {}, 'Allocation stack'),
      h('ol', {}, d.allocation_stack.map(f => h('li', {}, f.function, f.script ? ` ${frameLocation(f)}` : '')))) : null;
    const name = objectName(o);
    const page = [
      h('h2', { class: 'object-title', title: name }, cut(name, 120), ' ', h('span', { class: 'id' }, id)),
      h('table', { class: 'facts-table' }, h('tbody', {}, facts.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))))),
      stack, chain, tabBar, pane,
    ];
    queueMicrotask(() => show(tabs.some(([t]) => t === tab) ? tab : 'fields'));
    return page;
  });
}

// fields is the object's references, each expanding to its own.
function fields(id) {
  const body = h('tbody');
  const table = h('table', { class: 'grid tree' }, h('thead', {}, h('tr', {}, h('th', {}, 'Field and value'), objectHeads())), body);
  level(body, null, 0, referenceLoader(id, null), 4);
  return h('div', { class: 'scroll' }, table);
}

// dominated is the objects the object dominates, largest first, each
// expanding to those it dominates.
function dominated(id) {
  const body = h('tbody');
  const table = h('table', { class: 'grid tree' }, h('thead', {}, h('tr', {}, h('th', {}, 'Object'), objectHeads())), body);
  level(body, null, 0, childLoader(id), 4);
  // The dominator tree view is the file's.
  const open = Number(current().params.get('snapshot')) ? null : h('p', {}, h('a', { href: href('dominators', '', { root: id }) }, 'Open in the dominator tree'));
  return h('div', { class: 'scroll' }, open, table);
}

// childLoader loads a page of the dominator-tree children of ref.
export function childLoader(ref, cls) {
  return async offset => {
    const p = await get('objects/' + encodeURIComponent(ref) + '/children', { offset, limit: 100, class: cls });
    return {
      total: p.total, offset: p.offset, limit: 100,
      items: p.objects.map(o => ({ first: objectLink(o), cells: objectCells(o), kids: childLoader(fmtID(o.id)), attrs: { 'data-id': fmtID(o.id) } })),
    };
  };
}

