import { accessBefore, emitAccessChanges } from '../../domain/access/user-access-events.js';
import { z } from 'zod';
import { accessUserById } from '../../domain/access/users.js';
import { accessUserGroupForUpdate, activeUsersByIds, namedGroupInRealm } from '../../domain/access/user-groups.js';
import {
  doAddMembers,
  doAddSubgroups,
  doChangeUserGroupSetting,
  doCreateUserGroup,
  doDeactivateUserGroup,
  doReactivateUserGroup,
  doRemoveMembers,
  doRemoveSubgroups,
  doUpdateUserGroupDescription,
  doUpdateUserGroupName,
} from '../../domain/actions/user-groups.js';
import { transact, type Tx } from '../../domain/context.js';
import { badRequest, insufficientPermission, JsonableError, notForBots, notForGuests } from '../../domain/errors.js';
import {
  isUserInGroup,
  normalizeGroupSetting,
  presentGroupSettings,
  recursiveMemberIds,
  sameGroupSetting,
  systemGroupId,
  type GroupSettingValue,
} from '../../domain/rules/group-settings.js';
import { userHasRealmPermission } from '../../domain/rules/realm-group-settings.js';
import { checkUserGroupName, GROUP_SETTING_NAMES, type GroupSettingName } from '../../domain/rules/user-groups.js';
import { ROLE_GUEST } from '../../domain/rules/users.js';
import { userGroupsInRealm } from '../../state/user-groups.js';
import { activeDirectMemberIds, directSubgroupIds, recursiveStrictSubgroupIds } from '../../store/user-groups.js';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import { p } from '../params.js';

/** Zulip's require_member_or_admin: no guests, no bots. */
const memberOrAdmin = ({ user }: AuthedCtx): void => {
  if (user.role === ROLE_GUEST) throw notForGuests();
  if (user.isBot) throw notForBots();
};
/** Guests refused; bots allowed (feature level 496: create and member updates). */
const notGuest = ({ user }: AuthedCtx): void => {
  if (user.role === ROLE_GUEST) throw notForGuests();
};

const membersData = z.strictObject({ direct_members: z.array(z.int()), direct_subgroups: z.array(z.int()) });
const groupSettingValue = z.union([z.int(), membersData]);
const settingChange = z.strictObject({ new: groupSettingValue, old: groupSettingValue.optional() });

const settingParams = <S extends z.ZodType>(schema: S) =>
  Object.fromEntries(GROUP_SETTING_NAMES.map((n) => [n, p.json(schema).optional()])) as Record<GroupSettingName, ReturnType<typeof p.json<S>>>;

export const createUserGroup = endpoint({
  method: 'POST',
  path: '/user_groups/create',
  auth: 'user',
  guard: async (ctx) => {
    notGuest(ctx);
    if (!(await userHasRealmPermission(ctx.app.db, ctx.user.realmId, ctx.user.id, 'can_create_groups'))) throw insufficientPermission();
  },
  // Declared in Zulip's signature order, so the first bad parameter is the one Zulip reports.
  params: {
    ...settingParams(groupSettingValue),
    description: p.str(),
    members: p.idList(),
    name: p.str(),
    subgroups: p.idList().optional(),
  },
  handler: async (ctx, params) => {
    const members = await activeUsersByIds(ctx.app.db, ctx.user.realmId, params.members);
    const name = checkUserGroupName(params.name);
    const settings: Partial<Record<GroupSettingName, GroupSettingValue>> = {};
    for (const n of GROUP_SETTING_NAMES) if (params[n] !== undefined) settings[n] = params[n] as GroupSettingValue;
    const groupId = await transact(ctx.app, async (tx) => {
      const row = await doCreateUserGroup(tx, ctx.user, { name, description: params.description, memberIds: members, settings });
      // Subgroups may be added to a new group whatever its other permissions.
      if (params.subgroups?.length) await doAddSubgroups(tx, row, params.subgroups);
      return row.id;
    });
    return { group_id: groupId };
  },
});

export const listUserGroups = endpoint({
  method: 'GET',
  path: '/user_groups',
  auth: 'user',
  guard: memberOrAdmin,
  params: { include_deactivated_groups: p.bool().default(false) },
  handler: async (ctx, { include_deactivated_groups }) => ({
    user_groups: await userGroupsInRealm(ctx.app.db, ctx.user.realmId, include_deactivated_groups),
  }),
});

