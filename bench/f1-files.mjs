// F1: uploading and serving a 1 MB file. A built Parley (dist/) on SQLite and local disk:
//  - upload: UPLOADS POSTs of a 1 MB multipart file, CONCURRENCY at a time; uploads/s, MB/s, p50/p99;
//  - download: autocannon GET /user_uploads/<path> of that 1 MB file with the uploader's key for
//    DURATION s on 10 connections; downloads/s, MB/s, p50/p99;
//  - memory: the server's RSS sampled every 50 ms and its peak (VmHWM) after the runs, then once more
//    after one 20 MB upload and download, to show that memory does not follow the file size
//    (uploads stream to a temporary file and the store; downloads stream from it).
// Run: npm run build && node bench/f1-files.mjs
import fs from 'node:fs';
import { load, record, startParley, table } from './lib.mjs';

const UPLOADS = Number(process.env.BENCH_F1_UPLOADS ?? 200);
const CONCURRENCY = Number(process.env.BENCH_F1_CONCURRENCY ?? 4);
const DURATION = Number(process.env.BENCH_F1_DURATION ?? 10);
const MB = 1024 * 1024;

function status(pid) {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)[1]);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

function multipart(name, data) {
  const boundary = 'benchboundary' + Math.random().toString(16).slice(2);
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

async function upload(server, name, data) {
  const { body, type } = multipart(name, data);
  const r = await fetch(`${server.base}/api/v1/user_uploads`, { method: 'POST', headers: { authorization: server.auth, 'content-type': type }, body });
  const j = await r.json();
  if (j.result !== 'success') throw new Error(JSON.stringify(j));
  return j.url;
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

const server = await startParley({ PARLEY_PASSWORD_HASH_COST: 'fast' });
const pid = server.child.pid;
let peakSampled = 0;
const sampler = setInterval(() => (peakSampled = Math.max(peakSampled, status(pid).rss)), 50);
try {
  const idle = status(pid);
  const file = Buffer.alloc(MB);
  for (let i = 0; i < file.length; i++) file[i] = (i * 31) & 0xff;
  // Warm-up (sharp is not involved: the file is not an image).
  const url = await upload(server, 'warm.bin', file);

  const lat = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < UPLOADS) {
        next++;
        const s = performance.now();
        await upload(server, 'one-mb.bin', file);
        lat.push(performance.now() - s);
      }
    }),
  );
  const upSecs = (performance.now() - t0) / 1000;
  const afterUploads = status(pid);

  const dl = await load({ url: server.base + url, headers: { authorization: server.auth }, connections: 10, duration: DURATION });
  const afterDownloads = status(pid);

  // One 20 MB file up and down: does peak memory follow the file size?
  const big = Buffer.alloc(20 * MB, 7);
  const bigUrl = await upload(server, 'twenty-mb.bin', big);
  const got = await fetch(server.base + bigUrl, { headers: { authorization: server.auth } });
  const bytes = (await got.arrayBuffer()).byteLength;
  if (bytes !== big.length) throw new Error('20 MB download came back short');
  const afterBig = status(pid);

  const figures = {
    upload_per_s: +(UPLOADS / upSecs).toFixed(1),
    upload_mb_per_s: +((UPLOADS * 1) / upSecs).toFixed(1),
    upload_p50_ms: +pct(lat, 50).toFixed(1),
    upload_p99_ms: +pct(lat, 99).toFixed(1),
    download_per_s: +dl.rps.toFixed(1),
    download_mb_per_s: +dl.rps.toFixed(1),
    download_p50_ms: dl.p50,
    download_p99_ms: dl.p99,
    download_errors: dl.errors,
    idle_rss_mb: +idle.rss.toFixed(1),
    peak_rss_mb_1mb_runs: +Math.max(afterUploads.hwm, afterDownloads.hwm).toFixed(1),
    peak_rss_mb_after_20mb: +afterBig.hwm.toFixed(1),
    sampled_peak_rss_mb: +peakSampled.toFixed(1),
  };
  table([figures]);
  record('F1', figures);
} finally {
  clearInterval(sampler);
  await server.stop();
}
