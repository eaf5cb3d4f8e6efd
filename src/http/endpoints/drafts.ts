import { z } from 'zod';
import { fakeEmailDomain } from '../../config.js';
import { doCreateDrafts, doDeleteDraft, doEditDraft, draftsSyncEnabled } from '../../domain/actions/drafts.js';
import { transact } from '../../domain/context.js';
import { badRequest } from '../../domain/errors.js';
import { presentDraft, sortDrafts } from '../../presenters/draft.js';
import { draftsOfUser } from '../../store/drafts.js';
import { endpoint, type AuthedCtx } from '../endpoint.js';
import { p } from '../params.js';

/** Zulip's draft_endpoint decorator: runs before the parameters are read. */
const requireDraftsSync = (ctx: AuthedCtx): void => {
  if (!draftsSyncEnabled(ctx.userRow.settings)) throw badRequest('User has disabled synchronizing drafts.');
};

/** Zulip's DraftData: extra keys refused; content stripped and non-blank. */
const draftData = z.strictObject({
  type: z.enum(['', 'private', 'stream']),
  to: z.array(z.int()),
  topic: z.string(),
  content: z.string().trim().min(1),
  // Up to the end of year 9999, the largest time Zulip can store.
  timestamp: z.number().max(253402300799).nullable().optional(),
});

export const listDrafts = endpoint({
  method: 'GET',
  path: '/drafts',
  auth: 'user',
  guard: requireDraftsSync,
  params: {},
  handler: async (ctx) => {
    const drafts = sortDrafts((await draftsOfUser(ctx.app.db, ctx.user.id)).map(presentDraft));
    return { count: drafts.length, drafts };
  },
});

export const createDrafts = endpoint({
  method: 'POST',
  path: '/drafts',
  auth: 'user',
  guard: requireDraftsSync,
  params: { drafts: p.json(z.array(draftData)) },
  handler: async (ctx, { drafts }) => {
    const rows = await transact(ctx.app, (tx) => doCreateDrafts(tx, ctx.user, fakeEmailDomain(ctx.app.config), drafts));
    return { ids: rows.map((r) => r.id) };
  },
});

export const editDraft = endpoint({
  method: 'PATCH',
  path: '/drafts/:draft_id',
  auth: 'user',
  guard: requireDraftsSync,
  params: { draft_id: p.pathId(), draft: p.json(draftData) },
  handler: async (ctx, { draft_id, draft }) => {
    await transact(ctx.app, (tx) => doEditDraft(tx, ctx.user, fakeEmailDomain(ctx.app.config), draft_id, draft));
    return {};
  },
});

export const deleteDraft = endpoint({
  method: 'DELETE',
  path: '/drafts/:draft_id',
  auth: 'user',
  guard: requireDraftsSync,
  params: { draft_id: p.pathId() },
  handler: async (ctx, { draft_id }) => {
    await transact(ctx.app, (tx) => doDeleteDraft(tx, ctx.user, draft_id));
    return {};
  },
});
