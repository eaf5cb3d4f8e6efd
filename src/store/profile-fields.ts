import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from './db.js';
import type { TxDb } from '../domain/context.js';
import type { CustomProfileFieldTable, CustomProfileFieldValueTable } from './schema.js';
import { isRenderable } from '../domain/rules/profile-fields.js';

type AnyDb = Db | TxDb;
export type ProfileFieldRow = Selectable<CustomProfileFieldTable>;
export type ProfileFieldValueRow = Selectable<CustomProfileFieldValueTable>;

/** A realm's fields in display order. */
export function fieldsInRealm(db: AnyDb, realmId: number): Promise<ProfileFieldRow[]> {
  return db.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', realmId).orderBy('sort_order').orderBy('id').execute();
}

export function fieldById(db: AnyDb, realmId: number, id: number): Promise<ProfileFieldRow | undefined> {
  return db.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
}

export function fieldByName(db: AnyDb, realmId: number, name: string): Promise<ProfileFieldRow | undefined> {
  return db.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', realmId).where('name', '=', name).executeTakeFirst();
}

export async function countSummaryFields(db: AnyDb, realmId: number, excludeId?: number): Promise<number> {
  let q = db
    .selectFrom('custom_profile_fields')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('display_in_profile_summary', '=', 1);
  if (excludeId !== undefined) q = q.where('id', '!=', excludeId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

export async function insertField(db: AnyDb, row: Insertable<CustomProfileFieldTable>): Promise<number> {
  const r = await db.insertInto('custom_profile_fields').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function updateField(db: AnyDb, id: number, patch: Updateable<CustomProfileFieldTable>): Promise<void> {
  await db.updateTable('custom_profile_fields').set(patch).where('id', '=', id).execute();
}

export async function deleteField(db: AnyDb, id: number): Promise<void> {
  await db.deleteFrom('custom_profile_field_values').where('field_id', '=', id).execute();
  await db.deleteFrom('custom_profile_fields').where('id', '=', id).execute();
}

/** Values of a realm's fields, for all users or some; with the field type for rendering decisions. */
export function valuesInRealm(db: AnyDb, realmId: number, userIds?: readonly number[]) {
  let q = db
    .selectFrom('custom_profile_field_values as v')
    .innerJoin('custom_profile_fields as f', 'f.id', 'v.field_id')
    .select(['v.user_id', 'v.field_id', 'v.value', 'v.rendered_value', 'f.field_type'])
    .where('v.realm_id', '=', realmId);
  if (userIds) q = q.where('v.user_id', 'in', [...userIds]);
  return q.orderBy('v.user_id').orderBy('f.sort_order').orderBy('f.id').execute();
}

export function valueOf(db: AnyDb, userId: number, fieldId: number): Promise<ProfileFieldValueRow | undefined> {
  return db.selectFrom('custom_profile_field_values').selectAll().where('user_id', '=', userId).where('field_id', '=', fieldId).executeTakeFirst();
}

export function valuesOfField(db: AnyDb, fieldId: number): Promise<ProfileFieldValueRow[]> {
  return db.selectFrom('custom_profile_field_values').selectAll().where('field_id', '=', fieldId).orderBy('user_id').execute();
}

export async function upsertValue(db: AnyDb, row: Insertable<CustomProfileFieldValueTable>): Promise<void> {
  await db
    .insertInto('custom_profile_field_values')
    .values(row)
    .onConflict((oc) => oc.columns(['user_id', 'field_id']).doUpdateSet({ value: row.value, rendered_value: row.rendered_value ?? null }))
    .execute();
}

export async function deleteValue(db: AnyDb, userId: number, fieldId: number): Promise<void> {
  await db.deleteFrom('custom_profile_field_values').where('user_id', '=', userId).where('field_id', '=', fieldId).execute();
}

/** One user's profile_data: field id -> {value, rendered_value for Markdown field types}. */
export type ProfileData = Record<string, { value: string; rendered_value?: string | null }>;

/**
 * profile_data for the user objects of GET /users, /users/{id}, /users/me and
 * /register's realm_users: every user with at least one value gets an entry
 * (users without values are absent; present them as {}). One query.
 */
export async function profileDataByUser(db: AnyDb, realmId: number, userIds?: readonly number[]): Promise<Map<number, ProfileData>> {
  const out = new Map<number, ProfileData>();
  if (userIds && userIds.length === 0) return out;
  for (const r of await valuesInRealm(db, realmId, userIds)) {
    let data = out.get(r.user_id);
    if (!data) out.set(r.user_id, (data = {}));
    data[String(r.field_id)] = isRenderable(r.field_type) ? { value: r.value, rendered_value: r.rendered_value } : { value: r.value };
  }
  return out;
}
