import {createStore} from './store.js';
import {ProfileModal} from './modal.js';

const store = createStore({online: {}});
const people = Array.from({length: 20}, (_, i) => ({id: i, name: 'Person ' + i}));
setTimeout(() => store.set({online: {3: true}}), 50);

// A single-page app under /spa/ with history routes: /spa/, /spa/people,
// /spa/people/ID (the list with a person's profile in a modal). The server
// answers index.html for every route.
const routes = {
  '/spa/': () => '<h1>Home</h1>',
  '/spa/people': () => '<h1>People</h1><ul>' + people.map(p => `<li><a href="/spa/people/${p.id}" data-link>${p.name}</a></li>`).join('') + '</ul>',
};
let modal = null;
function render() {
  const path = location.pathname;
  const m = path.match(/^\/spa\/people\/(\d+)$/);
  if (m) {
    if (!document.querySelector('#app h1')) document.getElementById('app').innerHTML = routes['/spa/people']();
    modal = new ProfileModal(store, people[+m[1]]);
    document.body.appendChild(modal.el);
    return;
  }
  if (modal) { modal.el.remove(); modal = null; }
  document.getElementById('app').innerHTML = (routes[path] || routes['/spa/'])();
}
document.addEventListener('click', e => {
  const a = e.target.closest('a[data-link]');
  if (!a) return;
  e.preventDefault();
  history.pushState(null, '', a.getAttribute('href'));
  render();
});
window.addEventListener('popstate', render);
render();
