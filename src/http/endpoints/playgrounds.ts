import { checkAddPlayground, doRemovePlayground } from '../../domain/actions/playgrounds.js';
import { badRequest } from '../../domain/errors.js';
import { MAX_PYGMENTS_LANGUAGE_LENGTH, VIEW_LANGUAGE } from '../../domain/rules/playground-validation.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';
import { requireAdmin } from './users.js';

/** Code playgrounds (Zulip's zerver/views/realm_playgrounds.py): organization administrators only. */

export const addPlayground = endpoint({
  method: 'POST',
  path: '/realm/playgrounds',
  auth: 'user',
  guard: requireAdmin,
  params: { name: p.str(), pygments_language: p.str(), url_template: p.str() },
  handler: async (ctx, v) => {
    // The view's check_pygments_language, before the model's full_clean.
    if (v.pygments_language.length > MAX_PYGMENTS_LANGUAGE_LENGTH) {
      throw badRequest(`pygments_language is too long (limit: ${MAX_PYGMENTS_LANGUAGE_LENGTH} characters)`);
    }
    if (!VIEW_LANGUAGE.test(v.pygments_language)) throw badRequest('Invalid characters in pygments language');
    const id = await checkAddPlayground(ctx.app, ctx.user, {
      name: v.name.trim(),
      pygments_language: v.pygments_language.trim(),
      url_template: v.url_template.trim(),
    });
    return { id };
  },
});

export const removePlayground = endpoint({
  method: 'DELETE',
  path: '/realm/playgrounds/:playground_id',
  auth: 'user',
  guard: requireAdmin,
  params: { playground_id: p.pathId() },
  handler: async (ctx, v) => {
    await doRemovePlayground(ctx.app, ctx.user, v.playground_id);
    return {};
  },
});
