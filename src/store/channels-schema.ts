import type { Generated } from 'kysely';

/** Tables of the channels resource (migration 0200). Booleans are 0/1. */

/** A message's addressee, as in Zulip: type 2 is a channel (type_id = channel id). */
export interface RecipientTable {
  id: Generated<number>;
  realm_id: number;
  type: number;
  type_id: number;
}

export interface ChannelTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  /** lower(name): names are unique per realm, case-insensitively */
  name_lower: string;
  description: string;
  rendered_description: string;
  date_created: number;
  creator_id: number | null;
  invite_only: number;
  is_web_public: number;
  history_public_to_subscribers: number;
  /** null: the realm's setting; -1: forever */
  message_retention_days: number | null;
  /** inherit | allow_empty_topic | disable_empty_topic | empty_topic_only */
  topics_policy: string;
  folder_id: number | null;
  /** archived */
  deactivated: number;
  is_recently_active: number;
  first_message_id: number | null;
  recipient_id: number | null;
  can_add_subscribers_group_id: number;
  can_administer_channel_group_id: number;
  can_create_topic_group_id: number;
  can_delete_any_message_group_id: number;
  can_delete_own_message_group_id: number;
  can_move_messages_out_of_channel_group_id: number;
  can_move_messages_within_channel_group_id: number;
  can_remove_subscribers_group_id: number;
  can_resolve_topics_group_id: number;
  can_send_message_group_id: number;
  can_subscribe_group_id: number;
}

export interface SubscriptionTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  channel_id: number;
  recipient_id: number;
  /** 0 once unsubscribed; the row keeps the personal settings */
  active: number;
  color: string;
  is_muted: number;
  pin_to_top: number;
  /** null: inherit the user-level setting */
  desktop_notifications: number | null;
  audible_notifications: number | null;
  push_notifications: number | null;
  email_notifications: number | null;
  wildcard_mentions_notify: number | null;
}

export interface DefaultChannelTable {
  realm_id: number;
  channel_id: number;
}

export interface ChannelFolderTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  name_lower: string;
  description: string;
  rendered_description: string;
  creator_id: number | null;
  date_created: number;
  is_archived: number;
  order: number;
}

export interface UserTopicTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  channel_id: number;
  topic_name: string;
  topic_lower: string;
  visibility_policy: number;
  last_updated: number;
}

export interface RealmDomainTable {
  id: Generated<number>;
  realm_id: number;
  domain: string;
  allow_subdomains: number;
}

export interface ChannelTables {
  recipients: RecipientTable;
  channels: ChannelTable;
  subscriptions: SubscriptionTable;
  default_channels: DefaultChannelTable;
  channel_folders: ChannelFolderTable;
  user_topics: UserTopicTable;
  realm_domains: RealmDomainTable;
}
