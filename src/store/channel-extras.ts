import { prepared } from './prepared.js';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import { isStorableId } from './channels.js';
import type { ChannelFolderTable, RealmDomainTable, UserTopicTable } from './channels-schema.js';

type AnyDb = Db | TxDb;
export type ChannelFolderRow = Selectable<ChannelFolderTable>;
export type UserTopicRow = Selectable<UserTopicTable>;
export type RealmDomainRow = Selectable<RealmDomainTable>;

/** Queries for channel folders, topic preferences and allowed domains. */

const foldersQuery = prepared(1, (db, realmId: number) => db.selectFrom('channel_folders').selectAll().where('realm_id', '=', realmId).orderBy('order').orderBy('id'));
export function foldersInRealm(db: AnyDb, realmId: number): Promise<ChannelFolderRow[]> {
  return foldersQuery(db, realmId);
}

export function folderById(db: AnyDb, realmId: number, id: number): Promise<ChannelFolderRow | undefined> {
  if (!isStorableId(id)) return Promise.resolve(undefined);
  return db.selectFrom('channel_folders').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
}

/** A non-archived folder with this name (case-insensitive), other than `exceptId`. */
export function activeFolderByName(db: AnyDb, realmId: number, name: string, exceptId = -1): Promise<ChannelFolderRow | undefined> {
  return db
    .selectFrom('channel_folders')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('name_lower', '=', name.toLowerCase())
    .where('is_archived', '=', 0)
    .where('id', '!=', exceptId)
    .executeTakeFirst();
}

export async function insertFolder(db: AnyDb, row: Insertable<ChannelFolderTable>): Promise<number> {
  const r = await db.insertInto('channel_folders').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function updateFolder(db: AnyDb, id: number, patch: Updateable<ChannelFolderTable>): Promise<void> {
  await db.updateTable('channel_folders').set(patch).where('id', '=', id).execute();
}

export async function channelCountInFolder(db: AnyDb, folderId: number): Promise<number> {
  const rows = await db.selectFrom('channels').select('id').where('folder_id', '=', folderId).execute();
  return rows.length;
}

const userTopicsQuery = prepared(1, (db, userId: number) => db.selectFrom('user_topics').selectAll().where('user_id', '=', userId).orderBy('id'));
export function userTopicsOfUser(db: AnyDb, userId: number): Promise<UserTopicRow[]> {
  return userTopicsQuery(db, userId);
}

export function userTopicRow(db: AnyDb, userId: number, channelId: number, topic: string): Promise<UserTopicRow | undefined> {
  return db
    .selectFrom('user_topics')
    .selectAll()
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId)
    .where('topic_lower', '=', topic.toLowerCase())
    .executeTakeFirst();
}

const realmDomainsQuery = prepared(1, (db, realmId: number) => db.selectFrom('realm_domains').selectAll().where('realm_id', '=', realmId).orderBy('domain'));
export function realmDomainRows(db: AnyDb, realmId: number): Promise<RealmDomainRow[]> {
  return realmDomainsQuery(db, realmId);
}
