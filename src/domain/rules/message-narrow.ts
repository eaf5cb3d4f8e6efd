import { z } from 'zod';
import { badRequest, JsonableError } from '../errors.js';

/**
 * The `narrow` parameter of GET /messages and POST /messages/flags/narrow:
 * a list of terms in the object form ({operator, operand, negated}) or the
 * legacy pair form ([operator, operand]). Parsing follows Zulip's
 * NarrowParameter; resolving operands against the database happens in
 * domain/access/messages.ts.
 */
export type NarrowOperand = string | number | number[];

export interface NarrowTerm {
  readonly operator: string;
  readonly operand: NarrowOperand;
  readonly negated: boolean;
}

/** Zulip's LARGER_THAN_MAX_MESSAGE_ID: the anchor "newest" (and "first_unread" with nothing unread). */
export const LARGER_THAN_MAX_MESSAGE_ID = 10000000000000000;
export const MAX_MESSAGES_PER_FETCH = 5000;

export const CHANNEL_OPERATORS = new Set(['channel', 'stream']);
const ID_OPERATORS = new Set(['channel', 'stream', 'id', 'sender', 'group-pm-with', 'dm-including']);
const IDS_OPERATORS = new Set(['dm', 'pm-with']);
/** Underscore spellings Zulip still accepts. */
const ALIASES: Record<string, string> = { pm_with: 'pm-with', group_pm_with: 'group-pm-with' };

/** Zulip's BadNarrowOperatorError: BAD_NARROW with the description as `desc`. */
export const badNarrow = (desc: string): JsonableError =>
  new JsonableError(`Invalid narrow operator: ${desc}`, { code: 'BAD_NARROW', data: { desc } });

const valueError = (i: number, msg: string): JsonableError => badRequest(`Invalid narrow[${i}]: Value error, ${msg}`);

function checkOperand(operator: string, operand: unknown): NarrowOperand {
  if (ID_OPERATORS.has(operator)) {
    if (typeof operand === 'string' || (typeof operand === 'number' && Number.isInteger(operand))) return operand;
    throw badRequest('operand is not a string or an integer');
  }
  if (IDS_OPERATORS.has(operator)) {
    if (typeof operand === 'string') return operand;
    if (Array.isArray(operand)) {
      operand.forEach((v, i) => {
        if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`operand[${i}] is not an integer`);
      });
      return operand as number[];
    }
    throw badRequest('operand is not a string or integer list');
  }
  if (typeof operand !== 'string') throw badRequest('operand is not a string');
  if (operator === 'search' && operand.trim() === '') throw badRequest('operand cannot be blank');
  return operand;
}

/** Parses the decoded JSON value of `narrow` (null and [] mean no narrow). */
export function parseNarrow(value: unknown, name = 'narrow'): NarrowTerm[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw badRequest(`${name} is not a list`);
  return value.map((elem, i): NarrowTerm => {
    let operator: unknown;
    let operand: unknown;
    let negated: unknown = false;
    if (Array.isArray(elem)) {
      if (elem.length !== 2 || elem.some((x) => typeof x !== 'string')) throw valueError(i, 'element is not a string pair');
      [operator, operand] = elem;
    } else if (elem !== null && typeof elem === 'object') {
      const o = elem as Record<string, unknown>;
      if (o.operand === undefined || o.operand === null) throw valueError(i, 'operand is missing');
      if (o.operator === undefined || o.operator === null) throw valueError(i, 'operator is missing');
      ({ operator, operand } = o);
      if (o.negated !== undefined && o.negated !== null) negated = o.negated;
    } else {
      throw valueError(i, 'dict or list required');
    }
    if (typeof operator !== 'string') throw badRequest('operator is not a string');
    if (typeof negated !== 'boolean') throw badRequest('negated is not a boolean');
    const op = ALIASES[operator] ?? operator;
    return { operator: op, operand: checkOperand(op, operand), negated };
  });
}

/** The declared wire type: any JSON value, checked by parseNarrow. */
export const narrowSchema = z.unknown();

export type Anchor = number | 'first_unread';

/**
 * Zulip's parse_anchor_value: "newest", "oldest", "first_unread" or an
 * integer (negative reads as 0, beyond the maximum as the maximum).
 */
export function parseAnchor(raw: string | undefined, useFirstUnread: boolean): Anchor {
  if (useFirstUnread) return 'first_unread';
  if (raw === undefined) throw badRequest("Missing 'anchor' argument.");
  if (raw === 'oldest') return 0;
  if (raw === 'newest') return LARGER_THAN_MAX_MESSAGE_ID;
  if (raw === 'first_unread') return 'first_unread';
  const m = /^\s*([+-]?)(\d+)\s*$/.exec(raw);
  if (!m) throw badRequest('Invalid anchor');
  if (m[1] === '-') return 0;
  const digits = m[2]!.replace(/^0+(?=\d)/, '');
  if (digits.length > 17 || Number(digits) > LARGER_THAN_MAX_MESSAGE_ID) return LARGER_THAN_MAX_MESSAGE_ID;
  return Number(digits);
}
