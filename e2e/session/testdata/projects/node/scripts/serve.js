'use strict';

// serve runs a development server on a free port of 127.0.0.1, writes the
// port and its pid to /tmp, and stops by itself after a minute.
const fs = require('node:fs');
const http = require('node:http');
const { greet } = require('../src/index');

const server = http.createServer((req, res) => {
  if (req.url === '/health') {
    res.end('ok\n');
    return;
  }
  const name = new URL(req.url, 'http://localhost').searchParams.get('name') || 'World';
  res.end(greet(name) + '\n');
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync('/tmp/greet-serve.port', String(server.address().port));
  fs.writeFileSync('/tmp/greet-serve.pid', String(process.pid));
  console.log(`listening on ${server.address().port}`);
});
setTimeout(() => process.exit(0), 60000).unref();
