import { z } from 'zod';
import { transact } from '../../domain/context.js';
import type { AppCtx, Caller } from '../../domain/context.js';
import {
  doCreateField,
  doDeleteField,
  doRemoveUserProfileValue,
  doReorderFields,
  doUpdateField,
  doUpdateUserProfileData,
  type ProfileValueUpdate,
} from '../../domain/actions/profile-fields.js';
import { adminRequired, badRequest, notForBots } from '../../domain/errors.js';
import {
  DEFAULT_EXTERNAL_ACCOUNTS,
  isDefaultExternalField,
  MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS,
  parseFieldData,
  validateField,
  validateFieldValue,
  type FieldData,
} from '../../domain/rules/profile-fields.js';
import { isPossibleId } from '../../domain/rules/ids.js';
import { isAdminRole } from '../../domain/rules/users.js';
import { presentProfileField } from '../../presenters/profile-field.js';
import * as store from '../../store/profile-fields.js';
import type { ProfileFieldRow } from '../../store/profile-fields.js';
import type { UserRow } from '../../store/users.js';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import { p } from '../params.js';

const fieldDataSchema = z.record(z.string(), z.union([z.string(), z.record(z.string(), z.string())]));
const strippedName = z.string().transform((s) => s.trim());

const requireAdmin = ({ user }: AuthedCtx): void => {
  if (!isAdminRole(user.role)) throw adminRequired();
};
const requireHuman = ({ user }: AuthedCtx): void => {
  if (user.isBot) throw notForBots();
};

const fieldNotFound = (id: number) => badRequest(`Field id ${id} not found.`);
const SUMMARY_LIMIT = `Only ${MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`;
const LABEL_TAKEN = 'A field with that label already exists.';

async function accessField(ctx: AuthedCtx, id: number): Promise<ProfileFieldRow> {
  const field = isPossibleId(id) ? await store.fieldById(ctx.app.db, ctx.user.realmId, id) : undefined;
  if (!field) throw fieldNotFound(id);
  return field;
}

export const listProfileFields = endpoint({
  method: 'GET',
  path: '/realm/profile_fields',
  auth: 'user',
  params: {},
  handler: async (ctx) => ({ custom_fields: (await store.fieldsInRealm(ctx.app.db, ctx.user.realmId)).map(presentProfileField) }),
});

export const createProfileField = endpoint({
  method: 'POST',
  path: '/realm/profile_fields',
  auth: 'user',
  guard: requireAdmin,
  params: {
    display_in_profile_summary: p.bool().default(false),
    editable_by_user: p.bool().default(true),
    field_data: p.json(fieldDataSchema).optional(),
    field_type: p.int(),
    hint: p.str().default(''),
    name: p.str(strippedName).default(''),
    required: p.bool().default(false),
  },
  handler: async (ctx, params) => {
    const realmId = ctx.user.realmId;
    const fieldData: FieldData = params.field_data ?? {};
    if (params.display_in_profile_summary && (await store.countSummaryFields(ctx.app.db, realmId)) >= MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS) {
      throw badRequest(SUMMARY_LIMIT);
    }
    validateField(params.name, params.hint, params.field_type, fieldData, params.display_in_profile_summary);
    const label = isDefaultExternalField(params.field_type, fieldData) ? DEFAULT_EXTERNAL_ACCOUNTS[fieldData.subtype as string]!.name : params.name;
    if (await store.fieldByName(ctx.app.db, realmId, label)) throw badRequest(LABEL_TAKEN);
    const id = await transact(ctx.app, (tx) =>
      doCreateField(tx, realmId, {
        name: params.name,
        hint: params.hint,
        fieldType: params.field_type,
        fieldData,
        displayInProfileSummary: params.display_in_profile_summary,
        required: params.required,
        editableByUser: params.editable_by_user,
      }),
    );
    return { id };
  },
});

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export const updateProfileField = endpoint({
  method: 'PATCH',
  path: '/realm/profile_fields/:field_id',
  auth: 'user',
  guard: requireAdmin,
  params: {
    display_in_profile_summary: p.bool().optional(),
    editable_by_user: p.bool().optional(),
    field_data: p.json(fieldDataSchema).optional(),
    field_id: p.pathId(),
    hint: p.str().optional(),
    name: p.str(strippedName).optional(),
    required: p.bool().optional(),
  },
  handler: async (ctx, params) => {
    const field = await accessField(ctx, params.field_id);
    const stored = parseFieldData(field.field_data);
    if (params.display_in_profile_summary && (await store.countSummaryFields(ctx.app.db, field.realm_id, field.id)) >= MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS) {
      throw badRequest(SUMMARY_LIMIT);
    }
    // Built-in external account fields: only the summary flag (and required/editable) may change.
    const onlySummary =
      (params.name === undefined || params.name === field.name) &&
      (params.hint === undefined || params.hint === field.hint) &&
      (params.field_data === undefined || sameJson(params.field_data, stored));
    if (isDefaultExternalField(field.field_type, stored) && !onlySummary) {
      throw badRequest('Default custom field cannot be updated.');
    }
    validateField(
      params.name ?? field.name,
      params.hint ?? field.hint,
      field.field_type,
      params.field_data ?? stored,
      params.display_in_profile_summary ?? field.display_in_profile_summary === 1,
    );
    if (params.name !== undefined && params.name !== field.name) {
      const other = await store.fieldByName(ctx.app.db, field.realm_id, params.name);
      if (other && other.id !== field.id) throw badRequest(LABEL_TAKEN);
    }
    await transact(ctx.app, (tx) =>
      doUpdateField(tx, field, {
        name: params.name,
        hint: params.hint,
        fieldData: params.field_data,
        displayInProfileSummary: params.display_in_profile_summary,
        required: params.required,
        editableByUser: params.editable_by_user,
      }),
    );
    return {};
  },
});

