// Dominators (MAT): the dominator tree from the root, or from an object,
// each level loaded when opened, largest retained size first; grouped by
// class, each level lists classes that open to their objects.
import { h, append, clear, cut, fmtBytes, fmtCount, fmtID, objectLink } from '../dom.js';
import { get } from '../api.js';
import { href, setParams } from '../route.js';
import { classWord, level, objectCells, objectHeads, selectButton } from '../widgets.js';
import { selectionPanel } from '../objectpanel.js';

const PAGE = 100;

export default function dominators(box, r) {
  const root = r.params.get('root') || 'root';
  let byClass = r.params.get('group') === 'class';
  const sel = h('div', { class: 'selection-box' });
  const select = id => {
    setParams({ sel: id });
    clear(sel).appendChild(selectionPanel(id));
  };
  const body = h('tbody');
  const table = h('table', { class: 'grid tree dominators' }, h('thead', {}, h('tr', {}, h('th', {}, 'Object'), objectHeads())), body);
  const groupBox = h('input', { type: 'checkbox', checked: byClass, id: 'group-class' });
  groupBox.addEventListener('change', () => {
    byClass = groupBox.checked;
    setParams({ group: byClass ? 'class' : '' });
    draw();
  });
  const children = (ref, cls) => async offset => {
    const p = await get('objects/' + encodeURIComponent(ref) + '/children', { offset, limit: PAGE, class: cls });
    return {
      total: p.total, offset: p.offset, limit: PAGE,
      items: p.objects.map(o => ({ first: selectButton(o, select), cells: objectCells(o), kids: kidsOf(fmtID(o.id)), attrs: { 'data-id': fmtID(o.id) } })),
    };
  };
  const classes = ref => async offset => {
    const p = await get('objects/' + encodeURIComponent(ref) + '/children/classes', { offset, limit: PAGE });
    return {
      total: p.total, offset: p.offset, limit: PAGE,
      items: p.classes.map(c => ({
        first: [h('span', { class: 'name', title: c.constructor }, cut(c.constructor)), h('span', { class: 'count' }, ` × ${fmtCount(c.count)}`)],
        cells: [h('td'), h('td', { class: 'num' }, fmtBytes(c.shallow_size)), h('td', { class: 'num' }, fmtBytes(c.retained_size))],
        kids: children(ref, c.index),
        attrs: { class: 'group', 'data-class': c.index },
      })),
    };
  };
  const kidsOf = ref => (byClass ? classes(ref) : children(ref));
  const draw = () => {
    clear(body);
    level(body, null, 0, kidsOf(root), 4);
  };
  const title = h('span');
  append(box,
    h('h2', {}, 'Dominators ', title),
    h('p', { class: 'toolbar' }, h('label', { for: 'group-class' }, groupBox, ` Group by ${classWord().toLowerCase()}`),
      root !== 'root' ? h('a', { href: href('dominators', '', { group: byClass ? 'class' : '' }) }, 'From the root') : null),
    h('p', { class: 'note' }, 'Each object retains what it dominates: everything only reachable through it. Open a row to see what it dominates; select an object to see why it is alive.'),
    h('div', { class: 'scroll' }, table), sel);
  get('objects/' + encodeURIComponent(root)).then(d => {
    append(title, 'of ', objectLink(d.object), ` (${fmtBytes(d.object.retained_size)})`);
  }, () => {});
  draw();
  const s = r.params.get('sel');
  if (s) select(s);
}
