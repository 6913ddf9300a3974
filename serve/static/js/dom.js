// DOM building and number formatting. Every string from a dump goes into
// the page through text nodes (h's string children, text()) or attribute
// values set with setAttribute: never as markup, so a class named
// <img src=x onerror=...> shows as those characters.

import { current } from './route.js';

const SVG = 'http://www.w3.org/2000/svg';

// h builds an element: attrs are set as attributes, except "on*" keys,
// which are event listeners; children are nodes or strings (text).
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s builds an SVG element.
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

// append adds children (nodes, strings, arrays of them) to el.
export function append(el, ...children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// clear empties el.
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// The session's id form: "counted" ids are written @123, "address" ones
// @0x7f3a10 (as heapx, MAT and Firefox write them).
let idKind = 'counted';
export function setIDKind(k) { idKind = k; }

export function fmtID(id) {
  if (typeof id !== 'number') return String(id);
  return idKind === 'address' ? '@0x' + id.toString(16) : '@' + id;
}

// fmtBytes writes a size as DevTools does: decimal units, one decimal
// below 100.
export function fmtBytes(n) {
  if (n < 1000) return n + ' B';
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n / 1000, u = 0;
  while (v >= 1000 && u < units.length - 1) { v /= 1000; u++; }
  return (v < 100 ? v.toFixed(1) : v.toFixed(0)) + ' ' + units[u];
}

export function fmtCount(n) { return Number(n).toLocaleString('en-US'); }

export function fmtPercent(v) { return v.toFixed(1) + '%'; }

// frameLocation is an allocation stack frame's (or site's)
// script:line:column, one-based as DevTools writes it; the script alone
// when the position is unknown.
export function frameLocation(f) {
  return f.script + (f.line > 0 ? `:${f.line}` + (f.column > 0 ? `:${f.column}` : '') : '');
}

// fmtDistance: "-" for objects only internal roots reach, or none.
export function fmtDistance(d) { return d < 0 || d >= 100000000 ? '-' : String(d); }

function signed(n, f) {
  if (n === 0) return f(0).replace(/^\+/, '');
  return (n > 0 ? '+' : '-') + f(Math.abs(n));
}

// formatValue formats a value of a column of the given kind, as every
// heapx front end does (query.FormatValue).
export function formatValue(kind, v) {
  if (v === undefined || v === null) return '';
  switch (kind) {
    case 'count': return typeof v === 'number' ? fmtCount(v) : String(v);
    case 'bytes': return typeof v === 'number' ? fmtBytes(v) : String(v);
    case 'percent': return typeof v === 'number' ? fmtPercent(v) : String(v);
    case 'id': return fmtID(v);
    case 'distance': return typeof v === 'number' ? fmtDistance(v) : String(v);
    case 'delta': return typeof v === 'number' ? signed(v, fmtCount) : String(v);
    case 'bytes_delta': return typeof v === 'number' ? signed(v, fmtBytes) : String(v);
  }
  return String(v);
}

export const numeric = kind => kind !== 'text';

// cut shortens text to n characters with an ellipsis; the whole text
// goes into a title.
export function cut(text, n = 80) {
  const chars = Array.from(text);
  return chars.length > n ? chars.slice(0, n - 1).join('') + '…' : text;
}

// objectName is how an object is labelled: its name, or its class when
// it has none (V8's internal arrays), as DevTools' Object column does.
export function objectName(node) {
  if (node.name) return node.name;
  if (node.type === 'synthetic' && node.constructor === '(synthetic)') return '(root)';
  return node.constructor;
}

// objectLink is a link to the inspector of node: "name @id". snapshot
// is the index of the snapshot node is in (the API's ?snapshot=: 0 the
// file, 1 on a baseline); by default that of the inspector showing, so
// the links of a baseline's object lead to objects of that baseline.
export function objectLink(node, extra = {}, snapshot = inspectedSnapshot()) {
  const name = objectName(node);
  const q = Number(snapshot) > 0 ? '?snapshot=' + Number(snapshot) : '';
  return h('a', { href: '#/object/' + encodeURIComponent(fmtID(node.id)) + q, class: 'obj', title: cut(name, 2000), ...extra },
    h('span', { class: 'name' }, cut(name)), ' ', h('span', { class: 'id' }, fmtID(node.id)));
}

// inspectedSnapshot is the snapshot of the object the inspector shows
// (its address's ?snapshot=), 0 (the file) in every other view.
export function inspectedSnapshot() {
  const r = current();
  return r.view === 'object' ? Number(r.params.get('snapshot')) || 0 : 0;
}
