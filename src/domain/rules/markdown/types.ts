// Public and internal types of the Zulip-flavoured Markdown renderer.

export interface MentionUser {
  id: number;
  fullName: string;
  /** Deactivated users still resolve, but render as silent mentions (no flag). */
  isActive?: boolean;
  /** The user's bot type (null for humans); the renderer ignores it, senders read it back. */
  botType?: number | null;
}

export interface MentionGroup {
  id: number;
  /** The name shown in the mention (system groups: their display name). */
  name: string;
  /** Deactivated groups render silent. */
  deactivated?: boolean;
  /** System groups ("role:administrators") can only be mentioned silently. */
  isSystemGroup?: boolean;
}

export interface ChannelRef {
  id: number;
  name: string;
}

export interface CustomEmoji {
  id: string;
  name: string;
  sourceUrl: string;
  stillUrl?: string | null;
}

export interface Linkifier {
  id: number;
  /** RE2/Python syntax with named groups, e.g. "#(?P<id>[0-9]+)". */
  pattern: string;
  /** RFC 6570 URL template, e.g. "https://tracker.example/{id}". */
  urlTemplate: string;
}

/**
 * What the renderer may look up. Everything is synchronous: the caller preloads the
 * realm's data (as Zulip's MentionData does) before rendering.
 */
export interface MarkdownContext {
  /** e.g. "http://127.0.0.1:9991" (no trailing slash); links into it become relative. */
  realmUrl: string;
  sender?: { id: number; translateEmoticons: boolean };
  users: {
    byId(id: number): MentionUser | undefined;
    /** Case-insensitive, over the users the sender can access. */
    byName(name: string): MentionUser[];
  };
  /** Case-insensitive lookup by group name. */
  groups: { byName(name: string): MentionGroup | undefined };
  /** byName is exact and case-sensitive, over channels the sender can access. */
  channels: {
    byName(name: string): ChannelRef | undefined;
    byId(id: number): ChannelRef | undefined;
  };
  /** Active custom emoji of the realm. */
  customEmoji: { byName(name: string): CustomEmoji | undefined };
  linkifiers: readonly Linkifier[];
  /**
   * Informational only: the renderer always reports wildcard mentions in RenderResult and
   * never refuses them; the send path decides (STREAM_WILDCARD_MENTION_NOT_ALLOWED).
   */
  canUseWildcardMentions?: boolean;
  /** Realm's default_code_block_language, used for fences without a language. */
  defaultCodeBlockLanguage?: string | null;
  /** Realm's display name for the empty topic (default "general chat"). */
  emptyTopicName?: string;
  /** Latest message id in a topic visible to the sender, for "/with/<id>" topic links. */
  latestTopicMessageId?(channelId: number, topic: string): number | undefined;
  /** Realm's inline_image_preview (Zulip's default is on); previews are off when unset. */
  inlineImagePreview?: boolean;
  /**
   * Issue 15: facts about an upload of this realm, by path id, for the inline
   * image of a /user_uploads/ link (thumbnail, "pending" placeholder, or none).
   */
  uploadedImage?(pathId: string): UploadedImage | undefined;
  /** Camo-style proxy for external preview images; without it the URL itself is used. */
  imageProxyUrl?(url: string): string;
}

export interface UploadedImage {
  readonly contentType: string;
  readonly width: number;
  readonly height: number;
  readonly frames: number;
  /** 'pending': placeholder until the thumbnail exists; 'done': thumbnail; 'none': no preview (not an image, or refused). */
  readonly state: 'pending' | 'done' | 'none';
}

export interface RenderResult {
  html: string;
  /** Users mentioned non-silently outside quotes (active users only). */
  mentionedUserIds: Set<number>;
  /** Groups mentioned non-silently outside quotes (caller expands to members). */
  mentionedGroupIds: Set<number>;
  streamWildcardMentioned: boolean;
  topicWildcardMentioned: boolean;
  /** hrefs of the links in the message, without duplicates (order not significant). */
  links: string[];
  isMeMessage: boolean;
  /** Mentioned outgoing-webhook bots (set by renderMessageContent, not by the renderer). */
  mentionedServiceBotIds?: number[];
}

/** Per-render mutable state shared by the block and inline passes. */
export interface RenderState {
  ctx: MarkdownContext;
  result: RenderResult;
  linkSet: Set<string>;
  /** Depth of blockquotes we are inside: mentions there are rendered silent. */
  quoteDepth: number;
  /** Links of the block being rendered that may get inline previews (null: not collecting). */
  previewLinks: { href: string; label?: string }[] | null;
}
