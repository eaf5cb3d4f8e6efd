import type { PlaygroundRow } from '../store/playgrounds.js';

/** Zulip's RealmPlaygroundDict. */
export interface PlaygroundDict {
  readonly id: number;
  readonly name: string;
  readonly pygments_language: string;
  readonly url_template: string;
}

export const presentPlayground = (r: PlaygroundRow): PlaygroundDict => ({ id: r.id, name: r.name, pygments_language: r.pygments_language, url_template: r.url_template });
