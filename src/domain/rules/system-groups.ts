import { ROLE_ADMIN, ROLE_GUEST, ROLE_MEMBER, ROLE_MODERATOR, ROLE_OWNER } from './users.js';

/**
 * Zulip's system groups, from the smallest to the largest; each is a direct
 * subgroup of the next one (owners in administrators, ..., everyone in internet).
 * role:nobody stands apart and is always empty.
 */
export const SYSTEM_GROUP_CHAIN = [
  { name: 'role:owners', description: 'Owners of this organization' },
  { name: 'role:administrators', description: 'Administrators of this organization, including owners' },
  { name: 'role:moderators', description: 'Moderators of this organization, including administrators' },
  { name: 'role:fullmembers', description: 'Members of this organization, not including new accounts and guests' },
  { name: 'role:members', description: 'Members of this organization, not including guests' },
  { name: 'role:everyone', description: 'Everyone in this organization, including guests' },
  { name: 'role:internet', description: 'Everyone on the Internet' },
] as const;
export const NOBODY_GROUP = { name: 'role:nobody', description: 'Nobody' } as const;

/**
 * The system groups a user of this role is a direct member of. Members are
 * direct members of role:fullmembers too while the realm's waiting period
 * has passed for them (threshold in days).
 */
export function directSystemGroups(role: number, isFullMember: boolean): string[] {
  switch (role) {
    case ROLE_OWNER:
      return ['role:owners'];
    case ROLE_ADMIN:
      return ['role:administrators'];
    case ROLE_MODERATOR:
      return ['role:moderators'];
    case ROLE_MEMBER:
      return isFullMember ? ['role:fullmembers', 'role:members'] : ['role:members'];
    case ROLE_GUEST:
      return ['role:everyone'];
    default:
      return [];
  }
}

export function isFullMember(dateJoined: number, waitingPeriodDays: number, now: number): boolean {
  return now - dateJoined >= waitingPeriodDays * 86400;
}
