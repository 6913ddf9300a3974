// Pieces the views share: pagers, bar charts, a query result drawn from
// its generic JSON form (tables, trees, charts), object grids.
import { h, s, append, clear, cut, formatValue, numeric, fmtBytes, fmtCount, fmtDistance, fmtID, objectLink, objectName } from './dom.js';
import { ApiError, get } from './api.js';

// session is the answer of /api/v1/session, set once by app.js.
export const state = { session: null };

// classWord is the runtime's word for a class: Constructor (V8) or Class.
export const classWord = () => (state.session ? state.session.words.class : 'Constructor');

// failure shows an error in place of what could not be loaded.
export function failure(err) {
  const msg = err instanceof ApiError ? err.message : 'Something went wrong: ' + (err && err.message ? err.message : err);
  return h('div', { class: 'error', role: 'alert' }, msg);
}

export const loading = () => h('p', { class: 'loading' }, 'Loading…');

// into replaces el's content with what load resolves to, showing
// progress and errors.
export async function into(el, load) {
  clear(el).appendChild(loading());
  try {
    const node = await load();
    clear(el);
    append(el, node);
  } catch (err) {
    clear(el).appendChild(failure(err));
  }
  return el;
}

// pager draws "first–last of total" with previous and next buttons for a
// page answer ({total, offset}) and calls go(offset) to change page.
export function pager(page, limit, go) {
  const { total, offset } = page;
  const shown = Math.min(total, offset + limit);
  if (total <= limit && offset === 0) return h('span', { class: 'pager' });
  return h('span', { class: 'pager' },
    h('button', { type: 'button', class: 'prev', disabled: offset === 0, onclick: () => go(Math.max(0, offset - limit)) }, '‹ previous'),
    ` ${fmtCount(offset + 1)}–${fmtCount(shown)} of ${fmtCount(total)} `,
    h('button', { type: 'button', class: 'next', disabled: shown >= total, onclick: () => go(offset + limit) }, 'next ›'));
}

// barChart draws rows as horizontal bars in inline SVG: label(row) and
// value(row) (a number), written with fmt.
export function barChart(title, rows, label, value, fmt) {
  rows = rows.filter(r => typeof value(r) === 'number').slice(0, 15);
  const max = Math.max(1, ...rows.map(r => Math.abs(value(r))));
  const rowH = 20, labelW = 260, barW = 360, valueW = 90;
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${labelW + barW + valueW} ${rows.length * rowH + 4}`, role: 'img', 'aria-label': title });
  rows.forEach((r, i) => {
    const y = i * rowH + 2, v = value(r);
    const w = Math.max(1, Math.round(Math.abs(v) / max * (barW - 4)));
    const name = String(label(r));
    append(svg,
      s('text', { x: labelW - 6, y: y + 14, 'text-anchor': 'end', class: 'chart-label' }, cut(name, 38), s('title', {}, name)),
      s('rect', { x: labelW, y: y + 3, width: w, height: rowH - 6, rx: 2, class: v < 0 ? 'bar neg' : 'bar' }),
      s('text', { x: labelW + w + 6, y: y + 14, class: 'chart-value' }, fmt(v)));
  });
  return h('figure', { class: 'chart-box' }, h('figcaption', {}, title), svg);
}

// lineColors tell a line chart's lines apart.
const lineColors = ['#3b6fd8', '#d8573b', '#2f9e5a', '#a23bd8', '#d8a23b', '#3bb5d8', '#6b7280'];

// lineChart draws a section's rows as lines over its chart.label column
// (numeric, the x axis): one for chart.value and one for each count or
// bytes column after it, with a legend (query.ChartLine).
function lineChart(sec, rows) {
  const x = r => r[sec.chart.label];
  rows = rows.filter(r => typeof x(r) === 'number');
  const from = sec.columns.findIndex(c => c.key === sec.chart.value);
  const lines = sec.columns.slice(Math.max(from, 0)).filter(c => c.kind === 'count' || c.kind === 'bytes').slice(0, lineColors.length);
  const xs = rows.map(x), minX = Math.min(...xs), maxX = Math.max(...xs);
  const maxY = Math.max(1, ...rows.flatMap(r => lines.map(c => r[c.key] || 0)));
  if (rows.length < 2 || maxX <= minX || !lines.length) return null;
  const left = 70, plotW = 620, plotH = 180, legendH = 18;
  const px = v => left + (v - minX) / (maxX - minX) * plotW, py = v => 8 + plotH - v / maxY * plotH;
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${left + plotW + 20} ${plotH + 34 + legendH * lines.length}`, role: 'img', 'aria-label': sec.heading || '' });
  append(svg, s('path', { d: `M${left} 8 V${8 + plotH} H${left + plotW}`, fill: 'none', stroke: '#9aa3b2' }),
    s('text', { x: left - 6, y: 14, 'text-anchor': 'end', class: 'chart-value' }, formatValue(lines[0].kind, maxY)),
    s('text', { x: left - 6, y: 12 + plotH, 'text-anchor': 'end', class: 'chart-value' }, '0'));
  const xcol = sec.columns.find(c => c.key === sec.chart.label);
  append(svg, s('text', { x: left, y: plotH + 24, class: 'chart-value' }, formatValue(xcol.kind, minX)),
    s('text', { x: left + plotW / 2, y: plotH + 24, 'text-anchor': 'middle', class: 'chart-value' }, xcol.title),
    s('text', { x: left + plotW, y: plotH + 24, 'text-anchor': 'end', class: 'chart-value' }, formatValue(xcol.kind, maxX)));
  lines.forEach((c, i) => {
    const y = plotH + 34 + i * legendH;
    append(svg, s('polyline', { fill: 'none', 'stroke-width': 2, stroke: lineColors[i], points: rows.map(r => `${px(x(r)).toFixed(1)},${py(r[c.key] || 0).toFixed(1)}`).join(' ') }, s('title', {}, c.title)),
      s('rect', { x: left, y: y + 2, width: 14, height: 4, fill: lineColors[i] }),
      s('text', { x: left + 20, y: y + 8, class: 'chart-label' }, cut(c.title, 80)));
  });
  return h('figure', { class: 'chart-box' }, h('figcaption', {}, sec.heading || ''), svg);
}

