import type { Migration } from 'kysely';
import { m0001Foundation } from './0001-foundation.js';

/**
 * Forward-only migrations, applied in name order at start. Each resource adds
 * its own file; number ranges keep parallel work from colliding:
 * 0001-0099 foundation/users, 0100 events, 0200 channels, 0300 messages,
 * 0400 groups/drafts/views/snippets, 0500 profiles, 0600 client compat.
 */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001Foundation,
};
