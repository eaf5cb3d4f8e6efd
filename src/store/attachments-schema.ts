import type { Generated } from 'kysely';

/** Issue 15: uploaded files and the messages linking them (migration 1200). */
export interface AttachmentTable {
  id: Generated<number>;
  realm_id: number;
  owner_id: number;
  path_id: string;
  file_name: string;
  size: number;
  content_type: string;
  /** Seconds since the epoch. */
  create_time: number;
  is_realm_public: number;
  image_width: number | null;
  image_height: number | null;
  image_frames: number | null;
  thumbnail_state: number;
}

export interface AttachmentMessageTable {
  attachment_id: number;
  message_id: number;
}

export interface FileSecretTable {
  name: string;
  value: string;
}

export interface AttachmentTables {
  attachments: AttachmentTable;
  attachment_messages: AttachmentMessageTable;
  file_secrets: FileSecretTable;
}
