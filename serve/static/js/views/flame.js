// Flame graph: retained size over the dominator tree as an icicle
// (Perfetto's heap graph flame graph). The top box is an object (the
// root by default); under each box, the objects its objects dominate,
// grouped by class, each as wide as what it retains. The server sends a
// few levels of the boxes wide enough to see; a click on a box zooms to
// it, loading what is under it, and lists its objects.
import { h, append, clear, cut, fmtBytes, fmtCount, objectLink, objectName } from '../dom.js';
import { get } from '../api.js';
import { setParams } from '../route.js';
import { failure, loading, pager } from '../widgets.js';

const DEPTH = 6; // levels a request sends
const MIN = 0.005; // the narrowest box sent, as a share of the top box
const ROW = 22; // pixels a level
const PAGE = 20;

const pathText = p => p.join(',');

export default function flame(box, r) {
  const root = r.params.get('root') || 'root';
  let path = (r.params.get('path') || '').split(',').filter(x => x !== '').map(Number);
  const crumbs = h('p', { class: 'flame-crumbs' });
  const graph = h('div', { class: 'flame', 'aria-label': 'Flame graph of retained size' });
  const objects = h('div', { class: 'flame-objects' });
  append(box,
    h('h2', {}, 'Flame graph'),
    h('p', { class: 'note' }, 'Each box is the objects of one class that the box above dominates, as wide as what they retain. Click a box to zoom to it and list its objects; click a step above to zoom out.'),
    crumbs, graph, objects);

  const load = async () => {
    clear(graph).appendChild(loading());
    let d;
    try {
      d = await get('objects/' + encodeURIComponent(root) + '/flame', { path: pathText(path), depth: DEPTH, min: MIN });
    } catch (err) {
      clear(graph).appendChild(failure(err));
      return;
    }
    drawCrumbs(d);
    draw(d.box, d.root);
    list(d.box, d.root, 0);
  };
  const zoom = p => {
    path = p;
    setParams({ path: pathText(p) });
    load();
  };
  const drawCrumbs = d => {
    // The path's steps: the root, then each class down to the top box.
    const steps = [h('a', { href: '#', 'data-path': '', onclick: ev => { ev.preventDefault(); zoom([]); } }, cut(objectName(d.root), 40))];
    for (let i = 0; i < path.length; i++) {
      const p = path.slice(0, i + 1);
      steps.push(' › ', h('a', { href: '#', 'data-path': pathText(p), onclick: ev => { ev.preventDefault(); zoom(p); } }, cut(d.path_classes[i], 40)));
    }
    append(clear(crumbs), ...steps);
  };
  const draw = (top, rootNode) => {
    clear(graph);
    let rows = 0;
    const place = (b, x, depth) => {
      const w = top.retained_size > 0 ? b.retained_size / top.retained_size : 0;
      rows = Math.max(rows, depth + 1);
      const name = depth === 0 && b.class_index < 0 ? objectName(rootNode) : b.class;
      const label = `${name} × ${fmtCount(b.count)}: ${fmtBytes(b.retained_size)}`;
      const el = h('div', {
        class: 'flame-box' + (b.more ? ' more' : ''), role: 'button', tabindex: '0', title: label + (b.more ? ' (click for what is under it)' : ''),
        'data-path': pathText(b.path), 'data-retained': String(b.retained_size),
        onclick: () => zoom(b.path),
        onkeydown: ev => { if (ev.key === 'Enter') zoom(b.path); },
      }, w > 0.04 ? cut(label, Math.max(4, Math.floor(w * 150))) : '');
      // Through the CSSOM: the page's policy forbids style attributes.
      el.style.left = (x * 100).toFixed(4) + '%';
      el.style.width = (w * 100).toFixed(4) + '%';
      el.style.top = depth * ROW + 'px';
      // A hue per class, so a class's boxes look alike at every level.
      el.style.background = `hsl(${(b.class_index * 47 + 210) % 360} 45% 42%)`;
      graph.appendChild(el);
      let cx = x;
      for (const c of b.children) {
        place(c, cx, depth + 1);
        cx += top.retained_size > 0 ? c.retained_size / top.retained_size : 0;
      }
    };
    place(top, 0, 0);
    graph.style.height = rows * ROW + 'px';
  };
  const list = async (b, rootNode, offset) => {
    clear(objects).appendChild(loading());
    try {
      const p = await get('objects/' + encodeURIComponent(root) + '/flame/objects', { path: pathText(b.path), offset, limit: PAGE });
      const name = b.class_index < 0 ? objectName(rootNode) : b.class;
      append(clear(objects),
        h('h3', {}, `${name}: ${fmtCount(b.count)} object${b.count === 1 ? '' : 's'}, ${fmtBytes(b.retained_size)} retained`),
        pager(p, PAGE, o => list(b, rootNode, o)),
        h('ol', { start: String(p.offset + 1) }, p.objects.map(o => h('li', {}, objectLink(o), ` ${fmtBytes(o.retained_size)}`))));
    } catch (err) {
      clear(objects).appendChild(failure(err));
    }
  };
  load();
}
