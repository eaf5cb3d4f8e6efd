// Shapes of the Zulip API objects the app reads (only the fields it uses).

export interface Reaction {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
}

export interface DmRecipient {
  id: number;
  email: string;
  full_name: string;
}

export interface Message {
  id: number;
  type: 'stream' | 'private';
  stream_id?: number;
  subject: string;
  content: string;
  timestamp: number;
  sender_id: number;
  sender_full_name: string;
  sender_email: string;
  avatar_url: string | null;
  display_recipient: string | DmRecipient[];
  reactions: Reaction[];
  flags: string[];
  last_edit_timestamp?: number;
  last_moved_timestamp?: number;
  is_me_message?: boolean;
}

export interface User {
  user_id: number;
  email: string;
  full_name: string;
  avatar_url?: string | null;
  is_active?: boolean;
  is_bot: boolean;
  is_admin: boolean;
  is_owner?: boolean;
  is_guest: boolean;
  role: number;
  timezone?: string;
}

export interface Subscription {
  stream_id: number;
  name: string;
  description: string;
  color: string;
  invite_only: boolean;
  is_muted: boolean;
  pin_to_top: boolean;
  folder_id?: number | null;
  desktop_notifications: boolean | null;
  audible_notifications: boolean | null;
}

export interface ChannelFolder {
  id: number;
  name: string;
  order?: number;
  is_archived: boolean;
}

export interface UserTopic {
  stream_id: number;
  topic_name: string;
  visibility_policy: number;
  last_updated: number;
}

export interface UserStatus {
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
  away?: boolean;
}

export interface Presence {
  active_timestamp?: number;
  idle_timestamp?: number;
}

export interface Topic {
  name: string;
  max_id: number;
}

/** One operator of a narrow, in the object form GET /messages accepts. */
export interface NarrowTerm {
  operator: string;
  operand: string | number | number[];
  negated?: boolean;
}

export type UserSettings = Record<string, unknown> & {
  color_scheme: number;
  twenty_four_hour_time: boolean;
  enable_desktop_notifications: boolean;
  enable_stream_desktop_notifications: boolean;
  enable_sounds: boolean;
  pm_content_in_desktop_notifications: boolean;
  display_emoji_reaction_users: boolean;
  web_home_view: string;
  enable_drafts_synchronization: boolean;
  send_stream_typing_notifications: boolean;
  send_private_typing_notifications: boolean;
  receives_typing_notifications?: boolean;
};

export interface RealmEmoji {
  id: string;
  name: string;
  source_url: string;
  deactivated: boolean;
}
