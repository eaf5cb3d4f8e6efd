import type { AppCtx, Caller } from '../context.js';
import { FLAG_HAS_ALERT_WORD, FLAG_MENTION_ANY, FLAG_PRIVATE, FLAG_READ, FLAG_STARRED } from '../rules/message-flags.js';
import { badNarrow, CHANNEL_OPERATORS, type NarrowTerm } from '../rules/message-narrow.js';
import { parseSearch, type SearchQuery } from '../rules/search-text.js';
import { topicKey } from '../rules/topics.js';
import type { Condition, SearchSpec } from '../../store/message-search.js';
import { userById } from '../../store/users.js';
import { isStorableId } from '../../store/channels.js';
import type { UserRow } from '../../store/users.js';
import { channelByIdOrName, MessageViewer, usersByEmails } from './messages.js';
import { systemBotRows } from '../actions/system-bots.js';

/**
 * Turns a parsed narrow into the conditions of the message search, resolving
 * channels and users (Zulip's NarrowBuilder), and decides whether the query
 * may read a channel's history directly (Zulip's ok_to_include_history):
 * only for a non-negated channel term on a channel whose history the caller
 * may read, and never with an `is:` term. Otherwise the query is limited to
 * the caller's own user_messages rows, which is what keeps other users'
 * DMs and protected private-channel history out of every result.
 */
export interface ResolvedNarrow {
  readonly spec: SearchSpec;
  /** The (non-negated) search, for highlighting; null without one. */
  readonly search: SearchQuery | null;
  /** A channel term is present (first-unread then skips muted-channel exclusion). */
  readonly channelNarrow: boolean;
  /** The names of the channels the terms named (id -> name), read here: presenting the page needs no second read of them. */
  readonly channelNames: ReadonlyMap<number, string>;
}

const pyList = (ids: readonly number[]): string => `[${ids.join(', ')}]`;

async function userByOperand(app: AppCtx, caller: Caller, operand: string | number): Promise<UserRow | undefined> {
  const own = typeof operand === 'number' ? (isStorableId(operand) ? await userById(app.db, caller.realmId, operand) : undefined) : (await usersByEmails(app, caller, [operand])).get(operand);
  return own ?? systemBotByOperand(app, operand);
}

/**
 * Notification Bot and Welcome Bot live in the internal organization, yet
 * their messages reach everyone: as in Zulip, `sender:` and `dm:` accept them
 * (by email or id). Their rows are cached, so this costs no statement.
 */
async function systemBotByOperand(app: AppCtx, operand: string | number): Promise<UserRow | undefined> {
  const bots = await systemBotRows(app);
  return typeof operand === 'number' ? bots.find((b) => b.id === operand) : bots.find((b) => b.email_lower === operand.trim().toLowerCase());
}

