// The event-queue drainer of P8/P9 (bench/p8-p9-send-messages.mjs), run in a worker thread.
// Every 250 ms it polls each queue with dont_block and acknowledges what it got, as connected
// clients keep their backlogs short. It runs apart from the load generator because parsing the
// drained events (some 8 MB of JSON every 250 ms at 600 sends/s into 50 queues) in autocannon's
// own thread held back autocannon's reading of replies, and the time it waited was counted as the
// server's latency (docs/performance.md, "2026-11-28").
import { parentPort, workerData } from 'node:worker_threads';
import { call } from './events-lib.mjs';

const { base, queues, intervalMs } = workerData;
let draining = true;
let polls = 0;
let events = 0;
let failures = 0;
parentPort.on('message', (m) => {
  if (m === 'stop') draining = false;
});
while (draining) {
  await Promise.all(
    queues.map(async (q) => {
      const r = await call(base, q.auth, 'GET', '/events', { queue_id: q.queueId, last_event_id: q.last, dont_block: true });
      polls++;
      if (r.result !== 'success') failures++;
      else if (r.events.length) {
        events += r.events.length;
        q.last = r.events[r.events.length - 1].id;
      }
    }),
  );
  await new Promise((r) => setTimeout(r, intervalMs));
}
parentPort.postMessage({ polls, events, failures });
