import type { Generated } from 'kysely';

/** Tables of issue 18, joining an organization (migration 0900). */

/**
 * An invitation (Zulip's PreregistrationUser made by an invite, and
 * MultiuseInvite): email set for an emailed one, null for a reusable link.
 * The key is stored hashed; status 0 pending, 1 used, 2 revoked.
 */
export interface InviteTable {
  id: Generated<number>;
  realm_id: number;
  referrer_id: number;
  email: string | null;
  is_multiuse: number;
  invited_as: number;
  stream_ids: string;
  group_ids: string;
  include_realm_default_subscriptions: number;
  notify_referrer_on_join: number;
  key_hash: string;
  /** Reusable links only: the key itself, so administrators can copy the link again (GET /invites link_url). */
  link_key: string | null;
  created_at: number;
  /** null: never expires */
  expires_at: number | null;
  status: number;
}

/**
 * A confirmation link sent by mail: 'signup' (an address confirmed for
 * sign-up, optionally through an invitation) or 'reset' (password reset).
 */
export interface ConfirmationTable {
  id: Generated<number>;
  realm_id: number;
  kind: string;
  email: string;
  user_id: number | null;
  invite_id: number | null;
  key_hash: string;
  created_at: number;
  expires_at: number;
  used: number;
}

export interface JoinTables {
  invites: InviteTable;
  confirmations: ConfirmationTable;
}
