// A profile modal: it shows a person and follows the store's "online" map.
export class ProfileModal {
  constructor(store, person) {
    this.person = person;
    this.history = Array.from({length: 300}, (_, i) => ({at: Date.now() - i * 1000, text: person.name + ' event ' + i}));
    this.el = document.createElement('div');
    this.el.className = 'modal';
    this.el.innerHTML = `<h2>${person.name}</h2><p class="status"></p><button class="close-modal">Close</button>`;
    // The bug: the subscription's unsubscribe is never called.
    this.unsubscribe = store.subscribe(s => this.render(s));
    this.el.querySelector('.close-modal').addEventListener('click', () => this.close());
    this.render(store.get());
  }
  render(s) { this.el.querySelector('.status').textContent = s.online[this.person.id] ? 'online' : 'away'; }
  close() { this.el.remove(); history.back(); }
}
