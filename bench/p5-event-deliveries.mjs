// P5: event deliveries per second, against bare node:http in the same run.
// CLIENTS long-pollers (100 users, CLIENTS/100 queues each) answer-and-re-poll
// as fast as they can while DRIVERS concurrent drivers keep sending channel
// typing notifications to a channel all users are subscribed to (one typing
// event per queue each; typing writes nothing, so the figure measures delivery,
// not the database). A delivery is one long-poll answer followed by its re-poll;
// the figure is answers per second over DURATION seconds, after a warm-up.
// Events per answer show how much batching the load caused.
//
// The pollers use bench/raw-poller.mjs (one keep-alive socket each, pre-built
// requests, no JSON parsing), and the same generator with the same number of
// connections drives the baseline: a bare node:http server in its own process
// answering a 1 KB JSON body. ratio = deliveries/s / baseline req/s.
// BENCH_P5_CLIENT=http uses the older node:http client for the pollers instead.
import { spawn } from 'node:child_process';
import { freePort, median, record, startParley, table } from './lib.mjs';
import { call, channelWith, makeUsers, poll, register, sleep } from './events-lib.mjs';
import { lastEventId, pollRequest, runPollers } from './raw-poller.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CLIENTS = Number(process.env.BENCH_P5_CLIENTS ?? 500);
const USERS = 100;
const DRIVERS = Number(process.env.BENCH_P5_DRIVERS ?? 2);
const RAW = (process.env.BENCH_P5_CLIENT ?? 'raw') === 'raw';
const CAPS = { notification_settings_null: true, stream_typing_notifications: true };

/** Answers per second of `ctl` over RUNS windows of DURATION s (after a warm-up). */
async function rates(answers, onWindow) {
  await sleep(2000);
  const out = [];
  for (let run = 0; run < RUNS; run++) {
    const a0 = answers();
    const t0 = process.hrtime.bigint();
    const w = onWindow?.();
    await sleep(DURATION * 1000);
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    out.push((answers() - a0) / secs);
    w?.(secs);
  }
  return out;
}

/** The baseline: a bare node:http server (own process, 1 KB JSON), driven by the same generator. */
async function baseline() {
  const port = await freePort();
  const code = `const http=require('node:http');const body=JSON.stringify({result:'success',msg:'',pad:'x'.repeat(1024-40)});` +
    `http.createServer((q,r)=>{r.writeHead(200,{'content-type':'application/json','content-length':Buffer.byteLength(body)});r.end(body)}).listen(${port},'127.0.0.1',()=>console.log('up'))`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((r) => child.stdout.once('data', r));
  const req = 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
  const ctl = await runPollers(port, CLIENTS, () => req);
  const rs = await rates(ctl.answers);
  await ctl.stop();
  child.kill('SIGTERM');
  return median(rs);
}

const baselineRps = RAW ? await baseline() : undefined;

const server = await startParley({
  PARLEY_PASSWORD_HASH_COST: 'fast',
  PARLEY_HEARTBEAT_MS: '120000',
  PARLEY_HEARTBEAT_JITTER_MS: '0',
  PARLEY_RATE_LIMIT_PER_USER: '0',
  PARLEY_RATE_LIMIT_PER_IP: '0',
});
try {
  const users = await makeUsers(server, USERS, 'p5');
  const channelId = await channelWith(server, 'p5 deliveries', users);
  const typing = async (op) => {
    const r = await call(server.base, server.auth, 'POST', '/typing', { type: 'channel', op, stream_id: channelId, topic: 'bench' });
    if (r.result !== 'success') throw new Error(JSON.stringify(r));
  };
  const queues = [];
  for (let i = 0; i < CLIENTS; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(CLIENTS, i + 100); j++) batch.push(register(server.base, users[j % USERS].auth, { event_types: ['typing'], client_capabilities: CAPS }));
    queues.push(...(await Promise.all(batch)));
  }

  let answers = 0;
  let events = 0;
  let running = true;
  let pollers;
  if (RAW) {
    const host = new URL(server.base).host;
    pollers = await runPollers(new URL(server.base).port, queues.length, (i) => pollRequest(queues[i], host), (i, body) => {
      const id = lastEventId(body);
      if (id >= 0) queues[i].last = id;
      let at = -1;
      while ((at = body.indexOf('{"type":', at + 1)) >= 0) events++;
    });
  } else {
    pollers = { stop: () => Promise.all(loops), answers: () => answers };
    var loops = queues.map(async (q) => {
      while (running) {
        const got = await poll(server.base, q);
        answers++;
        events += got.length;
      }
    });
  }
  const count = () => (RAW ? pollers.answers() : answers);
  let commits = 0;
  const drivers = Array.from({ length: DRIVERS }, async () => {
    while (running) {
      await typing(commits % 2 ? 'start' : 'stop');
      commits++;
    }
  });

  const perAnswer = [];
  const commitRates = [];
  const rs = await rates(count, () => {
    const a0 = count();
    const e0 = events;
    const c0 = commits;
    return (secs) => {
      perAnswer.push((events - e0) / Math.max(1, count() - a0));
      commitRates.push((commits - c0) / secs);
    };
  });
  running = false;
  // One more notification releases every poller so the loops end.
  await Promise.all(drivers);
  const stopped = pollers.stop();
  await typing('stop');
  await stopped;

  const figures = {
    deliveries_per_s: Math.round(median(rs)),
    baseline_rps: baselineRps === undefined ? null : Math.round(baselineRps),
    ratio: baselineRps === undefined ? null : +(median(rs) / baselineRps).toFixed(3),
    events_per_answer: +median(perAnswer).toFixed(2),
    typing_calls_per_s: Math.round(median(commitRates)),
    client: RAW ? 'raw sockets (bench/raw-poller.mjs)' : 'node:http',
    drivers: DRIVERS,
    clients: CLIENTS,
    duration_s: DURATION,
    runs: RUNS,
  };
  table([
    { bench: `P5 baseline: bare node:http, ${CLIENTS} connections, same generator`, 'req or deliveries/s': figures.baseline_rps ?? 'n/a', ratio: '', 'events/answer': '', 'typing calls/s': '', target: '' },
    { bench: `P5 event deliveries, ${CLIENTS} long-pollers`, 'req or deliveries/s': figures.deliveries_per_s, ratio: figures.ratio ?? 'n/a', 'events/answer': figures.events_per_answer, 'typing calls/s': figures.typing_calls_per_s, target: '>= 0.60' },
  ]);
  record('P5', figures);
} finally {
  await server.stop();
}
process.exit(0);
