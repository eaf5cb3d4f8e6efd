import { endpoint } from '../endpoint.js';
import { p } from '../params.js';
import { transact } from '../../domain/context.js';
import { badRequest } from '../../domain/errors.js';
import { accessChannelById, invalidChannelId, loadViewer } from '../../domain/access/channels.js';
import { doSetDefaultChannel } from '../../domain/actions/channels.js';
import { isPossibleId } from '../../domain/rules/ids.js';
import { requireAdmin } from './users.js';

/**
 * The organization's default channels (Zulip's add_default_stream /
 * remove_default_stream, zerver/views/streams.py): administrators only;
 * the channel is looked up as access_stream_by_id does ("Invalid channel
 * ID" for a missing or inaccessible one; removal also takes an archived
 * channel). The list is realm_default_streams in /register, with its
 * default_streams event to every non-guest.
 */

export const addDefaultStream = endpoint({
  method: 'POST',
  path: '/default_streams',
  auth: 'user',
  guard: requireAdmin,
  params: { stream_id: p.id() },
  handler: async (ctx, { stream_id }) => {
    if (!isPossibleId(stream_id)) throw invalidChannelId();
    const v = await loadViewer(ctx.app.db, ctx.userRow);
    const ch = await accessChannelById(ctx.app.db, v, stream_id);
    if (ch.invite_only) throw badRequest('Private channels cannot be made default.');
    await transact(ctx.app, (tx) => doSetDefaultChannel(tx, ch, true));
    return {};
  },
});

export const removeDefaultStream = endpoint({
  method: 'DELETE',
  path: '/default_streams',
  auth: 'user',
  guard: requireAdmin,
  params: { stream_id: p.id() },
  handler: async (ctx, { stream_id }) => {
    if (!isPossibleId(stream_id)) throw invalidChannelId();
    const v = await loadViewer(ctx.app.db, ctx.userRow);
    const ch = await accessChannelById(ctx.app.db, v, stream_id, { requireActive: false });
    await transact(ctx.app, (tx) => doSetDefaultChannel(tx, ch, false));
    return {};
  },
});
