import { expect } from 'vitest';
import type { Caller } from '../../src/domain/context.js';
import type { ClientCapabilities, ClientView, RegisterContext, StateModule } from '../../src/state/types.js';
import type { EventDelivery } from '../../src/events/types.js';
import type { FixtureName, TestServer, TestUser } from './server.js';

/**
 * Checks one /register state module against its events without a queue:
 * fetch a state, run an action, apply the events the user was sent, and
 * compare with a fresh fetch. (Issue 3's register+events helper covers the
 * full path; this one needs only the module.)
 */

const NO_CAPABILITIES: ClientCapabilities = {
  notification_settings_null: false,
  individual_emoji_changes: false,
  bulk_message_deletion: false,
  user_avatar_url_field_optional: false,
  stream_typing_notifications: false,
  user_settings_object: false,
  linkifier_url_template: false,
  user_list_incomplete: false,
  include_deactivated_groups: false,
  archived_channels: false,
  empty_topic_name: false,
  simplified_presence_events: false,
};

export async function registerContext(t: TestServer, who: TestUser | FixtureName, caps: Partial<ClientCapabilities> = {}): Promise<RegisterContext> {
  const u = typeof who === 'string' ? t.users[who] : who;
  const row = await t.row(u.id);
  const user: Caller = {
    id: row.id,
    realmId: row.realm_id,
    role: row.role,
    isBot: row.is_bot === 1,
    botType: row.bot_type,
    email: row.delivery_email,
    deliveryEmail: row.delivery_email,
    fullName: row.full_name,
  };
  const view: ClientView = {
    user,
    capabilities: { ...NO_CAPABILITIES, ...caps },
    applyMarkdown: true,
    clientGravatar: false,
    includeSubscribers: false,
    slimPresence: false,
    allPublicStreams: false,
    narrow: [],
  };
  return { ...view, want: () => true, app: t.app.ctx, userRow: row };
}

/** Applies the deliveries addressed to the context's user, in order. */
export function applyDeliveries(module: StateModule, state: Record<string, unknown>, deliveries: readonly EventDelivery[], ctx: RegisterContext): void {
  for (const d of deliveries) {
    if (!d.userIds.includes(ctx.user.id) || !module.eventTypes.includes(d.event.type)) continue;
    module.apply(state, structuredClone(d.event), ctx);
  }
}

/** Runs fn; asserts stale state + its events == fresh state for this user. Returns the deliveries. */
export async function expectModuleConsistent(
  t: TestServer,
  module: StateModule,
  who: TestUser | FixtureName,
  fn: () => Promise<unknown>,
  caps: Partial<ClientCapabilities> = {},
): Promise<EventDelivery[]> {
  const ctx = await registerContext(t, who, caps);
  const state = await module.fetch(ctx);
  const deliveries = await t.captureEvents(fn);
  applyDeliveries(module, state, deliveries, ctx);
  expect(state).toEqual(await module.fetch(ctx));
  return deliveries;
}
