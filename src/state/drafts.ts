import type { ParleyEvent } from '../events/types.js';
import { draftsSyncEnabled } from '../domain/actions/drafts.js';
import { presentDraft, sortDrafts, type DraftObject } from '../presenters/draft.js';
import { draftsOfUser } from '../store/drafts.js';
import type { StateModule } from './types.js';

/** `drafts` in /register: the user's drafts, or [] while synchronization is off. */
export const draftsModule: StateModule = {
  fetchTypes: ['drafts'],
  async fetch(ctx) {
    if (!draftsSyncEnabled(ctx.userRow.settings)) return { drafts: [] };
    return { drafts: sortDrafts((await draftsOfUser(ctx.app.db, ctx.user.id)).map(presentDraft)) };
  },
  eventTypes: ['drafts'],
  apply(state: Record<string, unknown>, event: ParleyEvent) {
    const drafts = state.drafts as DraftObject[] | undefined;
    if (!drafts) return;
    if (event.op === 'add') drafts.push(...structuredClone(event.drafts as DraftObject[]));
    else if (event.op === 'update') {
      const d = structuredClone(event.draft as DraftObject);
      const i = drafts.findIndex((x) => x.id === d.id);
      if (i >= 0) drafts[i] = d;
    } else if (event.op === 'remove') {
      const i = drafts.findIndex((x) => x.id === event.draft_id);
      if (i >= 0) drafts.splice(i, 1);
    }
    sortDrafts(drafts);
  },
};
