import type { AppCtx, Caller } from '../context.js';
import { transact } from '../context.js';
import { badRequest } from '../errors.js';
import { accessUserById } from '../access/users.js';
import { nowSeconds } from '../../store/db.js';
import { deleteMute, insertMute, mutesOfUser } from '../../store/muted-users.js';
import { doMarkSenderAsRead } from './message-flags.js';

/**
 * Muting users (Zulip's zerver/views/muted_users.py and
 * zerver/actions/muted_users.py). The target may be a bot or deactivated;
 * an unknown id is "No such user". Each change sends the muter a
 * `muted_users` event with the whole new list ([{id, timestamp}]); muting
 * first marks the muted user's unread messages read.
 */

const access = (app: AppCtx, caller: Caller, id: number) => accessUserById(app, caller, id, { allowBots: true, allowDeactivated: true });

export async function doMuteUser(app: AppCtx, caller: Caller, mutedUserId: number): Promise<void> {
  // Zulip checks self before looking the user up.
  if (caller.id === mutedUserId) throw badRequest('Cannot mute self');
  const muted = await access(app, caller, mutedUserId);
  await transact(app, async (tx) => {
    if (!(await insertMute(tx.db, caller.id, muted.id, nowSeconds()))) throw badRequest('User already muted');
    await doMarkSenderAsRead(tx, caller, muted.id);
    tx.emit(caller.realmId, { type: 'muted_users', muted_users: await mutesOfUser(tx.db, caller.id) }, [caller.id]);
  });
}

export async function doUnmuteUser(app: AppCtx, caller: Caller, mutedUserId: number): Promise<void> {
  const muted = await access(app, caller, mutedUserId);
  await transact(app, async (tx) => {
    if (!(await deleteMute(tx.db, caller.id, muted.id))) throw badRequest('User is not muted');
    tx.emit(caller.realmId, { type: 'muted_users', muted_users: await mutesOfUser(tx.db, caller.id) }, [caller.id]);
  });
}
