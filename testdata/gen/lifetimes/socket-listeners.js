// A keep-alive server that adds a 'close' listener to the connection's
// socket on every request (issue 26; Node warns MaxListenersExceeded): the
// socket, which Node made and the program does not hold, keeps them as
// long as the connection lives.
//
// Expected (cmd/heapx/traceservers_linux_test.go): the trace cannot
// measure this leak (the socket lives in the analysis only while the
// program holds it), and says so: a trace_native_emitter warning with the
// most 'close' listeners the socket held at once, first touched at line 14.
'use strict';
const http = require('http');
http.createServer((req, res) => {
  const info = { url: req.url, at: Date.now() };
  req.socket.on('close', () => { info.closed = true; });
  res.end('ok');
}).listen(0, '127.0.0.1', function () { console.log('listening ' + this.address().port + ' ' + process.pid); });
