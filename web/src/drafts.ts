// Drafts saved as one types: always in localStorage (per account), and also through
// /drafts when the user enabled enable_drafts_synchronization.
import { call } from './api';
import { store } from './store';

export interface Draft {
  key: string;
  type: 'stream' | 'private';
  channel: string;
  topic: string;
  to: string;
  content: string;
  timestamp: number;
  serverId?: number;
}

function storageKey(): string {
  return `parley.drafts.${store.s?.myId ?? 0}`;
}

export function loadDrafts(): Record<string, Draft> {
  try {
    return JSON.parse(localStorage.getItem(storageKey()) ?? '{}') as Record<string, Draft>;
  } catch {
    return {};
  }
}

function saveAll(d: Record<string, Draft>): void {
  try {
    localStorage.setItem(storageKey(), JSON.stringify(d));
  } catch {
    // Storage full or disabled: drafts then live only on the server (if synced).
  }
}

export function draftKey(type: 'stream' | 'private', channel: string, topic: string, to: string): string {
  return type === 'stream' ? `s:${channel.toLowerCase()}:${topic.toLowerCase()}` : `d:${to.toLowerCase().replace(/\s+/g, '')}`;
}

const serverTimers = new Map<string, ReturnType<typeof setTimeout>>();

export function saveDraft(d: Omit<Draft, 'timestamp' | 'key' | 'serverId'>): void {
  const key = draftKey(d.type, d.channel, d.topic, d.to);
  const all = loadDrafts();
  if (!d.content.trim()) {
    deleteDraft(key);
    return;
  }
  const prev = all[key];
  all[key] = { ...d, key, timestamp: Math.floor(Date.now() / 1000), serverId: prev?.serverId };
  saveAll(all);
  syncToServer(key);
}

function syncToServer(key: string): void {
  if (!store.s?.settings.enable_drafts_synchronization) return;
  clearTimeout(serverTimers.get(key));
  serverTimers.set(
    key,
    setTimeout(() => {
      const d = loadDrafts()[key];
      const s = store.s;
      if (!d || !s) return;
      const to =
        d.type === 'stream'
          ? [...s.subs.values()].filter((c) => c.name.toLowerCase() === d.channel.toLowerCase()).map((c) => c.stream_id)
          : d.to.split(',').map((x) => [...s.users.values()].find((u) => u.email === x.trim() || u.full_name === x.trim())?.user_id).filter((x): x is number => x !== undefined);
      if (d.type === 'stream' && to.length === 0) return;
      const draft = { type: d.type, to, topic: d.type === 'stream' ? d.topic : '', content: d.content, timestamp: d.timestamp };
      const req = d.serverId
        ? call('PATCH', `drafts/${d.serverId}`, { draft })
        : call<{ ids: number[] }>('POST', 'drafts', { drafts: [draft] }).then((r) => {
            const all = loadDrafts();
            if (all[key]) {
              all[key]!.serverId = r.ids[0];
              saveAll(all);
            }
          });
      // Draft sync failing must not interrupt typing; the local copy is kept.
      req.catch(() => {});
    }, 1500),
  );
}

export function deleteDraft(key: string): void {
  const all = loadDrafts();
  const d = all[key];
  if (!d) return;
  delete all[key];
  saveAll(all);
  clearTimeout(serverTimers.get(key));
  if (d.serverId) call('DELETE', `drafts/${d.serverId}`).catch(() => {});
}
