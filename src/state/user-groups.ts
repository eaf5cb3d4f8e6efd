import { registerShaper } from '../events/delivery.js';
import type { ParleyEvent } from '../events/types.js';
import { presentUserGroup, type UserGroupObject } from '../presenters/user-group.js';
import { GROUP_SETTING_NAMES } from '../domain/rules/user-groups.js';
import { groupsOfRealm, membershipOfGroups, type UserGroupRow } from '../store/user-groups.js';
import { sharedGroups, type RealmGroups } from './shared.js';
import type { Db } from '../store/db.js';
import type { ClientView, StateModule } from './types.js';

/**
 * The realm's named user groups as GET /user_groups and /register show them:
 * sorted by id, deactivated ones only when asked for. Three queries however
 * many groups and members.
 */
export async function userGroupsInRealm(db: Db, realmId: number, includeDeactivated: boolean): Promise<UserGroupObject[]> {
  const [rows, membership] = await Promise.all([groupsOfRealm(db, realmId), membershipOfGroups(db, realmId)]);
  return presentGroups(rows, membership, includeDeactivated);
}

function presentGroups(rows: readonly UserGroupRow[], membership: RealmGroups['membership'], includeDeactivated: boolean): UserGroupObject[] {
  const named = new Set(rows.filter((r) => r.name !== null).map((r) => r.id));
  const nobody = rows.find((r) => r.is_system_group && r.name === 'role:nobody')!.id;
  return rows
    .filter((r) => r.name !== null && (includeDeactivated || !r.deactivated))
    .map((r) => presentUserGroup(r, membership, named, nobody));
}

/**
 * Delivery of user_group events per client (Zulip's include_deactivated_groups):
 * a reactivation's add goes only to clients that had dropped the group, and a
 * rename of a deactivated group only to clients that keep deactivated groups.
 * (remove and update {deactivated} are sorted out by events/delivery.ts.)
 */
export function userGroupEventVisible(event: ParleyEvent, includeDeactivatedGroups: boolean): boolean {
  if (event.op === 'remove') return !includeDeactivatedGroups;
  const data = event.data as Record<string, unknown> | undefined;
  if (event.op === 'update' && data && 'deactivated' in data) return includeDeactivatedGroups;
  if (event.op === 'update' && data && 'name' in data && event.__deactivated === true) return includeDeactivatedGroups;
  if (event.op === 'add' && event.__for_reactivation === true) return !includeDeactivatedGroups;
  return true;
}

registerShaper('user_group', ({ event, clean, queue }) =>
  userGroupEventVisible(event, queue.capabilities.include_deactivated_groups) ? clean : null,
);

const sortedUnion = (a: readonly number[], b: readonly number[]): number[] => [...new Set([...a, ...b])].sort((x, y) => x - y);
const without = (a: readonly number[], b: readonly number[]): number[] => a.filter((x) => !b.includes(x));

function withoutHints(obj: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj).filter(([k]) => !k.startsWith('__')));
}

export const userGroupsModule: StateModule = {
  fetchTypes: ['realm_user_groups'],
  async fetch(ctx) {
    // The rows and memberships also give the realm's and channels' group-setting values (state/shared.ts).
    const { rows, membership } = await sharedGroups(ctx);
    return { realm_user_groups: presentGroups(rows, membership, ctx.capabilities.include_deactivated_groups) };
  },
  eventTypes: ['user_group', 'realm_user'],
  apply(state: Record<string, unknown>, event: ParleyEvent, view: ClientView) {
    const groups = state.realm_user_groups as UserGroupObject[] | undefined;
    if (!groups) return;
    if (event.type === 'realm_user') {
      // Deactivated users drop out of every group and setting (clients do the same).
      const person = event.person as { user_id?: number; is_active?: boolean } | undefined;
      if (event.op !== 'update' || person?.is_active !== false || person.user_id === undefined) return;
      const gone = [person.user_id];
      for (const g of groups) {
        g.members = without(g.members, gone);
        for (const name of GROUP_SETTING_NAMES) {
          const v = g[name];
          if (typeof v !== 'number') g[name] = { ...v, direct_members: without(v.direct_members, gone) };
        }
      }
      return;
    }
    if (!userGroupEventVisible(event, view.capabilities.include_deactivated_groups)) return;
    const byId = (id: unknown) => groups.find((g) => g.id === id);
    switch (event.op) {
      case 'add': {
        const group = structuredClone(event.group) as UserGroupObject;
        const i = groups.findIndex((g) => g.id === group.id);
        if (i >= 0) groups.splice(i, 1);
        groups.push(group);
        groups.sort((a, b) => a.id - b.id);
        return;
      }
      case 'remove': {
        const i = groups.findIndex((g) => g.id === event.group_id);
        if (i >= 0) groups.splice(i, 1);
        return;
      }
      case 'update': {
        const g = byId(event.group_id);
        if (g) Object.assign(g, structuredClone(withoutHints(event.data as Record<string, unknown>)));
        return;
      }
      case 'add_members':
      case 'remove_members': {
        const g = byId(event.group_id);
        const ids = event.user_ids as number[];
        if (g) g.members = event.op === 'add_members' ? sortedUnion(g.members, ids) : without(g.members, ids);
        return;
      }
      case 'add_subgroups':
      case 'remove_subgroups': {
        const g = byId(event.group_id);
        const ids = event.direct_subgroup_ids as number[];
        if (g) g.direct_subgroup_ids = event.op === 'add_subgroups' ? sortedUnion(g.direct_subgroup_ids, ids) : without(g.direct_subgroup_ids, ids);
        return;
      }
    }
  },
};
