import type { Generated } from 'kysely';

/** Table of issue 16 (migration 1001): a code playground (Zulip's RealmPlayground). */
export interface RealmPlaygroundTable {
  id: Generated<number>;
  realm_id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}

export interface PlaygroundTables {
  realm_playgrounds: RealmPlaygroundTable;
}
