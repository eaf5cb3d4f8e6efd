import { z } from 'zod';
import {
  doCreateSavedSnippet,
  doDeleteSavedSnippet,
  doEditSavedSnippet,
  MAX_SAVED_SNIPPET_TITLE_LENGTH,
  presentSavedSnippet,
} from '../../domain/actions/saved-snippets.js';
import { transact } from '../../domain/context.js';
import { MAX_MESSAGE_LENGTH } from '../../domain/rules/limits.js';
import { snippetsOfUser } from '../../store/saved-snippets.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

// Both are stripped first. api.md gives "Title cannot be empty." for an empty
// title (Zulip's current code says "title cannot be blank"); content keeps
// Zulip's "content cannot be blank".
const title = z
  .string()
  .trim()
  .max(MAX_SAVED_SNIPPET_TITLE_LENGTH)
  .refine((s) => s.length > 0, { message: 'Title cannot be empty.' });
const content = z.string().trim().min(1).max(MAX_MESSAGE_LENGTH);

export const listSavedSnippets = endpoint({
  method: 'GET',
  path: '/saved_snippets',
  auth: 'user',
  params: {},
  handler: async (ctx) => ({ saved_snippets: (await snippetsOfUser(ctx.app.db, ctx.user.id)).map(presentSavedSnippet) }),
});

export const createSavedSnippet = endpoint({
  method: 'POST',
  path: '/saved_snippets',
  auth: 'user',
  // Zulip's signature order: content is checked before title.
  params: { content: p.str(content), title: p.str(title) },
  handler: async (ctx, params) => {
    const row = await transact(ctx.app, (tx) => doCreateSavedSnippet(tx, ctx.user, params.title, params.content));
    return { saved_snippet_id: row.id };
  },
});

export const editSavedSnippet = endpoint({
  method: 'PATCH',
  path: '/saved_snippets/:saved_snippet_id',
  auth: 'user',
  params: { content: p.str(content).optional(), saved_snippet_id: p.pathId(), title: p.str(title).optional() },
  handler: async (ctx, params) => {
    // Nothing to change: succeed without looking the snippet up or sending an event (as Zulip does).
    if (params.title === undefined && params.content === undefined) return {};
    await transact(ctx.app, (tx) => doEditSavedSnippet(tx, ctx.user, params.saved_snippet_id, params.title, params.content));
    return {};
  },
});

export const deleteSavedSnippet = endpoint({
  method: 'DELETE',
  path: '/saved_snippets/:saved_snippet_id',
  auth: 'user',
  params: { saved_snippet_id: p.pathId() },
  handler: async (ctx, { saved_snippet_id }) => {
    await transact(ctx.app, (tx) => doDeleteSavedSnippet(tx, ctx.user, saved_snippet_id));
    return {};
  },
});
