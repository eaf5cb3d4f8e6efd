import { z } from 'zod';
import { doAddAlertWords, doRemoveAlertWords } from '../../domain/actions/alert-words.js';
import { transact } from '../../domain/context.js';
import { MAX_ALERT_WORD_LENGTH } from '../../domain/rules/limits.js';
import { alertWordsOfUser } from '../../store/alert-words.js';
import { endpoint } from '../endpoint.js';
import { p } from '../params.js';

/** GET/POST/DELETE /users/me/alert_words. Words are stripped; empty ones are dropped. */

const clean = (words: readonly string[]): string[] => words.map((w) => w.trim()).filter((w) => w !== '');

export const listAlertWords = endpoint({
  method: 'GET',
  path: '/users/me/alert_words',
  auth: 'user',
  params: {},
  handler: async (ctx) => ({ alert_words: await alertWordsOfUser(ctx.app.db, ctx.user.id) }),
});

export const addAlertWords = endpoint({
  method: 'POST',
  path: '/users/me/alert_words',
  auth: 'user',
  params: { alert_words: p.json(z.array(z.string().max(MAX_ALERT_WORD_LENGTH))) },
  handler: async (ctx, { alert_words }) => {
    const list = await transact(ctx.app, (tx) => doAddAlertWords(tx, ctx.user.realmId, ctx.user.id, clean(alert_words)));
    return { alert_words: list };
  },
});

export const removeAlertWords = endpoint({
  method: 'DELETE',
  path: '/users/me/alert_words',
  auth: 'user',
  params: { alert_words: p.json(z.array(z.string())) },
  handler: async (ctx, { alert_words }) => {
    const list = await transact(ctx.app, (tx) => doRemoveAlertWords(tx, ctx.user.realmId, ctx.user.id, alert_words));
    return { alert_words: list };
  },
});
