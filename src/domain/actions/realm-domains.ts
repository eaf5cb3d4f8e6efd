import type { Tx } from '../context.js';
import { activeUserIds } from '../../store/users.js';
import { realmDomainRows, type RealmDomainRow } from '../../store/channel-extras.js';
import { doSetRealmProperty } from './realm-settings.js';
import { realmSettings } from '../rules/realm-settings.js';

/** Allowed email domains; realm_domains events go to every active user. */

export async function doAddRealmDomain(tx: Tx, realmId: number, domain: string, allowSubdomains: boolean): Promise<number> {
  const r = await tx.db
    .insertInto('realm_domains')
    .values({ realm_id: realmId, domain, allow_subdomains: allowSubdomains ? 1 : 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  tx.emit(realmId, { type: 'realm_domains', op: 'add', realm_domain: { domain, allow_subdomains: allowSubdomains } }, await activeUserIds(tx.db, realmId));
  return r.id;
}

export async function doChangeRealmDomain(tx: Tx, row: RealmDomainRow, allowSubdomains: boolean): Promise<void> {
  await tx.db.updateTable('realm_domains').set({ allow_subdomains: allowSubdomains ? 1 : 0 }).where('id', '=', row.id).execute();
  tx.emit(
    row.realm_id,
    { type: 'realm_domains', op: 'change', realm_domain: { domain: row.domain, allow_subdomains: allowSubdomains } },
    await activeUserIds(tx.db, row.realm_id),
  );
}

/** Removing the last domain of a realm restricted to its domains lifts the restriction (its own realm event). */
export async function doRemoveRealmDomain(tx: Tx, row: RealmDomainRow): Promise<void> {
  await tx.db.deleteFrom('realm_domains').where('id', '=', row.id).execute();
  tx.emit(row.realm_id, { type: 'realm_domains', op: 'remove', domain: row.domain }, await activeUserIds(tx.db, row.realm_id));
  const left = await realmDomainRows(tx.db, row.realm_id);
  if (left.length === 0) {
    const realm = await tx.db.selectFrom('realms').select('settings').where('id', '=', row.realm_id).executeTakeFirstOrThrow();
    if (realmSettings(realm.settings).emails_restricted_to_domains) await doSetRealmProperty(tx, row.realm_id, 'emails_restricted_to_domains', false);
  }
}

/** Zulip's validate_domain, messages prefixed "Invalid domain: " by the caller. */
export function domainProblem(domain: string): string | null {
  if (domain === '') return "Domain can't be empty.";
  if (!domain.includes('.')) return 'Domain must have at least one dot (.)';
  if (domain.length > 255) return 'Domain is too long';
  if (domain.startsWith('.') || domain.endsWith('.')) return 'Domain cannot start or end with a dot (.)';
  for (const sub of domain.split('.')) {
    if (!sub) return "Consecutive '.' are not allowed.";
    if (sub.startsWith('-') || sub.endsWith('-')) return "Subdomains cannot start or end with a '-'.";
    if (!/^[a-z0-9-]*$/.test(sub)) return "Domain can only have letters, numbers, '.' and '-'s.";
  }
  return null;
}
