import type { Tx } from '../context.js';
import { canSeeDeliveryEmail } from '../../presenters/user.js';
import type { UserRow } from '../../store/users.js';

/**
 * After a user's role changes, the real addresses they may see change with it
 * (email_address_visibility is by role). Sends that user one realm_user
 * update per affected user, {user_id, delivery_email} with the address or
 * null, so their realm_users stay what a fresh /register would give.
 */
export async function emitDeliveryEmailsForRoleChange(tx: Tx, viewer: UserRow, oldRole: number, newRole: number): Promise<void> {
  const others = await tx.db
    .selectFrom('users')
    .select(['id', 'settings', 'is_bot', 'delivery_email'])
    .where('realm_id', '=', viewer.realm_id)
    .where('id', '!=', viewer.id)
    .orderBy('id')
    .execute();
  for (const u of others) {
    const before = canSeeDeliveryEmail(u, viewer.id, oldRole);
    const after = canSeeDeliveryEmail(u, viewer.id, newRole);
    if (before === after) continue;
    tx.emit(viewer.realm_id, { type: 'realm_user', op: 'update', person: { user_id: u.id, delivery_email: after ? u.delivery_email : null } }, [viewer.id]);
  }
}
