// A fan-out round's timeline inside the server, for `bench/scale-events.mjs` (P4, P11). Loaded into
// each server with --import; on SIGTERM it writes one JSON file per server process, and
// `node bench/support/fanout-timeline.mjs <dir>` prints the medians:
//   FANOUT_TIMELINE_DIR=/tmp/tl BENCH_SERVER_NODE_ARGS="--import ./bench/support/fanout-timeline.mjs" \
//     BENCH_SCALE_PARTS=p4 BENCH_PROCESSES=0,1 node bench/scale-events.mjs
//   node bench/support/fanout-timeline.mjs /tmp/tl
// A round starts when EventQueues.dispatch gets a message event. Marked, in ms after that: every
// write to and read from a Redis socket (port 6379; the command's name for writes), the wake of
// more than 50 polls, and the end() of the first and last GET /events answer. Figures only: it
// wraps the built dist/ code's methods and node's socket calls, and changes nothing they do.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const now = () => Number(process.hrtime.bigint()) / 1e6;

// The steps printed, in order; in process only the last three exist.
const STEPS = [
  ['lookW', 'lookup written'],
  ['lookRtt', 'lookup round trip'],
  ['shape', 'reply -> append written'],
  ['script', 'append script + transfer'],
  ['toWake', 'script reply -> wake'],
  ['wake', 'wake begins'],
  ['first', 'first answer'],
  ['last', 'last answer'],
];

async function summarize(dir) {
  // The benchmarks' own median (bench/lib.mjs), loaded here only: the hook below runs inside the server.
  const { median } = await import('../lib.mjs');
  for (const f of fs.readdirSync(dir).filter((n) => n.startsWith('timeline.') && n.endsWith('.json'))) {
    // The first full round of each server runs while its code is still being compiled: left out.
    const rounds = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).filter((r) => r.answers >= 1000).slice(1);
    if (!rounds.length) continue;
    const at = (r, pred, after = -1) => r.marks.find(([w, t]) => t > after && pred(w))?.[1];
    const rows = rounds.map((r) => {
      const lookW = at(r, (w) => w.startsWith('w:sunion') || w.startsWith('w:smembers'));
      const lookR = lookW === undefined ? undefined : at(r, (w) => w.startsWith('r:'), lookW);
      const appW = at(r, (w) => w.startsWith('w:evalsha') || w.startsWith('w:eval'), lookR ?? -1);
      const appR = appW === undefined ? undefined : at(r, (w) => w.startsWith('r:'), appW);
      const wake = at(r, (w) => w === 'wake');
      return { appW, lookW, lookRtt: lookR - lookW, shape: appW - lookR, script: appR - appW, toWake: wake - appR, wake, first: r.first, last: r.last };
    });
    const redis = rows.some((x) => x.appW !== undefined);
    console.log(`${f}: ${rounds.length} rounds, ${redis ? 'Redis' : 'in process'} (medians, ms after the dispatch began)`);
    for (const [k, name] of redis ? STEPS : STEPS.slice(-3)) {
      const xs = rows.map((x) => x[k]).filter(Number.isFinite);
      console.log(`  ${name.padEnd(26)} ${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})`);
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await summarize(process.argv[2] ?? process.env.FANOUT_TIMELINE_DIR ?? '.');
} else {
  const dir = process.env.FANOUT_TIMELINE_DIR ?? '.';
  const { EventQueues } = await import(path.join(ROOT, 'dist/src/events/queues.js'));
  let round;
  const rounds = [];
  const mark = (what) => {
    if (round && round.marks.length < 60 && now() - round.t0 < 200) round.marks.push([what, +(now() - round.t0).toFixed(3)]);
  };
  const dispatch = EventQueues.prototype.dispatch;
  EventQueues.prototype.dispatch = function (deliveries) {
    if (deliveries.some((d) => d.event.type === 'message')) rounds.push((round = { t0: now(), marks: [], answers: 0 }));
    return dispatch.call(this, deliveries);
  };
  const wake = EventQueues.prototype.wake;
  EventQueues.prototype.wake = function (grown, ...rest) {
    if (grown.length > 50) mark('wake');
    return wake.call(this, grown, ...rest);
  };
  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (chunk, ...rest) {
    if (round && this.remotePort === 6379) {
      const head = typeof chunk === 'string' ? chunk.slice(0, 100) : Buffer.isBuffer(chunk) ? chunk.subarray(0, 100).toString('latin1') : '';
      const name = /\r\n\$\d+\r\n([a-zA-Z]+)\r\n/.exec(head)?.[1]?.toLowerCase() ?? '?';
      mark(`w:${name}:${chunk.length}`);
    }
    return write.call(this, chunk, ...rest);
  };
  const emit = net.Socket.prototype.emit;
  net.Socket.prototype.emit = function (name, ...args) {
    if (name === 'data' && round && this.remotePort === 6379) mark(`r:${args[0].length}`);
    return emit.call(this, name, ...args);
  };
  const end = http.ServerResponse.prototype.end;
  http.ServerResponse.prototype.end = function (...args) {
    if (round && this.req?.url?.includes('/events')) {
      const t = +(now() - round.t0).toFixed(3);
      if (round.answers++ === 0) round.first = t;
      round.last = t;
    }
    return end.apply(this, args);
  };
  process.prependListener('SIGTERM', () => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `timeline.${process.pid}.json`), JSON.stringify(rounds));
  });
}
