import { sharedRealmUsers, sharedUserAccess } from './shared.js';
import { realmCached } from './realm-cache.js';
import { fragmentOr } from './json-fragment.js';
import { fakeEmailDomain } from '../config.js';
import type { AppCtx } from '../domain/context.js';
import { ROLE_ADMIN, ROLE_GUEST, ROLE_MODERATOR, ROLE_OWNER } from '../domain/rules/users.js';
import { apiEmail, avatarUrl, presentInaccessibleUser, presentUser } from '../presenters/user.js';
import { canAccessUser } from '../domain/access/user-access.js';
import { systemBotRows } from '../domain/actions/system-bots.js';
import type { ClientView, RegisterContext, StateModule } from './types.js';

/**
 * The `realm_user` part of /register: realm_users (active users and bots)
 * and realm_non_active_users (sorted by id, without is_active, as Zulip's
 * post-processing leaves them), cross_realm_bots, and the caller's own
 * top-level keys (user_id, email, delivery_email, full_name, role flags,
 * avatar_source/avatar_url/avatar_url_medium, always with full avatar URLs).
 *
 * Events: realm_user add / update (every `person` form of api.md) / remove.
 */

/** Custom profile field values per user; the profiles resource replaces this hook. */
export const usersStateHooks = {
  profileData: async (_app: AppCtx, _realmId: number): Promise<ReadonlyMap<number, Record<string, unknown>>> => new Map(),
};

type Person = Record<string, unknown> & { user_id: number };

function roleFlags(role: number): { is_admin: boolean; is_owner: boolean; is_guest: boolean } {
  return { is_admin: role <= ROLE_ADMIN, is_owner: role === ROLE_OWNER, is_guest: role === ROLE_GUEST };
}

function insertSorted(list: Person[], p: Person): void {
  const at = list.findIndex((x) => x.user_id >= p.user_id);
  if (at < 0) list.push(p);
  else if (list[at]!.user_id === p.user_id) list[at] = p;
  else list.splice(at, 0, p);
}

function findPerson(state: Record<string, unknown>, userId: number): { list: Person[]; index: number } | undefined {
  for (const key of ['realm_users', 'realm_non_active_users']) {
    const list = state[key] as Person[] | undefined;
    const index = list?.findIndex((p) => p.user_id === userId) ?? -1;
    if (list && index >= 0) return { list, index };
  }
  return undefined;
}

const isGravatar = (url: unknown): boolean => typeof url === 'string' && url.startsWith('https://secure.gravatar.com/');

function applyUpdate(state: Record<string, unknown>, person: Record<string, unknown>, view: ClientView): void {
  const userId = person.user_id as number;
  if (userId === view.user.id) {
    // The caller's own top-level keys (avatar URLs here are always full URLs).
    for (const k of ['full_name', 'delivery_email', 'avatar_source', 'avatar_url', 'avatar_url_medium']) {
      if (k in person && k in state) state[k] = person[k];
    }
    if ('new_email' in person && 'email' in state) state.email = person.new_email;
    if (typeof person.role === 'number' && 'is_admin' in state) {
      Object.assign(state, roleFlags(person.role), { is_moderator: person.role === ROLE_MODERATOR });
    }
  }
  const found = findPerson(state, userId);
  if (!found) return;
  const entry = { ...found.list[found.index]! };
  for (const [k, v] of Object.entries(person)) {
    if (k === 'user_id' || k === 'is_active' || !(k in entry)) continue;
    entry[k] = v;
  }
  if ('new_email' in person) entry.email = person.new_email;
  if (typeof person.role === 'number') Object.assign(entry, roleFlags(person.role));
  // client_gravatar: a gravatar URL the client can compute itself is null, as at /register: only
  // for users whose API email is their real address (email visible to everyone).
  if ('avatar_url' in person && view.clientGravatar && entry.delivery_email != null && entry.email === entry.delivery_email && isGravatar(person.avatar_url)) {
    entry.avatar_url = null;
  }
  const field = person.custom_profile_field as { id: number; value: unknown; rendered_value?: unknown } | undefined;
  if (field && entry.profile_data && typeof entry.profile_data === 'object') {
    const data = { ...(entry.profile_data as Record<string, unknown>) };
    if (field.value === null) delete data[String(field.id)];
    else data[String(field.id)] = 'rendered_value' in field ? { value: field.value, rendered_value: field.rendered_value } : { value: field.value };
    entry.profile_data = data;
  }
  if (typeof person.is_active === 'boolean') {
    found.list.splice(found.index, 1);
    insertSorted((state[person.is_active ? 'realm_users' : 'realm_non_active_users'] ?? []) as Person[], entry);
  } else {
    found.list[found.index] = entry;
  }
}

/**
 * The dummy-email domain for placeholders built while applying events (apply
 * has no configuration): realm_bot_domain is that domain; without the realm
 * keys, any dummy email user{id}@domain in the state tells it.
 */
function fakeEmailDomainOf(state: Record<string, unknown>): string | undefined {
  if (typeof state.realm_bot_domain === 'string') return state.realm_bot_domain;
  for (const key of ['realm_users', 'realm_non_active_users']) {
    for (const p of (state[key] ?? []) as Person[]) {
      const m = typeof p.email === 'string' ? /^user(\d+)@(.+)$/.exec(p.email) : null;
      if (m && Number(m[1]) === p.user_id) return m[2];
    }
  }
  return undefined;
}

