import type { Kysely, Migration } from 'kysely';
import { withId } from './helpers.js';

/**
 * Issue 15, files: uploaded files (Zulip's Attachment with its ImageAttachment
 * facts folded in), the messages that link each one, and the secret that
 * signs temporary download URLs (shared by every process on the database).
 */
export const m1200Attachments: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await withId(db, db.schema.createTable('attachments'))
      .addColumn('realm_id', 'integer', (c) => c.notNull().references('realms.id'))
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id'))
      // "<realm_id>/<2 hex>/<random>/<sanitized name>", the URL path after /user_uploads/.
      .addColumn('path_id', 'text', (c) => c.notNull().unique())
      .addColumn('file_name', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('create_time', 'bigint', (c) => c.notNull())
      .addColumn('is_realm_public', 'integer', (c) => c.notNull().defaultTo(0))
      // Images only: decoded dimensions, frames, and where thumbnailing stands
      // (0 not an image, 1 pending, 2 done, 3 failed / refused).
      .addColumn('image_width', 'integer')
      .addColumn('image_height', 'integer')
      .addColumn('image_frames', 'integer')
      .addColumn('thumbnail_state', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('attachments_owner').on('attachments').columns(['owner_id', 'id']).execute();
    await db.schema.createIndex('attachments_realm').on('attachments').columns(['realm_id', 'create_time']).execute();

    await db.schema
      .createTable('attachment_messages')
      .addColumn('attachment_id', 'integer', (c) => c.notNull().references('attachments.id'))
      .addColumn('message_id', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('attachment_messages_pk', ['attachment_id', 'message_id'])
      .execute();
    await db.schema.createIndex('attachment_messages_message').on('attachment_messages').columns(['message_id']).execute();

    await db.schema
      .createTable('file_secrets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
  },
};
