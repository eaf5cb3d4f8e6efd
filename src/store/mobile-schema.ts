import type { Generated } from 'kysely';

/** Tables of issue 18 (migration 0800): muted users, client devices, push tokens. Times are unix seconds. */

/** Zulip's MutedUser: user_id muted muted_user_id at date_muted. */
export interface MutedUserTable {
  user_id: number;
  muted_user_id: number;
  date_muted: number;
}

/** Zulip's Device (register_client_device): one row per installed client of a user. */
export interface ClientDeviceTable {
  id: Generated<number>;
  user_id: number;
  created_at: number;
}

/** Zulip's PushDeviceToken (legacy registration): kind 1 APNs, 2 FCM. */
export interface PushDeviceTokenTable {
  id: Generated<number>;
  user_id: number;
  kind: number;
  token: string;
  ios_app_id: string | null;
  last_updated: number;
}

export interface MobileTables {
  push_device_tokens: PushDeviceTokenTable;
  muted_users: MutedUserTable;
  client_devices: ClientDeviceTable;
}
