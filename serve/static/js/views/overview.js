// Overview: the report (heapx report): what the heap is, what leaked,
// the leak suspects with their paths, with charts of what holds it.
import { h, append, fmtBytes, fmtCount } from '../dom.js';
import { get } from '../api.js';
import { barChart, documentView, into, state, warnings } from '../widgets.js';

export default function overview(box) {
  box.appendChild(h('h2', {}, 'Overview'));
  const body = box.appendChild(h('div'));
  into(body, async () => {
    const r = await get('report');
    const s = state.session;
    const t = s.trace;
    const facts = t ? [
      ['File', r.file], ['Format', 'memtrace (heapx trace)'], ['Events', fmtCount(t.events)], ['Objects', fmtCount(t.objects)],
      ['Allocation sites', fmtCount(t.sites)], ['Idle points', fmtCount(t.idle_points)], ['End time', fmtCount(t.end_time)],
    ] : [
      ['File', r.file], ...r.baselines.map((b, i) => [i === 0 ? 'Baselines' : '', b]),
      ['Format', r.format + ' (' + s.runtime + ')'], ['Objects', fmtCount(r.nodes)], ['References', fmtCount(r.edges)],
      ['Total size', `${fmtBytes(r.total_size)} (${fmtCount(r.total_size)} bytes)`], ['Retained-size policy', r.policy],
    ];
    if (!t && r.baselines.length) facts.push(['Growth since the first baseline', r.growth_percent.toFixed(1) + '%']);
    if (!t) facts.push(['Leaked size', `${fmtBytes(r.leaked_size)}: ${r.leaked_size_basis}`]);
    const classes = r.parts.find(p => p.key === 'classes');
    const classRows = classes ? classes.result.sections[0].rows : [];
    const toc = h('ul', { class: 'toc' }, r.parts.map(p => h('li', {}, h('a', { href: '#part-' + p.key, 'data-part': p.key }, p.title))));
    for (const a of toc.querySelectorAll('a')) {
      a.addEventListener('click', ev => {
        ev.preventDefault();
        const el = document.getElementById('part-' + a.dataset.part);
        if (el) el.scrollIntoView();
      });
    }
    return [
      warnings(r.warnings),
      h('div', { class: 'overview-top' },
        h('table', { class: 'facts-table' }, h('tbody', {}, facts.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))))),
        toc),
      h('div', { class: 'charts' },
        classRows.length ? barChart(`Retained size by ${s.words.class.toLowerCase()}`, classRows, x => x.constructor, x => x.retained_size, fmtBytes) : null,
        s.categories.length ? barChart('Shallow size by category', s.categories, x => x.category, x => x.shallow_size, fmtBytes) : null),
      r.parts.map(p => append(h('section', { class: 'part', id: 'part-' + p.key }, h('h2', {}, p.title)), documentView(p.result))),
    ];
  });
}
