import type { Db } from '../../store/db.js';
import type { TxDb } from '../context.js';

/**
 * Facts about a channel's messages that the channel rules need but the
 * messages work owns. The messages resource replaces these when it lands
 * (as state/user-extras.ts does for users), so channels need not import it.
 */
export const channelTopicHooks = {
  /** Whether the channel has messages outside the empty topic (blocks topics_policy empty_topic_only). */
  hasNamedTopics: async (_db: Db | TxDb, _channelId: number): Promise<boolean> => false,
};