export const updateUserGroup = endpoint({
  method: 'PATCH',
  path: '/user_groups/:user_group_id',
  auth: 'user',
  guard: memberOrAdmin,
  params: {
    ...settingParams(settingChange),
    deactivated: p.bool().optional(),
    description: p.str().optional(),
    name: p.str().optional(),
    user_group_id: p.pathId(),
  },
  handler: async (ctx, params) => {
    const changes = GROUP_SETTING_NAMES.filter((n) => params[n] !== undefined);
    if (params.name === undefined && params.description === undefined && params.deactivated === undefined && changes.length === 0) {
      throw badRequest('No new data supplied');
    }
    await transact(ctx.app, async (tx) => {
      const group = await accessUserGroupForUpdate(tx.db, ctx.user, params.user_group_id, [], { allowDeactivated: true });
      if (params.name !== undefined && params.name !== group.name) await doUpdateUserGroupName(tx, group, checkUserGroupName(params.name));
      if (params.description !== undefined && params.description !== group.description) {
        await doUpdateUserGroupDescription(tx, group, params.description);
      }
      if (params.deactivated === false && group.deactivated) await doReactivateUserGroup(tx, group);
      if (changes.length === 0) return;
      const nobody = await systemGroupId(tx.db, group.realm_id, 'role:nobody');
      for (const n of changes) {
        const req = params[n] as { new: GroupSettingValue; old?: GroupSettingValue };
        const next = normalizeGroupSetting(req.new, nobody);
        const currentId = group[n] ?? nobody;
        const current = (await presentGroupSettings(tx.db, [currentId])).get(currentId)!;
        if (req.old !== undefined && !sameGroupSetting(normalizeGroupSetting(req.old, nobody), current)) {
          throw new JsonableError("'old' value does not match the expected value.", { code: 'EXPECTATION_MISMATCH' });
        }
        if (!sameGroupSetting(current, next)) await doChangeUserGroupSetting(tx, ctx.user, group, n, next);
      }
    });
    return {};
  },
});

export const deactivateUserGroup = endpoint({
  method: 'POST',
  path: '/user_groups/:user_group_id/deactivate',
  auth: 'user',
  params: { user_group_id: p.pathId() },
  handler: async (ctx, { user_group_id }) => {
    await transact(ctx.app, async (tx) => {
      const group = await accessUserGroupForUpdate(tx.db, ctx.user, user_group_id, []);
      await doDeactivateUserGroup(tx, group);
    });
    return {};
  },
});

async function addSubgroups(tx: Tx, ctx: AuthedCtx, groupId: number, ids: readonly number[]): Promise<void> {
  const group = await accessUserGroupForUpdate(tx.db, ctx.user, groupId, ['can_add_members_group'], { allowDeactivated: true });
  await doAddSubgroups(tx, group, ids);
}

async function removeSubgroups(tx: Tx, ctx: AuthedCtx, groupId: number, ids: readonly number[]): Promise<void> {
  const group = await accessUserGroupForUpdate(tx.db, ctx.user, groupId, [], { allowDeactivated: true });
  await doRemoveSubgroups(tx, group, ids);
}

const isSelfOnly = (ctx: AuthedCtx, ids: readonly number[]): boolean => ids.length === 1 && ids[0] === ctx.user.id;

