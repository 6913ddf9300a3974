// Hash routing: every view has its own address, #/view/arg?key=value, so
// the back button, a reload and a shared link show the same thing. State
// inside a view (a filter, a sort, what is expanded, the selection) is
// written into the address with replaceState as it changes, so a reload
// keeps it without filling the history.

// current parses location.hash.
export function current() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = splitOnce(hash, '?');
  const [view, ...rest] = path.split('/');
  return { view: view || 'overview', arg: rest.length ? decodeURIComponent(rest.join('/')) : '', params: new URLSearchParams(query) };
}

function splitOnce(s, sep) {
  const i = s.indexOf(sep);
  return i < 0 ? [s] : [s.slice(0, i), s.slice(i + 1)];
}

// href is the address of a view.
export function href(view, arg = '', params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '' && v !== false) q.set(k, String(v));
  }
  const qs = q.toString();
  return '#/' + view + (arg !== '' ? '/' + encodeURIComponent(arg) : '') + (qs ? '?' + qs : '');
}

// setParams rewrites the current address's parameters without a new
// history entry and without re-rendering the view.
export function setParams(changes) {
  const r = current();
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === null || v === '' || v === false) r.params.delete(k);
    else r.params.set(k, String(v));
  }
  const params = Object.fromEntries(r.params.entries());
  history.replaceState(history.state, '', href(r.view, r.arg, params));
}
