import type { Tx } from '../context.js';
import { hasMetadataAccess, loadAudience, loadViewer, metadataAudience, type ViewerSource } from '../access/channels.js';
import { loadChannelPresentation, presentChannel } from '../../presenters/channel.js';
import { channelsInRealm, defaultChannelIds, subscriberIdsByChannel, type ChannelRow } from '../../store/channels.js';
import { ROLE_GUEST } from '../rules/users.js';
import { emitStreamCreate, emitStreamDelete } from './channels.js';

/**
 * Channel metadata access that changes as a side effect of something else:
 * a user group's members or subgroups (the group may hold a private
 * channel's can_administer_channel_group, can_add_subscribers_group or
 * can_subscribe_group, directly or as a subgroup), or a user's role (guests
 * see only subscribed and web-public channels; administrators every one).
 *
 * As Zulip (zerver/actions/user_groups.py bulk_add_members_to_user_groups
 * and friends, zerver/actions/users.py send_stream_events_for_role_update):
 * users gaining access get stream create, users losing it stream delete.
 * The created channel carries its subscribers, as Parley's other create
 * events do (doChangeChannelGroupSetting), instead of a separate peer_add.
 */

const sorted = (ids: Iterable<number>): number[] => [...ids].sort((a, b) => a - b);

/** Who sees each private channel of the realm (archived ones included), taken before a group change. */
export interface PrivateChannelAccess {
  readonly realmId: number;
  readonly channels: readonly ChannelRow[];
  readonly before: ReadonlyMap<number, ReadonlySet<number>>;
}

async function privateChannels(tx: Tx, realmId: number): Promise<ChannelRow[]> {
  return (await channelsInRealm(tx.db, realmId)).filter((c) => c.invite_only === 1);
}

/**
 * Snapshot for a change of group membership (members or subgroups). Every
 * private channel is considered: which ones use the group through a
 * supergroup is the same recursive question loadAudience answers anyway, in
 * a constant number of queries.
 */
export async function privateChannelAccess(tx: Tx, realmId: number): Promise<PrivateChannelAccess> {
  const channels = await privateChannels(tx, realmId);
  const before = new Map<number, ReadonlySet<number>>();
  if (channels.length) {
    const a = await loadAudience(tx.db, realmId, channels);
    for (const ch of channels) before.set(ch.id, metadataAudience(a, ch));
  }
  return { realmId, channels, before };
}

/** After the change: create for users who gained metadata access, delete for those who lost it. */
export async function emitPrivateChannelAccessChanges(tx: Tx, snap: PrivateChannelAccess): Promise<void> {
  if (snap.channels.length === 0) return;
  const a = await loadAudience(tx.db, snap.realmId, snap.channels);
  const gained = new Map<number, number[]>();
  for (const ch of snap.channels) {
    const before = snap.before.get(ch.id)!;
    const after = metadataAudience(a, ch);
    const gaining = sorted([...after].filter((id) => !before.has(id)));
    const losing = sorted([...before].filter((id) => !after.has(id)));
    if (gaining.length) gained.set(ch.id, gaining);
    if (losing.length) emitStreamDelete(tx, snap.realmId, [ch.id], losing);
  }
  if (gained.size === 0) return;
  const channels = snap.channels.filter((c) => gained.has(c.id));
  const p = await loadChannelPresentation(tx.db, channels);
  for (const ch of channels) {
    emitStreamCreate(tx, ch, { ...presentChannel(ch, p), subscribers: a.subscribers.get(ch.id) ?? [] }, gained.get(ch.id)!);
  }
}

/** The channels (archived ones included) a user has metadata access to, before a role change. */
export async function channelsVisibleTo(tx: Tx, user: ViewerSource): Promise<Set<number>> {
  const v = await loadViewer(tx.db, user);
  return new Set((await channelsInRealm(tx.db, user.realm_id)).filter((c) => hasMetadataAccess(v, c)).map((c) => c.id));
}

/**
 * After a role change: the user's own create / delete events for channels
 * that appeared or disappeared, and, when the user becomes or stops being a
 * guest, realm_default_streams (guests are shown none).
 */
export async function emitOwnChannelAccessChanges(tx: Tx, user: ViewerSource, before: ReadonlySet<number>, oldRole: number): Promise<void> {
  if ((oldRole === ROLE_GUEST) !== (user.role === ROLE_GUEST)) {
    const ids = user.role === ROLE_GUEST ? [] : await defaultChannelIds(tx.db, user.realm_id);
    tx.emit(user.realm_id, { type: 'default_streams', default_streams: ids }, [user.id]);
  }
  const v = await loadViewer(tx.db, user);
  const all = await channelsInRealm(tx.db, user.realm_id);
  const now = all.filter((c) => hasMetadataAccess(v, c));
  const gained = now.filter((c) => !before.has(c.id));
  const nowIds = new Set(now.map((c) => c.id));
  const lost = [...before].filter((id) => !nowIds.has(id)).sort((a, b) => a - b);
  if (lost.length) emitStreamDelete(tx, user.realm_id, lost, [user.id]);
  if (gained.length === 0) return;
  const p = await loadChannelPresentation(tx.db, gained);
  const subscribers = await subscriberIdsByChannel(tx.db, gained.map((c) => c.id));
  for (const ch of gained) emitStreamCreate(tx, ch, { ...presentChannel(ch, p), subscribers: subscribers.get(ch.id) ?? [] }, [user.id]);
}
