import { expect } from 'vitest';
import type { EventDelivery } from '../../src/events/types.js';
import { systemGroupId } from '../../src/domain/rules/group-settings.js';
import { expectSuccess, type FixtureName, type TestServer } from './server.js';
import { deleteChannelNotices } from './messages.js';

/** Helpers for the channel tests. */

export const ROLES: FixtureName[] = ['owner', 'iago', 'shiva', 'hamlet', 'polonius', 'bot'];

/** Creates a channel; like createChannel (support/messages.ts), without Notification Bot's notice unless keepNotice. */
export async function mkChannel(t: TestServer, name: string, params: Record<string, unknown> = {}, as: FixtureName = 'iago', keepNotice = false): Promise<number> {
  const id = expectSuccess(await t.post('/channels/create', { name, subscribers: [], ...params }, as)).id;
  if (!keepNotice) await deleteChannelNotices(t, id);
  return id;
}

export const ids = (t: TestServer, ...names: FixtureName[]): number[] => names.map((n) => t.users[n].id).sort((a, b) => a - b);

/** Every active user but the guest, sorted. */
export const nonGuests = (t: TestServer): number[] => ids(t, 'owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'bot');
export const everyone = (t: TestServer): number[] => ids(t, 'owner', 'iago', 'shiva', 'hamlet', 'cordelia', 'othello', 'polonius', 'bot');

export const group = (t: TestServer, name: string): Promise<number> => systemGroupId(t.app.ctx.db, t.realmId, name);

/** Deliveries without hint keys, as {event, userIds}. */
export function plain(deliveries: readonly EventDelivery[]): { event: Record<string, unknown>; userIds: number[] }[] {
  return deliveries.map((d) => {
    const event: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(d.event)) if (!k.startsWith('__')) event[k] = v;
    return { event, userIds: [...d.userIds].sort((a, b) => a - b) };
  });
}

/** Snapshot of every channel-related table, to prove a refused request wrote nothing. */
export async function snapshot(t: TestServer): Promise<unknown> {
  const db = t.app.ctx.db;
  const tables = ['channels', 'subscriptions', 'recipients', 'default_channels', 'channel_folders', 'user_topics', 'realm_domains', 'user_groups', 'realms'] as const;
  const out: Record<string, unknown> = {};
  for (const tbl of tables) out[tbl] = await db.selectFrom(tbl as never).selectAll().execute();
  return out;
}

/** Asserts that `fn` changes no table and sends no event. */
export async function expectNoChange(t: TestServer, fn: () => Promise<unknown>): Promise<void> {
  const before = await snapshot(t);
  const deliveries = await t.captureEvents(fn);
  expect(deliveries).toEqual([]);
  expect(await snapshot(t)).toEqual(before);
}

/** Changes a realm setting through PATCH /realm as the owner (group settings take a system group name). */
export async function realmSetting(t: TestServer, name: string, value: unknown): Promise<void> {
  const v = typeof value === 'string' && value.startsWith('role:') ? { new: await group(t, value) } : value;
  expectSuccess(await t.patch('/realm', { [name]: v }, 'owner'));
}
