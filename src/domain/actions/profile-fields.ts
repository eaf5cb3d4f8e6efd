import type { AppCtx, Tx } from '../context.js';
import { realmUrl } from '../../config.js';
import { emptyMarkdownContext, renderMarkdownSafe, type MarkdownContext } from '../rules/markdown/index.js';
import {
  DEFAULT_EXTERNAL_ACCOUNTS,
  FIELD_EXTERNAL_ACCOUNT,
  FIELD_SELECT,
  isDefaultExternalField,
  isRenderable,
  parseFieldData,
  storedFieldData,
  type FieldData,
} from '../rules/profile-fields.js';
import * as store from '../../store/profile-fields.js';
import type { ProfileFieldRow } from '../../store/profile-fields.js';
import { activeUserIds, type UserRow } from '../../store/users.js';
import { presentProfileField } from '../../presenters/profile-field.js';

/** custom_profile_fields event: the realm's whole list, to every active user (as Zulip's notify_realm_custom_profile_fields). */
async function notifyFields(tx: Tx, realmId: number): Promise<void> {
  const fields = (await store.fieldsInRealm(tx.db, realmId)).map(presentProfileField);
  tx.emit(realmId, { type: 'custom_profile_fields', fields }, await activeUserIds(tx.db, realmId));
}

export interface NewField {
  readonly name: string;
  readonly hint: string;
  readonly fieldType: number;
  readonly fieldData: FieldData;
  readonly displayInProfileSummary: boolean;
  readonly required: boolean;
  readonly editableByUser: boolean;
}

/** Creates a field (a built-in external account takes its label and hint from the defaults); order = id. */
export async function doCreateField(tx: Tx, realmId: number, f: NewField): Promise<number> {
  const builtIn = isDefaultExternalField(f.fieldType, f.fieldData) ? DEFAULT_EXTERNAL_ACCOUNTS[f.fieldData.subtype as string]! : null;
  const id = await store.insertField(tx.db, {
    realm_id: realmId,
    name: builtIn ? builtIn.name : f.name,
    hint: builtIn ? builtIn.hint : f.hint,
    field_type: f.fieldType,
    field_data: builtIn ? JSON.stringify({ subtype: f.fieldData.subtype }) : storedFieldData(f.fieldType, f.fieldData),
    sort_order: 0,
    display_in_profile_summary: f.displayInProfileSummary ? 1 : 0,
    required: f.required ? 1 : 0,
    editable_by_user: f.editableByUser ? 1 : 0,
  });
  await store.updateField(tx.db, id, { sort_order: id });
  await notifyFields(tx, realmId);
  return id;
}

export interface FieldChanges {
  readonly name?: string;
  readonly hint?: string;
  readonly fieldData?: FieldData;
  readonly displayInProfileSummary?: boolean;
  readonly required?: boolean;
  readonly editableByUser?: boolean;
}

/**
 * Updates a field. Removing choices from a choice field clears the values
 * that used them, each with a realm_user custom_profile_field update (value null).
 */
export async function doUpdateField(tx: Tx, field: ProfileFieldRow, c: FieldChanges): Promise<void> {
  const patch: Parameters<typeof store.updateField>[2] = {};
  if (c.name !== undefined) patch.name = c.name;
  if (c.hint !== undefined) patch.hint = c.hint;
  if (c.required !== undefined) patch.required = c.required ? 1 : 0;
  if (c.editableByUser !== undefined) patch.editable_by_user = c.editableByUser ? 1 : 0;
  if (c.displayInProfileSummary !== undefined) patch.display_in_profile_summary = c.displayInProfileSummary ? 1 : 0;
  if (c.fieldData !== undefined && (field.field_type === FIELD_SELECT || field.field_type === FIELD_EXTERNAL_ACCOUNT)) {
    if (field.field_type === FIELD_SELECT) {
      const kept = new Set(Object.keys(c.fieldData));
      const removed = new Set(Object.keys(parseFieldData(field.field_data)).filter((k) => !kept.has(k)));
      if (removed.size) {
        const recipients = await activeUserIds(tx.db, field.realm_id);
        for (const v of await store.valuesOfField(tx.db, field.id)) {
          if (!removed.has(v.value)) continue;
          await store.deleteValue(tx.db, v.user_id, field.id);
          emitValueChange(tx, field.realm_id, v.user_id, { id: field.id, value: null }, recipients);
        }
      }
    }
    patch.field_data = JSON.stringify(c.fieldData);
  }
  if (Object.keys(patch).length) await store.updateField(tx.db, field.id, patch);
  await notifyFields(tx, field.realm_id);
}