// idTail matches the "name @id" heapx writes for an object in text.
const idTail = /^(.*\S)\s+(@(?:0x[0-9a-f]+|\d+))$/s;

// cellContent draws one value of a generic result: numbers formatted by
// kind, ids and objects written "name @id" linked to the inspector.
function cellContent(col, v) {
  if (col.kind === 'id' && typeof v === 'number') return h('a', { href: '#/object/' + encodeURIComponent(fmtID(v)), class: 'id' }, fmtID(v));
  const text = formatValue(col.kind, v);
  if (col.kind === 'text') {
    const m = idTail.exec(text);
    if (m) return [h('span', { class: 'name', title: m[1] }, m[1]), ' ', h('a', { href: '#/object/' + encodeURIComponent(m[2]), class: 'id' }, m[2])];
  }
  return text;
}

// columnTitle is a column's title, in the runtime's words.
const columnTitle = col => (col.key === 'constructor' ? classWord() : col.title);

// shownColumns leaves out the text columns empty in every row, as the
// text and HTML forms do (query.Table.Shown).
function shownColumns(sec, rows) {
  return sec.columns.filter(c => c.kind !== 'text' || rows.length === 0 ||
    rows.some(r => r[c.key] !== undefined && r[c.key] !== null && r[c.key] !== ''));
}

// section draws one section of a generic result.
function section(sec, headingLevel) {
  const box = h('section', { class: 'result-section' });
  if (sec.heading) box.appendChild(h(headingLevel, {}, sec.heading));
  const rows = sec.rows || [];
  if (sec.chart && sec.chart.kind === 'line') {
    const chart = lineChart(sec, rows);
    if (chart) box.appendChild(chart);
  } else if (sec.chart && rows.length > 1) {
    const col = sec.columns.find(c => c.key === sec.chart.value);
    const lcol = sec.columns.find(c => c.key === sec.chart.label);
    box.appendChild(barChart(`${col ? col.title : sec.chart.value} by ${lcol ? columnTitle(lcol) : sec.chart.label}`, rows,
      r => formatValue(lcol ? lcol.kind : 'text', r[sec.chart.label]), r => r[sec.chart.value], v => formatValue(col ? col.kind : 'count', v)));
  }
  if (sec.tree) box.appendChild(treeTable(sec));
  else if (rows.length) {
    const cols = shownColumns(sec, rows);
    const table = h('table', { class: 'grid' },
      h('thead', {}, h('tr', {}, cols.map(c => h('th', { class: numeric(c.kind) ? 'num' : '' }, columnTitle(c))))),
      h('tbody', {}, rows.map(r => h('tr', {}, cols.map(c => h('td', { class: numeric(c.kind) ? 'num' : '' }, cellContent(c, r[c.key])))))));
    box.appendChild(h('div', { class: 'scroll' }, table));
  }
  for (const n of sec.notes || []) box.appendChild(h('p', { class: 'note' }, n));
  return box;
}

