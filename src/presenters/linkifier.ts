import type { LinkifierRow } from '../store/linkifiers.js';

/** Zulip's LinkifierDict. */
export interface LinkifierDict {
  readonly pattern: string;
  readonly url_template: string;
  readonly id: number;
}

export const presentLinkifier = (r: LinkifierRow): LinkifierDict => ({ pattern: r.pattern, url_template: r.url_template, id: r.id });
