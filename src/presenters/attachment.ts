import type { AttachmentRow } from '../store/attachments.js';

/**
 * Zulip's Attachment.to_dict: times are JavaScript timestamps (milliseconds),
 * messages are those linking the file, oldest first.
 */
export interface AttachmentObject {
  readonly id: number;
  readonly name: string;
  readonly path_id: string;
  readonly size: number;
  readonly create_time: number;
  readonly messages: readonly { readonly id: number; readonly date_sent: number }[];
}

export function presentAttachment(row: AttachmentRow, messages: readonly { id: number; date_sent: number }[]): AttachmentObject {
  return {
    id: row.id,
    name: row.file_name,
    path_id: row.path_id,
    size: Number(row.size),
    create_time: Number(row.create_time) * 1000,
    messages: messages.map((m) => ({ id: m.id, date_sent: m.date_sent * 1000 })),
  };
}