export async function doDeleteField(tx: Tx, field: ProfileFieldRow): Promise<void> {
  await store.deleteField(tx.db, field.id);
  await notifyFields(tx, field.realm_id);
}

/** Positions follow the given list; every field of the realm must be in it ("Invalid order mapping."). */
export async function doReorderFields(tx: Tx, realmId: number, order: readonly number[]): Promise<void> {
  const position = new Map<number, number>();
  order.forEach((id, i) => position.set(id, i));
  for (const f of await store.fieldsInRealm(tx.db, realmId)) await store.updateField(tx.db, f.id, { sort_order: position.get(f.id)! });
  await notifyFields(tx, realmId);
}

function emitValueChange(
  tx: Tx,
  realmId: number,
  userId: number,
  data: { id: number; value: string | null; rendered_value?: string },
  recipients: readonly number[],
): void {
  tx.emit(realmId, { type: 'realm_user', op: 'update', person: { user_id: userId, custom_profile_field: data } }, recipients);
}

/**
 * The Markdown context for profile values: the realm's users resolve in
 * mentions; there is no sender, so nothing depends on who edits.
 */
async function markdownContext(app: AppCtx, tx: Tx, realmId: number): Promise<MarkdownContext> {
  const rows = await tx.db.selectFrom('users').select(['id', 'full_name', 'is_active']).where('realm_id', '=', realmId).execute();
  const users = rows.map((r) => ({ id: r.id, fullName: r.full_name, isActive: r.is_active === 1 }));
  const byId = new Map(users.map((u) => [u.id, u]));
  return {
    ...emptyMarkdownContext(realmUrl(app.config)),
    users: { byId: (id) => byId.get(id), byName: (name) => users.filter((u) => u.fullName.toLowerCase() === name.toLowerCase()) },
  };
}

/** One validated value to store: the field and the stored text. */
export interface ProfileValueUpdate {
  readonly field: ProfileFieldRow;
  readonly value: string;
}

/**
 * Zulip's do_update_user_custom_profile_data_if_changed: stores each value
 * that differs (rendering Markdown field types) and sends one realm_user
 * custom_profile_field update per changed field to every active user.
 */
export async function doUpdateUserProfileData(app: AppCtx, tx: Tx, user: UserRow, updates: readonly ProfileValueUpdate[]): Promise<void> {
  let recipients: number[] | undefined;
  let md: MarkdownContext | undefined;
  for (const { field, value } of updates) {
    const existing = await store.valueOf(tx.db, user.id, field.id);
    if (existing && existing.value === value) continue;
    let rendered: string | null = null;
    if (isRenderable(field.field_type)) {
      md ??= await markdownContext(app, tx, user.realm_id);
      rendered = renderMarkdownSafe(value, md).html;
    }
    await store.upsertValue(tx.db, { realm_id: user.realm_id, user_id: user.id, field_id: field.id, value, rendered_value: rendered });
    recipients ??= await activeUserIds(tx.db, user.realm_id);
    // Zulip includes rendered_value only when it is non-empty.
    emitValueChange(tx, user.realm_id, user.id, rendered ? { id: field.id, value, rendered_value: rendered } : { id: field.id, value }, recipients);
  }
}

/** Clears one value (a no-op, without event, when the user has none). */
export async function doRemoveUserProfileValue(tx: Tx, user: UserRow, field: ProfileFieldRow): Promise<void> {
  if (!(await store.valueOf(tx.db, user.id, field.id))) return;
  await store.deleteValue(tx.db, user.id, field.id);
  emitValueChange(tx, user.realm_id, user.id, { id: field.id, value: null }, await activeUserIds(tx.db, user.realm_id));
}