export const updateUserGroupMembers = endpoint({
  method: 'POST',
  path: '/user_groups/:user_group_id/members',
  auth: 'user',
  guard: notGuest,
  params: {
    add: p.idList().optional(),
    add_subgroups: p.idList().optional(),
    delete: p.idList().optional(),
    delete_subgroups: p.idList().optional(),
    user_group_id: p.pathId(),
  },
  handler: async (ctx, { add, add_subgroups, delete: del, delete_subgroups, user_group_id }) => {
    if (!add?.length && !del?.length && !add_subgroups?.length && !delete_subgroups?.length) {
      throw badRequest('Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".');
    }
    await transact(ctx.app, async (tx) => {
      // Membership of can_access_all_users_group's group decides what guests can access.
      const access = await accessBefore(tx, ctx.user.realmId, ctx.app);
      if (add?.length) {
        // Joining oneself is allowed by can_join_group, falling back to can_add_members_group.
        const settings: GroupSettingName[] = isSelfOnly(ctx, add) ? ['can_join_group', 'can_add_members_group'] : ['can_add_members_group'];
        const group = await accessUserGroupForUpdate(tx.db, ctx.user, user_group_id, settings, { allowDeactivated: true });
        await doAddMembers(tx, group, await activeUsersByIds(tx.db, ctx.user.realmId, add));
      }
      if (del?.length) {
        await activeUsersByIds(tx.db, ctx.user.realmId, del);
        const settings: GroupSettingName[] = isSelfOnly(ctx, del) ? ['can_leave_group', 'can_remove_members_group'] : ['can_remove_members_group'];
        const group = await accessUserGroupForUpdate(tx.db, ctx.user, user_group_id, settings, { allowDeactivated: true });
        await doRemoveMembers(tx, group, del);
      }
      if (add_subgroups?.length) await addSubgroups(tx, ctx, user_group_id, add_subgroups);
      if (delete_subgroups?.length) await removeSubgroups(tx, ctx, user_group_id, delete_subgroups);
      await emitAccessChanges(ctx.app, tx, ctx.user.realmId, access);
    });
    return {};
  },
});

export const updateUserGroupSubgroups = endpoint({
  method: 'POST',
  path: '/user_groups/:user_group_id/subgroups',
  auth: 'user',
  guard: memberOrAdmin,
  params: { add: p.idList().optional(), delete: p.idList().optional(), user_group_id: p.pathId() },
  handler: async (ctx, { add, delete: del, user_group_id }) => {
    if (!add?.length && !del?.length) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
    await transact(ctx.app, async (tx) => {
      const access = await accessBefore(tx, ctx.user.realmId, ctx.app);
      if (add?.length) await addSubgroups(tx, ctx, user_group_id, add);
      if (del?.length) await removeSubgroups(tx, ctx, user_group_id, del);
      await emitAccessChanges(ctx.app, tx, ctx.user.realmId, access);
    });
    return {};
  },
});

export const getUserGroupMembers = endpoint({
  method: 'GET',
  path: '/user_groups/:user_group_id/members',
  auth: 'user',
  guard: memberOrAdmin,
  params: { direct_member_only: p.bool().default(false), user_group_id: p.pathId() },
  handler: async (ctx, { direct_member_only, user_group_id }) => {
    const group = await namedGroupInRealm(ctx.app.db, ctx.user.realmId, user_group_id);
    const members = direct_member_only ? await activeDirectMemberIds(ctx.app.db, group.id) : await recursiveMemberIds(ctx.app.db, group.id);
    return { members };
  },
});

export const getIsUserGroupMember = endpoint({
  method: 'GET',
  path: '/user_groups/:user_group_id/members/:user_id',
  auth: 'user',
  guard: memberOrAdmin,
  params: { direct_member_only: p.bool().default(false), user_group_id: p.pathId(), user_id: p.pathId() },
  handler: async (ctx, { direct_member_only, user_group_id, user_id }) => {
    const group = await namedGroupInRealm(ctx.app.db, ctx.user.realmId, user_group_id);
    const target = await accessUserById(ctx.app, ctx.user, user_id);
    const is_user_group_member = direct_member_only
      ? (await activeDirectMemberIds(ctx.app.db, group.id)).includes(target.id)
      : await isUserInGroup(ctx.app.db, target.id, group.id);
    return { is_user_group_member };
  },
});

export const getUserGroupSubgroups = endpoint({
  method: 'GET',
  path: '/user_groups/:user_group_id/subgroups',
  auth: 'user',
  guard: memberOrAdmin,
  params: { direct_subgroup_only: p.bool().default(false), user_group_id: p.pathId() },
  handler: async (ctx, { direct_subgroup_only, user_group_id }) => {
    const group = await namedGroupInRealm(ctx.app.db, ctx.user.realmId, user_group_id);
    const subgroups = direct_subgroup_only ? await directSubgroupIds(ctx.app.db, group.id) : await recursiveStrictSubgroupIds(ctx.app.db, group.id);
    return { subgroups };
  },
});
