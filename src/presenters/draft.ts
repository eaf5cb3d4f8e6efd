import type { DraftRow } from '../store/drafts.js';

/** Zulip's Draft.to_dict. */
export interface DraftObject {
  id: number;
  type: string;
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

export function presentDraft(row: DraftRow): DraftObject {
  const to = row.type === 'stream' ? [row.stream_id!] : row.type === 'private' ? (JSON.parse(row.to_user_ids) as number[]) : [];
  return { id: row.id, type: row.type, to, topic: row.topic, content: row.content, timestamp: Math.floor(row.last_edit_time) };
}

/**
 * Drafts in the order GET /drafts and /register give them: oldest edit first.
 * Clients see whole seconds, so ties within a second go by id (the same order
 * applying events produces).
 */
export function sortDrafts<T extends { id: number; timestamp: number }>(drafts: T[]): T[] {
  return drafts.sort((a, b) => a.timestamp - b.timestamp || a.id - b.id);
}
