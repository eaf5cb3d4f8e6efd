import type { ParleyEvent } from '../events/types.js';
import { presentSavedSnippet, type SavedSnippetObject } from '../domain/actions/saved-snippets.js';
import { snippetsOfUser } from '../store/saved-snippets.js';
import type { StateModule } from './types.js';

/** `saved_snippets` in /register, kept in step by saved_snippets events. */
export const savedSnippetsModule: StateModule = {
  fetchTypes: ['saved_snippets'],
  async fetch(ctx) {
    return { saved_snippets: (await snippetsOfUser(ctx.app.db, ctx.user.id)).map(presentSavedSnippet) };
  },
  eventTypes: ['saved_snippets'],
  apply(state: Record<string, unknown>, event: ParleyEvent) {
    const snippets = state.saved_snippets as SavedSnippetObject[] | undefined;
    if (!snippets) return;
    if (event.op === 'add') {
      snippets.push(structuredClone(event.saved_snippet as SavedSnippetObject));
      snippets.sort((a, b) => a.id - b.id);
    } else if (event.op === 'update') {
      const s = structuredClone(event.saved_snippet as SavedSnippetObject);
      const i = snippets.findIndex((x) => x.id === s.id);
      if (i >= 0) snippets[i] = s;
    } else if (event.op === 'remove') {
      const i = snippets.findIndex((x) => x.id === event.saved_snippet_id);
      if (i >= 0) snippets.splice(i, 1);
    }
  },
};
