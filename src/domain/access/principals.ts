import type { Db } from '../../store/db.js';
import type { TxDb } from '../context.js';
import { badRequest } from '../errors.js';
import { isStorableId } from '../../store/channels.js';
import { userByEmail, usersInRealm, type UserRow } from '../../store/users.js';

/**
 * Zulip's bulk_principals_to_user_profiles: user ids ("Invalid user ID: <id>"
 * for unknown or deactivated ones) or emails ("No such user"); bots allowed.
 */
export async function accessPrincipals(db: Db | TxDb, realmId: number, principals: readonly number[] | readonly string[]): Promise<UserRow[]> {
  if (principals.length === 0) return [];
  if (typeof principals[0] === 'number') {
    const ids = [...new Set(principals as readonly number[])];
    const unstorable = ids.find((id) => !isStorableId(id));
    if (unstorable !== undefined) throw badRequest(`Invalid user ID: ${unstorable}`);
    const rows = await usersInRealm(db, realmId, ids);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of ids) {
      const u = byId.get(id);
      if (!u || !u.is_active) throw badRequest(`Invalid user ID: ${id}`);
    }
    return ids.map((id) => byId.get(id)!);
  }
  const out = new Map<number, UserRow>();
  for (const email of principals as readonly string[]) {
    const u = await userByEmail(db, realmId, email);
    if (!u || !u.is_active) throw badRequest('No such user');
    out.set(u.id, u);
  }
  return [...out.values()];
}
