import { sharedUserAccess } from './shared.js';
import { ALL } from '../domain/access/user-access.js';
import type { ParleyEvent } from '../events/types.js';
import { FIELD_TYPES } from '../domain/rules/profile-fields.js';
import { userSettings } from '../domain/rules/user-settings.js';
import { realmBotsFor } from '../domain/actions/bot-events.js';
import { presentProfileField } from '../presenters/profile-field.js';
import { presentUserStatus } from '../presenters/user-status.js';
import { fieldsInRealm, profileDataByUser } from '../store/profile-fields.js';
import { statusesInRealm } from '../store/user-status.js';
import type { StateModule } from './types.js';
import { usersStateHooks } from './users.js';
import { realmCached } from './realm-cache.js';
import { fragmentOr } from './json-fragment.js';

/**
 * /register state of issue 11: custom_profile_fields (+ the field types),
 * realm_bots and user_status, each with the apply() of its events. The
 * realm_users profile_data comes from profileDataByUser through the users
 * module's hook.
 */
usersStateHooks.profileData = (app, realmId) => profileDataByUser(app.db, realmId);

type Row = Record<string, unknown>;

export const customProfileFieldsModule: StateModule = {
  fetchTypes: ['custom_profile_fields'],
  async fetch(ctx) {
    // Serialized once per realm generation (custom_profile_fields is a watched table: state/realm-cache.ts).
    const fields = await realmCached(ctx, 'profileFieldsJson', async () => JSON.stringify((await fieldsInRealm(ctx.app.db, ctx.user.realmId)).map(presentProfileField)));
    return {
      custom_profile_fields: fragmentOr(ctx.jsonFragments, fields),
      custom_profile_field_types: Object.fromEntries(FIELD_TYPES.map((t) => [t.keyword, { id: t.id, name: t.name }])),
    };
  },
  eventTypes: ['custom_profile_fields'],
  apply(state, event) {
    if (!('custom_profile_fields' in state)) return;
    const fields = structuredClone(event.fields) as Row[];
    state.custom_profile_fields = fields;
    // As Zulip's apply_event: values of deleted fields leave the users' profile_data.
    const ids = new Set(fields.map((f) => String(f.id)));
    for (const key of ['realm_users', 'realm_non_active_users']) {
      for (const u of (state[key] as Row[] | undefined) ?? []) {
        const data = u.profile_data as Record<string, unknown> | undefined;
        if (!data) continue;
        for (const id of Object.keys(data)) if (!ids.has(id)) delete data[id];
      }
    }
  },
};

export const realmBotsModule: StateModule = {
  fetchTypes: ['realm_bot'],
  async fetch({ app, user, userRow, shared }) {
    // The role as stored now: administrators see every bot. In a registration (shared reads) userRow
    // was read after the queue was created; a context reused later (module tests) may hold an older row.
    const role = shared ? userRow.role : (await app.db.selectFrom('users').select('role').where('id', '=', user.id).executeTakeFirstOrThrow()).role;
    return { realm_bots: await realmBotsFor(app.db, user.realmId, user.id, role) };
  },
  eventTypes: ['realm_bot'],
  apply(state, event) {
    const bots = state.realm_bots as Row[] | undefined;
    if (!bots) return;
    const data = event.bot as Row;
    const at = bots.findIndex((b) => b.user_id === data.user_id);
    if (event.op === 'add') {
      if (at >= 0) bots.splice(at, 1);
      const i = bots.findIndex((b) => (b.user_id as number) > (data.user_id as number));
      const bot = { owner_id: null, ...structuredClone(data) };
      if (i < 0) bots.push(bot);
      else bots.splice(i, 0, bot);
    } else if (event.op === 'delete' || event.op === 'remove') {
      if (at >= 0) bots.splice(at, 1);
    } else if (event.op === 'update' && at >= 0) {
      Object.assign(bots[at]!, structuredClone(data));
    }
  },
};

export const userStatusModule: StateModule = {
  fetchTypes: ['user_status'],
  async fetch(ctx) {
    const { app, user } = ctx;
    const out: Record<string, Row> = {};
    const [rows, access] = await Promise.all([statusesInRealm(app.db, user.realmId), sharedUserAccess(ctx)]);
    for (const r of rows) {
      // Restricted guests: only the users they can access.
      if (access !== ALL && !access.has(r.user_id)) continue;
      const status = presentUserStatus(r, userSettings(r.settings).presence_enabled !== false);
      if (Object.keys(status).length) out[String(r.user_id)] = status;
    }
    return { user_status: out };
  },
  eventTypes: ['user_status'],
  apply(state, event) {
    const all = state.user_status as Record<string, Row> | undefined;
    if (!all) return;
    applyUserStatus(all, event);
  },
};

/** Zulip's apply_event for user_status: each given part set, or removed when empty/false. */
function applyUserStatus(all: Record<string, Row>, event: ParleyEvent): void {
  const key = String(event.user_id);
  const entry: Row = all[key] ?? {};
  if (typeof event.away === 'boolean') {
    if (event.away) entry.away = true;
    else delete entry.away;
  }
  if (typeof event.status_text === 'string') {
    if (event.status_text) entry.status_text = event.status_text;
    else delete entry.status_text;
  }
  if (typeof event.emoji_name === 'string') {
    if (event.emoji_name) {
      entry.emoji_name = event.emoji_name;
      entry.emoji_code = event.emoji_code;
      entry.reaction_type = event.reaction_type;
    } else {
      delete entry.emoji_name;
      delete entry.emoji_code;
      delete entry.reaction_type;
    }
  }
  if (Object.keys(entry).length) all[key] = entry;
  else delete all[key];
}
