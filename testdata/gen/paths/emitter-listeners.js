'use strict';
// An HTTP server whose requests each subscribe to a long-lived settings emitter and never unsubscribe: the
// listener (a closure over the request's state) stays in the emitter's listener array. make-paths-fixtures.js
// runs it under heapx capture with real requests from another process. It prints its port on its first line.
const http = require('http');
const {EventEmitter} = require('events');

const settings = new EventEmitter();
settings.setMaxListeners(0);
let theme = 'light';

class Subscription {
  constructor(path) {
    this.path = path;
    this.since = Date.now();
    this.updates = 0;
  }
}

function handle(req, res) {
  const sub = new Subscription(req.url);
  settings.on('change', function onChange(next) {
    sub.updates++;
    theme = next;
  });
  res.end(theme + '\n');
}

const server = http.createServer(handle);
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