export async function resolveNarrow(app: AppCtx, caller: Caller, terms: readonly NarrowTerm[], emptyTopicName: string): Promise<ResolvedNarrow> {
  const db = app.db;
  const v = new MessageViewer(db, caller);
  const conditions: Condition[] = [];
  const searches: string[] = [];
  const channelNames = new Map<number, string>();
  let includeHistory = false;
  let channelNarrow = false;
  let dmNarrow = false;
  let anyIs = false;
  const both = (): void => {
    if (channelNarrow && dmNarrow) throw badNarrow('No message can be both a channel message and direct message');
  };

  for (const t of terms) {
    const { operator, operand, negated } = t;
    if (CHANNEL_OPERATORS.has(operator)) {
      if (!negated) channelNarrow = true;
      both();
      const ch = await channelByIdOrName(db, caller.realmId, operand as string | number);
      if (!ch || ch.recipient_id === null) throw badNarrow(`unknown channel ${String(operand)}`);
      conditions.push({ kind: 'recipient', id: ch.recipient_id, negated });
      channelNames.set(ch.id, ch.name);
      if (!negated) includeHistory = await v.canReadHistory(ch);
      continue;
    }
    switch (operator) {
      case 'channels':
      case 'streams': {
        if (!negated) channelNarrow = true;
        both();
        if (operand !== 'public' && operand !== 'web-public') throw badNarrow(`unknown channels operand ${String(operand)}`);
        let q = db.selectFrom('channels').select('recipient_id').where('realm_id', '=', caller.realmId).where('invite_only', '=', 0);
        if (operand === 'web-public') q = q.where('is_web_public', '=', 1);
        const ids = (await q.execute()).map((r) => r.recipient_id).filter((id): id is number => id !== null);
        conditions.push({ kind: 'recipients', ids, negated });
        if (operand === 'public' && !negated && !v.isGuest) includeHistory = true;
        break;
      }
      case 'topic': {
        if (!negated) channelNarrow = true;
        both();
        const topic = operand === emptyTopicName ? '' : (operand as string);
        conditions.push({ kind: 'topic', key: topicKey(topic), negated });
        break;
      }
      case 'sender': {
        const u = await userByOperand(app, caller, operand as string | number);
        if (!u) throw badNarrow(`unknown user ${String(operand)}`);
        conditions.push({ kind: 'sender', id: u.id, negated });
        break;
      }
      case 'dm':
      case 'pm-with': {
        if (!negated) dmNarrow = true;
        both();
        let ids: number[];
        const shown = typeof operand === 'string' ? operand : pyList(operand as number[]);
        if (typeof operand === 'string') {
          const emails = operand.split(',');
          const found = await usersByEmails(app, caller, emails);
          for (const e of emails) {
            const bot = found.has(e) ? undefined : await systemBotByOperand(app, e);
            if (bot) found.set(e, bot);
          }
          if (emails.some((e) => !found.has(e))) throw badNarrow(`unknown user in ${shown}`);
          ids = emails.map((e) => found.get(e)!.id);
        } else {
          const list = operand as number[];
          const rows = list.length && list.every(isStorableId) ? await db.selectFrom('users').select('id').where('realm_id', '=', caller.realmId).where('id', 'in', list).execute() : [];
          const found = new Set(rows.map((r) => r.id));
          for (const id of list) if (!found.has(id) && (await systemBotByOperand(app, id))) found.add(id);
          if (list.length === 0 || list.some((id) => !found.has(id))) throw badNarrow(`unknown user in ${shown}`);
          ids = list;
        }
        const key = [...new Set([...ids, caller.id])].sort((a, b) => a - b).join(',');
        conditions.push({ kind: 'dm', key, negated });
        break;
      }
      case 'dm-including':
      case 'group-pm-with': {
        if (!negated) dmNarrow = true;
        both();
        const u = await userByOperand(app, caller, operand as string | number);
        if (!u) throw badNarrow(`unknown user ${String(operand)}`);
        if (operator === 'dm-including' && u.id === caller.id) conditions.push({ kind: 'flag_set', mask: FLAG_PRIVATE, negated });
        else conditions.push({ kind: 'dm_including', userId: u.id, groupsOnly: operator === 'group-pm-with', negated });
        break;
      }
      case 'is': {
        anyIs = true;
        switch (operand) {
          case 'dm':
          case 'private':
            if (!negated) dmNarrow = true;
            both();
            conditions.push({ kind: 'flag_set', mask: FLAG_PRIVATE, negated });
            break;
          case 'starred':
            conditions.push({ kind: 'flag_set', mask: FLAG_STARRED, negated });
            break;
          case 'unread':
            conditions.push({ kind: 'flag_clear', mask: FLAG_READ, negated });
            break;
          case 'mentioned':
            conditions.push({ kind: 'flag_set', mask: FLAG_MENTION_ANY, negated });
            break;
          case 'alerted':
            conditions.push({ kind: 'flag_set', mask: FLAG_HAS_ALERT_WORD, negated });
            break;
          case 'resolved':
            conditions.push({ kind: 'resolved', negated });
            break;
          default:
            throw badNarrow(`unknown 'is' operand ${String(operand)}`);
        }
        break;
      }
      case 'in':
        if (operand === 'home') conditions.push({ kind: 'muted_excluded', userId: caller.id, channels: true });
        else if (operand !== 'all') throw badNarrow(`unknown 'in' operand ${String(operand)}`);
        break;
      case 'has':
        if (operand === 'link') conditions.push({ kind: 'has', column: 'has_link', negated });
        else if (operand === 'image') conditions.push({ kind: 'has', column: 'has_image', negated });
        else if (operand === 'attachment') conditions.push({ kind: 'has', column: 'has_attachment', negated });
        else if (operand === 'reaction') conditions.push({ kind: 'has_reaction', negated });
        else throw badNarrow(`unknown 'has' operand ${String(operand)}`);
        break;
      case 'near':
        break;
      case 'id':
        if (!/^\d+$/.test(String(operand))) throw badNarrow('Invalid message ID');
        conditions.push({ kind: 'id', id: Number(operand), negated });
        break;
      case 'search':
        // A negated search removes its matches; the others are read as one query.
        if (negated) conditions.push({ kind: 'search', query: parseSearch(operand as string), negated: true });
        else searches.push(operand as string);
        break;
      default:
        throw badNarrow(`unknown operator ${operator}`);
    }
  }
  let search: SearchQuery | null = null;
  if (searches.length) {
    search = parseSearch(searches.join(' '));
    conditions.push({ kind: 'search', query: search, negated: false });
  }
  return {
    spec: { userId: caller.id, realmId: caller.realmId, includeHistory: includeHistory && !anyIs, conditions },
    search,
    channelNarrow,
    channelNames,
  };
}
