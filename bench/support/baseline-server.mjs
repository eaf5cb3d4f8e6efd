// A baseline server in its own process, as Parley runs in its own: argv[2] is
// "http" (bare node:http) or "fastify" (a bare Fastify route, no hooks, no
// logger). Both answer any GET with the same 1 KB JSON body. Kind "fanout"
// (P4's baseline) is bare node:http holding every GET open until a POST comes,
// then answering all of them in one loop with a 1 KB JSON body that ends in
// "id":<n> (n counts the POSTs, so a lean poller sees a newer event), then the
// POST. Prints {"port":N} on stdout once listening; exits on SIGTERM.
import http from 'node:http';

const kind = process.argv[2];
const body = JSON.stringify({ result: 'success', msg: '', pad: 'x'.repeat(1024 - 40) });
let close;
let port;
if (kind === 'http') {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  port = server.address().port;
  close = () => new Promise((r) => server.close(r));
} else if (kind === 'fanout') {
  let parked = [];
  let posts = 0;
  const pad = 'x'.repeat(1024 - 60);
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      parked.push(res);
      return;
    }
    req.resume();
    req.on('end', () => {
      posts++;
      const answer = `{"result":"success","msg":"","pad":"${pad}","events":[{"id":${posts}}]}`;
      const length = Buffer.byteLength(answer);
      const waiting = parked;
      parked = [];
      for (const r of waiting) {
        r.writeHead(200, { 'content-type': 'application/json', 'content-length': length });
        r.end(answer);
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 20 });
      res.end('{"result":"success"}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  port = server.address().port;
  close = () => {
    for (const r of parked) r.destroy();
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  };
} else if (kind === 'fastify') {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  app.get('/*', (_req, reply) => {
    reply.header('content-type', 'application/json').send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = app.server.address().port;
  close = () => app.close();
} else {
  console.error('usage: baseline-server.mjs http|fastify|fanout');
  process.exit(2);
}
process.stdout.write(JSON.stringify({ port }) + '\n');
process.on('SIGTERM', async () => {
  await close();
  process.exit(0);
});
