// heapx serve's page: loads the session, draws the navigation and shows
// the view the address names.
import { h, append, clear, setIDKind } from './dom.js';
import { get } from './api.js';
import { current, href } from './route.js';
import { failure, state } from './widgets.js';
import overview from './views/overview.js';
import summary from './views/summary.js';
import object from './views/object.js';
import dominators from './views/dominators.js';
import flame from './views/flame.js';
import comparison from './views/comparison.js';
import queryView from './views/query.js';
import sql from './views/sql.js';

const views = { overview, summary, object, dominators, flame, comparison, query: queryView, sql };

// The queries with a place of their own in the navigation; the others
// are under "More analyses". A memory trace (heapx trace) has its
// lifetime analyses instead of a snapshot's.
const snapshotFeatured = ['leaks', 'suspects', 'growth'];
const featuredTrace = ['lifetimes', 'trace-leaks', 'stale-sites', 'lifetime-timeline'];

function nav(session) {
  const trace = !!session.trace;
  // A dump with stacks (Java's, a core) features its threads; a Java
  // heap its class loaders.
  const featured = trace ? featuredTrace : [...snapshotFeatured,
    ...(session.threads > 0 ? ['threads'] : []), ...(session.runtime === 'hprof' ? ['class-loaders'] : [])];
  const el = document.getElementById('nav');
  const item = (view, arg, label, title) => h('a', { href: href(view, arg), 'data-view': view + (arg ? '/' + arg : ''), title }, label);
  const q = name => session.queries.find(x => x.name === name);
  const others = session.queries.filter(x => !featured.includes(x.name) && !['summary'].includes(x.name));
  const more = h('select', { 'aria-label': 'More analyses', class: 'more-queries' },
    h('option', { value: '' }, 'More analyses…'),
    others.map(x => h('option', { value: x.name, disabled: !x.runnable, title: x.title }, x.name + (x.runnable ? '' : ' (needs more snapshots)'))));
  more.addEventListener('change', () => {
    if (more.value) location.hash = href('query', more.value);
    more.value = '';
  });
  append(clear(el),
    item('overview', '', 'Overview', trace ? 'The report: problem sites, leaks, staleness, churn' : 'The report: overview, leaks, suspects, top classes'),
    // A trace records events, not a heap: it has no objects to list.
    trace ? null : item('summary', '', 'Summary', 'Classes with their instances, as in DevTools'),
    trace ? null : item('dominators', '', 'Dominators', 'The dominator tree, as in MAT'),
    trace ? null : item('flame', '', 'Flame graph', 'Retained size over the dominator tree, by class'),
    session.baselines.length ? item('comparison', '', 'Comparison', 'New and deleted objects since the last baseline') : null,
    featured.map(n => q(n) && q(n).runnable ? item('query', n, n[0].toUpperCase() + n.slice(1).replace('-', ' '), q(n).title) : null),
    more,
    trace ? null : item('sql', '', 'SQL', 'Read-only SQL over the dump'));
}

function markNav() {
  const r = current();
  const key = r.view === 'query' ? 'query/' + r.arg : r.view;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.view === key) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function route() {
  const r = current();
  const main = document.getElementById('view');
  const view = views[r.view];
  markNav();
  clear(main);
  if (!view) {
    main.appendChild(failure(new Error('there is no view "' + r.view + '"')));
    return;
  }
  const box = h('div', { class: 'view view-' + r.view });
  main.appendChild(box);
  view(box, r);
}

async function start() {
  const main = document.getElementById('view');
  try {
    state.session = await get('session');
  } catch (err) {
    clear(main).appendChild(failure(err));
    return;
  }
  const s = state.session;
  setIDKind(s.ids);
  const base = s.file.split('/').pop();
  document.title = base + ' — heapx';
  append(clear(document.getElementById('file')), base, s.baselines.length ? ` (and ${s.baselines.length} earlier snapshot${s.baselines.length > 1 ? 's' : ''})` : '');
  document.getElementById('file').setAttribute('title', [s.file, ...s.baselines].join('\n'));
  nav(s);
  const form = document.getElementById('goto');
  if (s.trace) form.hidden = true;
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    const v = document.getElementById('goto-id').value.trim();
    if (v) location.hash = href('object', v.startsWith('@') ? v : '@' + v);
  });
  window.addEventListener('hashchange', route);
  route();
}

start();
