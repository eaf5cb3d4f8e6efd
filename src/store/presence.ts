import { sql } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';

type AnyDb = Db | TxDb;

/** Presence rows and realm sequences (queries only; the live state is in memory, domain/presence-state.ts). */

export interface PresenceRow {
  readonly user_id: number;
  readonly realm_id: number;
  readonly last_active_time: number | null;
  readonly last_connected_time: number;
  readonly last_update_id: number;
}

export function allPresences(db: AnyDb): Promise<PresenceRow[]> {
  return db.selectFrom('user_presences').selectAll().execute();
}

export function allPresenceSequences(db: AnyDb): Promise<{ realm_id: number; last_update_id: number }[]> {
  return db.selectFrom('presence_sequences').selectAll().execute();
}

/** Rows per statement: 5 parameters each, well under SQLite's variable limit. */
const CHUNK = 1000;

export async function upsertPresences(db: AnyDb, rows: readonly PresenceRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await db
      .insertInto('user_presences')
      .values(rows.slice(i, i + CHUNK).map((r) => ({ ...r })))
      .onConflict((oc) =>
        oc.column('user_id').doUpdateSet((eb) => ({
          realm_id: eb.ref('excluded.realm_id'),
          last_active_time: eb.ref('excluded.last_active_time'),
          last_connected_time: eb.ref('excluded.last_connected_time'),
          last_update_id: eb.ref('excluded.last_update_id'),
        }))
          // Several processes write through the entries they stored: an older one never replaces a newer.
          .where(sql<boolean>`excluded.last_update_id > user_presences.last_update_id`),
      )
      .execute();
  }
}

export async function upsertPresenceSequences(db: AnyDb, rows: readonly { realm_id: number; last_update_id: number }[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('presence_sequences')
    .values(rows.map((r) => ({ ...r })))
    .onConflict((oc) =>
      oc
        .column('realm_id')
        .doUpdateSet((eb) => ({ last_update_id: eb.ref('excluded.last_update_id') }))
        .where(sql<boolean>`excluded.last_update_id > presence_sequences.last_update_id`),
    )
    .execute();
}

/** What presence needs to know about a realm's users (one query, cached until users change). */
export function presenceDirectoryRows(db: AnyDb, realmId: number) {
  return db
    .selectFrom('users')
    .select(['id', 'delivery_email', 'settings', 'is_bot', 'bot_type', 'is_active', 'date_joined'])
    .where('realm_id', '=', realmId)
    .execute();
}