// treeTable draws a tree section with rows that fold: a small tree
// (300 rows) all open, a larger one its first two levels and the chains
// of only children below them (a path).
function treeTable(sec) {
  const cols = sec.columns;
  const body = h('tbody');
  const size = nodes => nodes.reduce((n, x) => n + 1 + size(x.children || []), 0);
  const small = size(sec.tree) <= 300;
  const setVisible = (items, visible) => {
    for (const it of items) {
      it.tr.hidden = !visible;
      setVisible(it.kids, visible && it.open);
    }
  };
  const add = (nodes, depth) => nodes.map(n => {
    const kids = n.children || [];
    const item = { open: small || depth < 2 || kids.length === 1, kids: [] };
    const hasKids = kids.length > 0;
    const toggle = hasKids ? h('button', { type: 'button', class: 'toggle', 'aria-expanded': String(item.open) }, item.open ? '▾' : '▸') : h('span', { class: 'toggle-space' });
    const first = h('td', { class: numeric(cols[0].kind) ? 'num' : '' }, toggle, cellContent(cols[0], n[cols[0].key]));
    first.style.paddingLeft = (4 + 14 * Math.min(depth, 40)) + 'px';
    item.tr = h('tr', {}, first, cols.slice(1).map(c => h('td', { class: numeric(c.kind) ? 'num' : '' }, cellContent(c, n[c.key]))));
    body.appendChild(item.tr);
    item.kids = add(kids, depth + 1);
    if (hasKids) {
      toggle.addEventListener('click', () => {
        item.open = !item.open;
        toggle.textContent = item.open ? '▾' : '▸';
        toggle.setAttribute('aria-expanded', String(item.open));
        setVisible(item.kids, item.open);
      });
    }
    return item;
  });
  setVisible(add(sec.tree, 0), true);
  return h('div', { class: 'scroll' }, h('table', { class: 'grid tree' },
    h('thead', {}, h('tr', {}, cols.map(c => h('th', { class: numeric(c.kind) ? 'num' : '' }, columnTitle(c))))), body));
}

// warnings draws a result's warnings, which come before everything.
export function warnings(list) {
  return (list || []).map(w => h('div', { class: 'warning', role: 'alert' }, h('strong', {}, 'Warning: '), w.message));
}

// documentView draws a generic result (query.Document): warnings, header
// lines, sections, notes.
export function documentView(doc, headingLevel = 'h3') {
  return h('div', { class: 'document' },
    warnings(doc.warnings),
    (doc.header || []).map(l => h('p', { class: 'header-line' }, l)),
    doc.sections.map(sec => section(sec, headingLevel)),
    (doc.notes || []).map(n => h('p', { class: 'note' }, n)),
    doc.failed ? h('div', { class: 'error' }, doc.failed) : null);
}

// objectCells are the grid cells of an object (top --json's node).
export function objectCells(node) {
  return [
    h('td', { class: 'num' }, fmtDistance(node.distance)),
    h('td', { class: 'num' }, fmtBytes(node.shallow_size)),
    h('td', { class: 'num' }, fmtBytes(node.retained_size)),
  ];
}

export const objectHeads = () => [h('th', { class: 'num' }, 'Distance'), h('th', { class: 'num' }, 'Shallow size'), h('th', { class: 'num' }, 'Retained size')];

// edgeText writes an edge as DevTools does (".x", "[3]", "->x", "{x}").
export function edgeLabel(e) {
  return h('span', { class: 'edge' + (e.strength && e.strength !== 'strong' ? ' weak' : ''), title: e.edge_type + (e.strength && e.strength !== 'strong' ? ', ' + e.strength : '') }, cut(e.edge, 60));
}

