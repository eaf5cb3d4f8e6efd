// A lean long-poll load generator for P5: one keep-alive TCP connection per
// client, a pre-built GET request per poll and no JSON parsing of answers
// (only the status line, Content-Length and the last `"id":N` of the body,
// which is the id of the last event: the queue appends `id` as each event's
// last key). The same generator drives the bare node:http baseline, so the
// ratio compares servers, not clients. Loopback only.
import net from 'node:net';

/**
 * Opens `n` connections to host:port and runs `next(i)` -> request bytes
 * for connection i, again after every answer, until stop() is called (a null
 * from next(i) leaves the connection idle until repoll(i)).
 * onAnswer(i, body) sees each answer's body (a string). Resolves to a
 * controller with answers() (count so far) and stop().
 */
export async function runPollers(port, n, next, onAnswer) {
  let answers = 0;
  let running = true;
  const conns = [];
  const done = [];
  for (let i = 0; i < n; i++) {
    const sock = net.connect({ host: '127.0.0.1', port, noDelay: true });
    await new Promise((resolve, reject) => {
      sock.once('connect', resolve);
      sock.once('error', reject);
    });
    let buf = '';
    let finished;
    done.push(new Promise((r) => (finished = r)));
    sock.setEncoding('latin1');
    sock.on('data', (chunk) => {
      buf += chunk;
      for (;;) {
        const headEnd = buf.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const cl = /content-length: *(\d+)/i.exec(buf.slice(0, headEnd));
        if (!cl) throw new Error('answer without content-length: ' + buf.slice(0, 200));
        const end = headEnd + 4 + Number(cl[1]);
        if (buf.length < end) return;
        if (!buf.startsWith('HTTP/1.1 200')) throw new Error('answer: ' + buf.slice(0, 300));
        const body = buf.slice(headEnd + 4, end);
        buf = buf.slice(end);
        answers++;
        onAnswer?.(i, body);
        if (running) {
          // next(i) may return null: the connection waits until repoll(i).
          const again = next(i);
          if (again !== null) sock.write(again);
        } else {
          sock.end();
          finished();
        }
      }
    });
    sock.on('error', (err) => {
      if (running) throw err;
    });
    conns.push(sock);
  }
  for (let i = 0; i < n; i++) conns[i].write(next(i));
  return {
    answers: () => answers,
    /** Sends connection i's next request (after next(i) returned null for it). */
    repoll: (i) => conns[i].write(next(i)),
    /** Stops re-polling; resolves once every connection got its last answer (release parked polls first). */
    stop: () => {
      running = false;
      return Promise.all(done);
    },
    destroy: () => conns.forEach((c) => c.destroy()),
  };
}

/** The id of the last event in a GET /events body (-1 if none). */
export function lastEventId(body) {
  const at = body.lastIndexOf('"id":');
  if (at < 0) return -1;
  let end = at + 5;
  while (end < body.length && body.charCodeAt(end) >= 48 && body.charCodeAt(end) <= 57) end++;
  return Number(body.slice(at + 5, end));
}

/** A GET /events request for queue q ({ queueId, last, auth }), as the lean pollers send it. */
export const pollRequest = (q, host = '127.0.0.1') =>
  `GET /api/v1/events?queue_id=${q.queueId}&last_event_id=${q.last} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${q.auth}\r\n\r\n`;

/**
 * Lean long-pollers for fan-out rounds (P4 and the scale bench): one connection per queue
 * ({ queueId, last, auth }), to the port portOf(q). round(send) runs send() and resolves, once
 * every queue has answered with an event newer than it had, to each answer's time in ms after
 * send() began. During a round a client re-polls only once the round is over (its re-poll is
 * the next round's parked poll), so the clients' own requests do not compete for the cores in
 * the window being timed.
 */
export async function fanOutPollers(queues, portOf) {
  let round = null;
  const byPort = new Map();
  for (const q of queues) {
    const port = portOf(q);
    if (!byPort.has(port)) byPort.set(port, []);
    byPort.get(port).push(q);
  }
  const groups = [];
  for (const [port, group] of byPort) {
    const pollers = await runPollers(port, group.length, (i) => (round?.answered.has(group[i]) ? null : pollRequest(group[i])), (i, body) => {
      const q = group[i];
      const id = lastEventId(body);
      if (id >= 0) q.last = id;
      if (round && id > round.before.get(q)) {
        round.answered.add(q);
        round.at.push(process.hrtime.bigint());
        if (round.at.length === queues.length) round.resolve();
      }
    });
    groups.push({ group, pollers });
  }
  return {
    async round(send) {
      let resolve;
      const all = new Promise((r) => (resolve = r));
      round = { at: [], resolve, before: new Map(queues.map((q) => [q, q.last])), answered: new Set() };
      const t0 = process.hrtime.bigint();
      await send();
      await all;
      const latencies = round.at.map((t) => Number(t - t0) / 1e6);
      round = null;
      for (const { group, pollers } of groups) group.forEach((_, i) => pollers.repoll(i));
      return latencies;
    },
    destroy: () => groups.forEach(({ pollers }) => pollers.destroy()),
  };
}
