// The event-queue path alone, without HTTP: Q queues (100 users), ROUNDS
// rounds of "every queue parks a long poll, one event is dispatched to all
// users, every poll answers". For instruction counts that hold on a noisy
// machine: valgrind --tool=callgrind node bench/support/queue-path.mjs
// (ROOT=<checkout> to measure another build's dist/). Prints the answers seen.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.env.ROOT ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const { EventQueues } = await import(pathToFileURL(path.join(root, 'dist/src/events/queues.js')).href);
const { MemoryQueueStore } = await import(pathToFileURL(path.join(root, 'dist/src/events/queue-store.js')).href);
const Q = Number(process.env.Q ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 20);
const caps = { notification_settings_null: true, stream_typing_notifications: true };

const queues = new EventQueues(new MemoryQueueStore(2000), { heartbeatMinMs: 600_000, heartbeatJitterMs: 0, dataDir: null });
const descs = [];
for (let i = 0; i < Q; i++) {
  descs.push(
    await queues.register({ userId: 1 + (i % 100), realmId: 1, eventTypes: ['typing'], narrow: [], capabilities: caps, applyMarkdown: false, clientGravatar: false, slimPresence: false, allPublicStreams: false, includeSubscribers: false, clientName: 'bench', lifespanSecs: 0 }),
  );
}
const users = Array.from({ length: 100 }, (_, i) => i + 1);
const last = new Array(Q).fill(-1);
let answers = 0;
let bytes = 0;
for (let r = 0; r < ROUNDS; r++) {
  const polls = descs.map((d, i) => queues.pollAnswer(d.userId, d.id, last[i], false));
  await queues.dispatch([{ realmId: 1, userIds: users, event: { type: 'typing', op: r % 2 ? 'start' : 'stop', sender: { user_id: 1, email: 'a@example.com' }, message_type: 'stream', stream_id: 5, topic: 'bench' } }]);
  const got = await Promise.all(polls);
  for (let i = 0; i < Q; i++) {
    answers++;
    bytes += got[i].eventsJson.length;
    last[i]++;
  }
}
console.log(JSON.stringify({ queues: Q, rounds: ROUNDS, answers, bytes }));
