import type { TxDb } from '../context.js';
import { nowSeconds } from '../../store/db.js';
import { NOBODY_GROUP, SYSTEM_GROUP_CHAIN } from '../rules/system-groups.js';

/** Creates a realm with its system groups (nested as Zulip nests them). Returns the realm id. */
export async function doCreateRealm(db: TxDb, opts: { stringId: string; name: string; description?: string }): Promise<number> {
  const now = nowSeconds();
  const realm = await db
    .insertInto('realms')
    .values({ string_id: opts.stringId, name: opts.name, description: opts.description ?? '', date_created: now, deactivated: 0, settings: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const ids: number[] = [];
  for (const g of [...SYSTEM_GROUP_CHAIN, NOBODY_GROUP]) {
    const row = await db
      .insertInto('user_groups')
      .values({ realm_id: realm.id, name: g.name, description: g.description, is_system_group: 1, creator_id: null, date_created: now, deactivated: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.push(row.id);
  }
  const chain = ids.slice(0, SYSTEM_GROUP_CHAIN.length);
  await db
    .insertInto('user_group_subgroups')
    .values(chain.slice(1).map((supergroup_id, i) => ({ realm_id: realm.id, supergroup_id, subgroup_id: chain[i]! })))
    .execute();
  return realm.id;
}
