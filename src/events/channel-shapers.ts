import { fillNotificationDefaults } from '../presenters/channel.js';
import { registerShaper } from './delivery.js';
import type { ParleyEvent } from './types.js';

/**
 * Per-queue shaping of channel events (Zulip's event-queue filters):
 * - archiving sends both `stream update is_archived` and `stream delete
 *   for_archiving`; clients with the archived_channels capability keep the
 *   first, others the second (likewise `create for_unarchiving` on unarchive);
 *   a create of an archived channel reaches only archived_channels clients;
 * - subscription add carries null per-channel notification settings; clients
 *   without notification_settings_null get the user's defaults instead (the
 *   emitter puts them in the `__notification_defaults` hint); when such a
 *   default changes, the `__inherited_default` subscription updates that
 *   carry it reach only those clients.
 */
export function shapeStreamEvent(e: ParleyEvent, archivedChannels: boolean): ParleyEvent | null {
  if (e.op === 'delete' && e.for_archiving === true && archivedChannels) return null;
  // An archived channel someone gains sight of (group membership, role) exists only for archived_channels clients.
  if (e.op === 'create' && !archivedChannels && Array.isArray(e.streams) && (e.streams as Record<string, unknown>[]).every((s) => s.is_archived === true)) return null;
  if (e.op === 'create' && e.for_unarchiving === true && archivedChannels) return null;
  if (e.op === 'update' && e.property === 'is_archived' && !archivedChannels) return null;
  return e;
}

export function withNotificationDefaults(e: ParleyEvent, defaults: Record<string, unknown> | undefined): ParleyEvent {
  if (!defaults || e.op !== 'add' || !Array.isArray(e.subscriptions)) return e;
  const subs = (e.subscriptions as Record<string, unknown>[]).map((s) => {
    const copy = { ...s };
    fillNotificationDefaults(copy, defaults);
    return copy;
  });
  return { ...e, subscriptions: subs };
}

registerShaper('stream', ({ clean, queue }) => shapeStreamEvent(clean, queue.capabilities.archived_channels));

registerShaper('subscription', ({ event, clean, queue }) => {
  // Re-adds after unarchiving, for clients that dropped the archived channel.
  if (event.__without_archived_channels === true && queue.capabilities.archived_channels) return null;
  // A changed user default shown in place of null settings (subscriptions.ts emitInheritedNotificationUpdates).
  if (event.__inherited_default === true && queue.capabilities.notification_settings_null) return null;
  if (event.op !== 'add' || queue.capabilities.notification_settings_null) return clean;
  return withNotificationDefaults(clean, event.__notification_defaults as Record<string, unknown> | undefined);
});