export const deleteProfileField = endpoint({
  method: 'DELETE',
  path: '/realm/profile_fields/:field_id',
  auth: 'user',
  guard: requireAdmin,
  params: { field_id: p.pathId() },
  handler: async (ctx, { field_id }) => {
    const field = await accessField(ctx, field_id);
    await transact(ctx.app, (tx) => doDeleteField(tx, field));
    return {};
  },
});

export const reorderProfileFields = endpoint({
  method: 'PATCH',
  path: '/realm/profile_fields',
  auth: 'user',
  guard: requireAdmin,
  params: { order: p.idList() },
  handler: async (ctx, { order }) => {
    const fields = await store.fieldsInRealm(ctx.app.db, ctx.user.realmId);
    const listed = new Set(order);
    if (fields.some((f) => !listed.has(f.id))) throw badRequest('Invalid order mapping.');
    await transact(ctx.app, (tx) => doReorderFields(tx, ctx.user.realmId, order));
    return {};
  },
});

const NOT_EDITABLE = 'You are not allowed to change this field. Contact an administrator to update it.';

/** Fields by id for a request, with Zulip's "not found" and "not editable" checks in list order. */
async function fieldsForEdit(app: AppCtx, caller: Caller, ids: readonly number[]): Promise<Map<number, ProfileFieldRow>> {
  const all = new Map((await store.fieldsInRealm(app.db, caller.realmId)).map((f) => [f.id, f]));
  for (const id of ids) {
    const field = all.get(id);
    if (!field) throw fieldNotFound(id);
    if (!isAdminRole(caller.role) && !field.editable_by_user) throw badRequest(NOT_EDITABLE);
  }
  return all;
}

/** Validates values (Zulip's validate_user_custom_profile_data) and returns what to store. */
export async function checkProfileValues(
  app: AppCtx,
  caller: Caller,
  items: readonly { id: number; value: string | number[] }[],
): Promise<ProfileValueUpdate[]> {
  const fields = await fieldsForEdit(app, caller, items.map((i) => i.id));
  const lookupUsers = async (ids: readonly number[]) => {
    // Ids no row can have are simply not found (and never reach the database).
    const wanted = [...new Set(ids)].filter(isPossibleId);
    if (wanted.length === 0) return new Map();
    const rows = await app.db.selectFrom('users').select(['id', 'is_active', 'is_bot']).where('realm_id', '=', caller.realmId).where('id', 'in', wanted).execute();
    return new Map(rows.map((r) => [r.id, r]));
  };
  const out: ProfileValueUpdate[] = [];
  for (const item of items) {
    const field = fields.get(item.id)!;
    out.push({ field, value: await validateFieldValue(field, item.value, lookupUsers) });
  }
  return out;
}

/** Fields whose values an edit clears (value null, "" or []), after the same checks. */
export async function checkProfileRemovals(app: AppCtx, caller: Caller, ids: readonly number[]): Promise<ProfileFieldRow[]> {
  const fields = await fieldsForEdit(app, caller, ids);
  return ids.map((id) => fields.get(id)!);
}

const profileItem = z.object({ id: z.int(), value: z.union([z.string(), z.array(z.int())]) });

export const updateOwnProfileData = endpoint({
  method: 'PATCH',
  path: '/users/me/profile_data',
  auth: 'user',
  guard: requireHuman,
  params: { data: p.json(z.array(profileItem)) },
  handler: async (ctx, { data }) => {
    const updates = await checkProfileValues(ctx.app, ctx.user, data);
    await transact(ctx.app, (tx) => doUpdateUserProfileData(ctx.app, tx, ctx.userRow, updates));
    return {};
  },
});

export const removeOwnProfileData = endpoint({
  method: 'DELETE',
  path: '/users/me/profile_data',
  auth: 'user',
  guard: requireHuman,
  params: { data: p.json(z.array(z.int())) },
  handler: async (ctx, { data }) => {
    const fields = await checkProfileRemovals(ctx.app, ctx.user, data);
    await transact(ctx.app, async (tx) => {
      for (const field of fields) await doRemoveUserProfileValue(tx, ctx.userRow, field);
    });
    return {};
  },
});

/** PATCH /users/{id} profile_data: entries with a null or empty value clear it, the others set it. */
export const adminProfileDataSchema = z.array(z.object({ id: z.int(), value: z.union([z.string(), z.array(z.int()), z.null()]) }));

export async function checkAdminProfileData(app: AppCtx, caller: Caller, items: z.output<typeof adminProfileDataSchema>) {
  const isEmpty = (v: string | number[] | null) => v === null || v.length === 0;
  const removals = await checkProfileRemovals(app, caller, items.filter((i) => isEmpty(i.value)).map((i) => i.id));
  const updates = await checkProfileValues(
    app,
    caller,
    items.filter((i) => !isEmpty(i.value)).map((i) => ({ id: i.id, value: i.value as string | number[] })),
  );
  return async (tx: Parameters<typeof doUpdateUserProfileData>[1], target: UserRow) => {
    for (const field of removals) await doRemoveUserProfileValue(tx, target, field);
    await doUpdateUserProfileData(app, tx, target, updates);
  };
}
