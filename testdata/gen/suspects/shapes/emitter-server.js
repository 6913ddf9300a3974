// A server whose settings live in a long-lived EventEmitter that emits 'change' when an admin edits them. Each
// request builds a SessionView and subscribes it to settings changes so that a long render would see new settings,
// but never unsubscribes: the listener array of `settings` grows by one closure (and its SessionView) per request.
'use strict';
const http = require('http');
const {EventEmitter} = require('events');

const settings = new EventEmitter();
settings.values = {theme: 'light', locale: 'en', pageSize: 20};
function setSetting(key, value) {
  settings.values[key] = value;
  settings.emit('change', key, value);
}

class SessionView {
  constructor(req) {
    this.path = req.url;
    this.agent = req.headers['user-agent'] || '';
    this.theme = settings.values.theme;
    this.pageSize = settings.values.pageSize;
    this.items = [];
    for (let i = 0; i < 8; i++) this.items.push({row: i, label: 'item ' + i});
  }
  render() {
    return JSON.stringify({path: this.path, theme: this.theme, items: this.items.slice(0, this.pageSize)});
  }
}

const server = http.createServer((req, res) => {
  const view = new SessionView(req);
  settings.on('change', function onSettingsChange(key, value) {
    if (key === 'theme') view.theme = value;
  });
  res.writeHead(200, {'content-type': 'application/json'});
  res.end(view.render());
});
server.listen(Number(process.env.PORT) || 0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
module.exports = {settings, setSetting, server};