// level inserts one level of a lazily loaded tree into body, under the
// row parent (null: at the top): load(offset) resolves to {items, total,
// offset, limit}, each item {first: content of the first cell, cells:
// the other cells, kids: a load function for its children or null,
// attrs: attributes of its row, onrow: called with its row}. A level
// shows one page and a row to load the next; a row with kids gets a
// toggle that loads them, and removes them again.
export async function level(body, parent, depth, load, colspan, offset = 0, after = parent) {
  const wait = h('tr', { class: 'pending' }, h('td', { colspan }, 'Loading…'));
  body.insertBefore(wait, after ? after.nextSibling : body.firstChild);
  let page;
  try {
    page = await load(offset);
  } catch (err) {
    wait.replaceWith(h('tr', {}, h('td', { colspan }, failure(err))));
    return [];
  }
  const rows = [];
  const pad = td => { td.style.paddingLeft = (4 + 16 * Math.min(depth, 40)) + 'px'; return td; };
  for (const it of page.items) {
    const toggle = it.kids ? h('button', { type: 'button', class: 'toggle', 'aria-expanded': 'false' }, '▸') : h('span', { class: 'toggle-space' });
    const tr = h('tr', it.attrs || {}, pad(h('td', { class: 'first' }, toggle, it.first)), it.cells);
    tr._kids = [];
    if (it.kids) {
      tr._open = async () => {
        tr._isOpen = true;
        toggle.textContent = '▾';
        toggle.setAttribute('aria-expanded', 'true');
        return level(body, tr, depth + 1, it.kids, colspan);
      };
      toggle.addEventListener('click', ev => {
        ev.stopPropagation();
        if (tr._isOpen) {
          closeRow(tr);
          toggle.textContent = '▸';
          toggle.setAttribute('aria-expanded', 'false');
        } else tr._open();
      });
    }
    if (it.onrow) it.onrow(tr);
    rows.push(tr);
  }
  const shown = page.offset + page.items.length;
  if (page.total > shown) {
    const more = h('button', { type: 'button', class: 'more' }, `next ${fmtCount(Math.min(page.limit, page.total - shown))} of ${fmtCount(page.total - shown)} more…`);
    const tr = h('tr', { class: 'more-row' }, pad(h('td', { colspan }, h('span', { class: 'toggle-space' }), more)));
    more.addEventListener('click', () => {
      const prev = tr.previousSibling;
      tr.remove();
      level(body, parent, depth, load, colspan, shown, prev);
    });
    rows.push(tr);
  }
  if (page.total === 0) rows.push(h('tr', { class: 'none' }, pad(h('td', { colspan }, h('span', { class: 'toggle-space' }), 'none'))));
  const frag = document.createDocumentFragment();
  append(frag, rows);
  wait.replaceWith(frag);
  if (parent) parent._kids.push(...rows);
  return rows;
}

// closeRow removes the rows a level put under row.
export function closeRow(row) {
  for (const k of row._kids || []) {
    closeRow(k);
    k.remove();
  }
  row._kids = [];
  row._isOpen = false;
}

// referenceLoader loads a page of the references of the object ref as
// level items, each expanding to its own references (DevTools'
// Containment).
export function referenceLoader(ref, select, cells = objectCells) {
  return async offset => {
    const p = await get('objects/' + encodeURIComponent(ref) + '/references', { offset, limit: 50 });
    return {
      total: p.total, offset: p.offset, limit: 50,
      items: p.edges.map(e => ({
        first: [edgeLabel(e), h('span', { class: 'in' }, ' :: '), select ? selectButton(e.to, select) : objectLink(e.to)],
        cells: cells(e.to),
        kids: referenceLoader(fmtID(e.to.id), select, cells),
        attrs: { class: e.strength !== 'strong' ? 'weak' : '', 'data-id': fmtID(e.to.id) },
      })),
    };
  };
}

// selectButton is an object in a grid: clicking it selects it
// (select(id)); a small link beside it opens the inspector.
export function selectButton(node, select) {
  return [h('button', { type: 'button', class: 'select', title: 'Select: show its retainers and paths below', onclick: ev => { ev.stopPropagation(); select(fmtID(node.id)); } },
    h('span', { class: 'name' }, cut(objectName(node))), ' ', h('span', { class: 'id' }, fmtID(node.id))),
  ' ', h('a', { href: '#/object/' + encodeURIComponent(fmtID(node.id)), class: 'inspect', title: 'Open in the inspector', 'aria-label': 'Inspect ' + fmtID(node.id) }, '↗')];
}
