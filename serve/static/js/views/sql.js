// The SQL console: one read-only statement over the dump's SQLite form
// (the tables and views of docs/format.md), the rows as a table.
import { h, append, clear, cut, fmtCount } from '../dom.js';
import { post } from '../api.js';
import { setParams } from '../route.js';
import { failure, loading } from '../widgets.js';

const examples = [
  ['Largest objects', 'SELECT identifier, name, type, retained_size FROM nodes_full WHERE dominator IS NOT NULL ORDER BY retained_size DESC LIMIT 20'],
  ['Classes by count', "SELECT name AS class, count(*) AS objects, sum(self_size) AS self_size FROM nodes_named WHERE category = 'object' GROUP BY name ORDER BY objects DESC, class LIMIT 20"],
  ['Duplicate strings', "SELECT name AS text, count(*) AS copies, sum(self_size) AS bytes FROM nodes_named WHERE category = 'flat string' GROUP BY name ORDER BY copies DESC, bytes DESC, text LIMIT 20"],
  ['Tables and views', "SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'view') ORDER BY type, name"],
];

export default function sql(box, r) {
  const text = h('textarea', { class: 'sql', rows: 5, spellcheck: 'false', 'aria-label': 'SQL statement' });
  text.value = r.params.get('q') || examples[0][1];
  const out = h('div', { class: 'result' });
  const runBtn = h('button', { type: 'submit' }, 'Run');
  const form = h('form', { class: 'sql-form' }, text, h('div', { class: 'toolbar' }, runBtn,
    h('span', { class: 'examples' }, 'Examples: ', examples.map(([label, q]) => h('button', { type: 'button', class: 'link', onclick: () => { text.value = q; } }, label))),
    h('span', { class: 'note' }, 'Ctrl+Enter runs. Read-only; at most 1,000 rows.')));
  append(box, h('h2', {}, 'SQL'), h('p', { class: 'lead' }, 'One read-only SQLite statement over the dump: the tables and views of docs/format.md (nodes_full, edges_full, …). A dump that is not a .db is converted once to a cached copy, as heapx sql does; the first query can take a while on a large dump.'), form, out);
  const run = async () => {
    const q = text.value;
    setParams({ q });
    clear(out).appendChild(loading());
    runBtn.disabled = true;
    try {
      const res = await post('sql', { query: q, limit: 1000 });
      clear(out);
      const rows = res.rows || [];
      append(out,
        h('p', { class: 'note' }, `${fmtCount(rows.length)} row${rows.length === 1 ? '' : 's'}${res.truncated ? ' (more rows were left out)' : ''} in ${res.seconds.toFixed(3)} s`),
        res.columns.length ? h('div', { class: 'scroll' }, h('table', { class: 'grid sql-result' },
          h('thead', {}, h('tr', {}, res.columns.map(c => h('th', {}, c)))),
          h('tbody', {}, rows.map(row => h('tr', {}, res.keys.map(k => cell(row[k]))))))) : null);
    } catch (err) {
      clear(out).appendChild(failure(err));
    } finally {
      runBtn.disabled = false;
    }
  };
  form.addEventListener('submit', ev => { ev.preventDefault(); run(); });
  text.addEventListener('keydown', ev => { if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); run(); } });
  if (r.params.get('q')) run();
}

function cell(v) {
  if (v === null || v === undefined) return h('td', { class: 'null' }, 'NULL');
  if (typeof v === 'number') return h('td', { class: 'num' }, String(v));
  const s = String(v);
  return h('td', { title: s.length > 200 ? cut(s, 2000) : undefined }, cut(s, 200));
}
