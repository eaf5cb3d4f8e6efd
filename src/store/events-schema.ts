import type { Generated } from 'kysely';

/** Tables of issue 3 (migration 0100). */

export interface AlertWordTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  word: string;
}

/** A setting the user changed themselves (an admin's bulk change does not count). */
export interface UserSettingSelfEditTable {
  user_id: number;
  setting: string;
}

export interface EmailChangeRequestTable {
  id: Generated<number>;
  realm_id: number;
  user_id: number;
  old_email: string;
  new_email: string;
  key_hash: string;
  created_at: number;
  status: number;
}

export interface EventsTables {
  alert_words: AlertWordTable;
  user_setting_self_edits: UserSettingSelfEditTable;
  email_change_requests: EmailChangeRequestTable;
}