/** A presented user's JSON without is_active (as Zulip's post-processing leaves realm_users). */
function personJson(presented: Record<string, unknown>): string {
  const { is_active: _active, ...p } = presented;
  return JSON.stringify(p);
}

/** The realm's custom profile field values by user (the profiles resource's hook), kept per realm generation. */
const sharedProfileData = (ctx: RegisterContext): Promise<ReadonlyMap<number, Record<string, unknown>>> =>
  realmCached(ctx, 'profileData', () => usersStateHooks.profileData(ctx.app, ctx.user.realmId));

/**
 * Every user of the realm presented for viewers of the caller's role and
 * client_gravatar, serialized, by id (performance.md P3): what presentUser
 * gives for a viewer who is not that user (the only other input is the
 * viewer's own row, presented per registration). Kept per realm generation
 * (users and profile field values are watched tables).
 */
const sharedUserJson = (ctx: RegisterContext): Promise<ReadonlyMap<number, string>> =>
  realmCached(ctx, `userJson:${ctx.userRow.role}:${ctx.clientGravatar ? 1 : 0}`, async () => {
    const [rows, profiles] = await Promise.all([sharedRealmUsers(ctx), sharedProfileData(ctx)]);
    const view = {
      viewerId: 0,
      viewerRole: ctx.userRow.role,
      fakeEmailDomain: fakeEmailDomain(ctx.app.config),
      clientGravatar: ctx.clientGravatar,
      includeCustomProfileFields: true,
      profileData: profiles,
    };
    return new Map(rows.map((row) => [row.id, personJson(presentUser(row, view))]));
  });

export const usersModule: StateModule = {
  fetchTypes: ['realm_user'],
  eventTypes: ['realm_user'],
  async fetch(ctx) {
    const { app, user, userRow, clientGravatar, capabilities } = ctx;
    const [rows, profiles, access, systemBots, texts] = await Promise.all([
      sharedRealmUsers(ctx),
      sharedProfileData(ctx),
      sharedUserAccess(ctx),
      systemBotRows(app),
      sharedUserJson(ctx),
    ]);
    const view = {
      viewerId: user.id,
      viewerRole: userRow.role,
      fakeEmailDomain: fakeEmailDomain(app.config),
      clientGravatar,
      includeCustomProfileFields: true,
      profileData: profiles,
    };
    const active: string[] = [];
    const inactive: string[] = [];
    for (const row of rows) {
      if (!canAccessUser(access, row)) {
        // Restricted guests: left out for clients that declared user_list_incomplete, else Zulip's placeholder.
        if (!capabilities.user_list_incomplete) active.push(personJson(presentInaccessibleUser(row.id, view.fakeEmailDomain)));
        continue;
      }
      // The caller's own entry differs (delivery_email): presented for this viewer.
      const text = (row.id !== user.id && texts.get(row.id)) || personJson(presentUser(row, view));
      (row.is_active ? active : inactive).push(text);
    }
    const role = userRow.role;
    return {
      realm_users: fragmentOr(ctx.jsonFragments, '[' + active.join(',') + ']'),
      realm_non_active_users: fragmentOr(ctx.jsonFragments, '[' + inactive.join(',') + ']'),
      // Zulip's get_cross_realm_dicts: bot_owner_id null, is_system_bot true, sorted by name.
      cross_realm_bots: systemBots.map((b) => ({ ...presentUser(b, { ...view, clientGravatar: false }), bot_owner_id: null, is_system_bot: true })),
      avatar_source: userRow.avatar_source,
      avatar_url_medium: avatarUrl(userRow, true),
      avatar_url: avatarUrl(userRow),
      ...roleFlags(role),
      is_moderator: role === ROLE_MODERATOR,
      user_id: userRow.id,
      email: apiEmail(userRow, fakeEmailDomain(app.config)),
      delivery_email: userRow.delivery_email,
      full_name: userRow.full_name,
    };
  },
  apply(state, event, view) {
    const person = event.person as Record<string, unknown> | undefined;
    if (!person || typeof person.user_id !== 'number') return;
    if (event.op === 'add') {
      const { is_active: isActive, ...p } = person;
      // A user seen before as active or not (or as a placeholder) is replaced wherever it was.
      const found = findPerson(state, person.user_id);
      if (found) found.list.splice(found.index, 1);
      const list = (isActive === false ? state.realm_non_active_users : state.realm_users) as Person[] | undefined;
      if (list) insertSorted(list, p as Person);
    } else if (event.op === 'remove') {
      // The user became inaccessible (restricted guests): gone for user_list_incomplete
      // clients, else replaced by the placeholder (always among the active users), as Zulip's apply_event.
      const found = findPerson(state, person.user_id);
      if (!found) return;
      const [gone] = found.list.splice(found.index, 1);
      // Their presence (keyed by id, or by API email in the legacy form) and status go with them.
      const presences = state.presences as Record<string, unknown> | undefined;
      if (presences) {
        delete presences[String(person.user_id)];
        if (typeof gone?.email === 'string') delete presences[gone.email];
      }
      const statuses = state.user_status as Record<string, unknown> | undefined;
      if (statuses) delete statuses[String(person.user_id)];
      const domain = fakeEmailDomainOf(state);
      if (!view.capabilities.user_list_incomplete && state.realm_users && domain !== undefined) {
        const { is_active: _a, ...stub } = presentInaccessibleUser(person.user_id, domain);
        insertSorted(state.realm_users as Person[], stub as Person);
      }
    } else if (event.op === 'update') {
      applyUpdate(state, person, view);
    }
  },
};
