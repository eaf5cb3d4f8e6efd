import type { Db } from '../../store/db.js';
import type { TxDb } from '../context.js';
import { RealmCache } from '../realm-cache.js';
import type { Linkifier } from '../rules/markdown/index.js';
import { linkifierRows, type LinkifierRow } from '../../store/linkifiers.js';

type AnyDb = Db | TxDb;

/**
 * Linkifier lookups for other resources (the Markdown renderer and a
 * message's topic_links), cached per realm: one query after each change.
 */
export const linkifierCache = new RealmCache<readonly LinkifierRow[]>(linkifierRows);

/** The realm's linkifiers in processing order, as stored. */
export function realmLinkifierRows(db: AnyDb, realmId: number): Promise<readonly LinkifierRow[]> {
  return linkifierCache.get(db, realmId);
}

/** For MarkdownContext.linkifiers and topicLinks(topic, linkifiers). */
export async function linkifiersForRealm(db: AnyDb, realmId: number): Promise<Linkifier[]> {
  return (await realmLinkifierRows(db, realmId)).map((r) => ({ id: r.id, pattern: r.pattern, urlTemplate: r.url_template }));
}
