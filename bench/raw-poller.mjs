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
