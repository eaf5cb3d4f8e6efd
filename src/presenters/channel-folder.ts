import type { ChannelFolderRow } from '../store/channel-extras.js';

/** A channel folder as GET /channel_folders, /register and channel_folder events present it. */
export function presentChannelFolder(f: ChannelFolderRow): Record<string, unknown> {
  return {
    id: f.id,
    name: f.name,
    description: f.description,
    rendered_description: f.rendered_description,
    creator_id: f.creator_id,
    date_created: f.date_created,
    is_archived: f.is_archived === 1,
    order: f.order,
  };
}
