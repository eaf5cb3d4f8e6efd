// Helpers for the event-queue benchmarks (P4, P5, P6): a keep-alive HTTP client
// with unlimited sockets, users with API keys, queue registration and long polls.
import fs from 'node:fs';
import http from 'node:http';

export const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 100_000 });

const enc = (params) =>
  new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();

/** One API call; resolves with the parsed body (and never rejects on HTTP errors). */
export function call(base, auth, method, path, params = {}) {
  const body = enc(params);
  const url = new URL(`${base}/api/v1${path}${method === 'GET' && body ? `?${body}` : ''}`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: {
          authorization: auth,
          ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) }),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on('error', reject);
    if (method !== 'GET') req.end(body);
    else req.end();
  });
}

const basic = (email, key) => 'Basic ' + Buffer.from(`${email}:${key}`).toString('base64');

/** Creates n users (server started with PARLEY_PASSWORD_HASH_COST=fast) and returns their auth headers and ids. */
export async function makeUsers(server, n, prefix = 'bench') {
  const users = [];
  const password = 'bench-User-pa55word';
  for (let i = 0; i < n; i += 10) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 10); j++) {
      batch.push(
        (async () => {
          const email = `${prefix}${j}@example.com`;
          const made = await call(server.base, server.auth, 'POST', '/users', { email, password, full_name: `${prefix} user ${j}` });
          if (made.result !== 'success') throw new Error(`create user: ${JSON.stringify(made)}`);
          const key = await call(server.base, '', 'POST', '/fetch_api_key', { username: email, password });
          if (key.result !== 'success') throw new Error(`fetch_api_key: ${JSON.stringify(key)}`);
          return { id: made.user_id, auth: basic(email, key.api_key) };
        })(),
      );
    }
    users.push(...(await Promise.all(batch)));
  }
  return users;
}

export async function register(base, auth, params) {
  const r = await call(base, auth, 'POST', '/register', params);
  if (r.result !== 'success') throw new Error(`register: ${JSON.stringify(r)}`);
  return { auth, queueId: r.queue_id, last: r.last_event_id };
}

/** A blocking GET /events; updates q.last from the answer. */
export async function poll(base, q) {
  const r = await call(base, q.auth, 'GET', '/events', { queue_id: q.queueId, last_event_id: q.last });
  if (r.result !== 'success') throw new Error(`poll: ${JSON.stringify(r)}`);
  if (r.events.length) q.last = r.events[r.events.length - 1].id;
  return r.events;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function rssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}

export const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** A public channel with every given user subscribed (the owner creates it). */
export async function channelWith(server, name, users) {
  const r = await call(server.base, server.auth, 'POST', '/channels/create', { name, subscribers: users.map((u) => u.id) });
  if (r.result !== 'success') throw new Error(`channel: ${JSON.stringify(r)}`);
  return r.id;
}

/** One channel message from the owner; resolves when the server answered (after commit and queueing). */
export async function sendToChannel(server, channel, content) {
  const r = await call(server.base, server.auth, 'POST', '/messages', { type: 'stream', to: channel, topic: 'bench', content });
  if (r.result !== 'success') throw new Error(`send: ${JSON.stringify(r)}`);
  return r;
}
